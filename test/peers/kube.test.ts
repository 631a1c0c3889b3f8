/**
 * Proves the test control plane is a real one: discovery, RBAC with
 * service-account tokens, CRD schema validation, and a teardown that leaves
 * nothing behind.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { isProcessAlive, repoRoot } from './child-processes.ts';
import { kubeRequest, kubeRequestOk, startKubeControlPlane, type KubeCredentials } from './kube.ts';
import { kubeForTests, uniqueNamespace, type KubeForTests } from './peers-for-tests.ts';

let kube: KubeForTests;
let admin: KubeCredentials;

before(async () => {
  kube = await kubeForTests();
  admin = kube.admin;
});
after(async () => {
  await kube?.stop();
});

describe('the test kube-apiserver', () => {
  test('serves discovery and reports the pinned Kubernetes release', async () => {
    const groups = await kubeRequestOk<{ groups: { name: string }[] }>(admin, 'GET', '/apis');
    const names = groups.groups.map((group) => group.name);
    for (const expected of [
      'apps',
      'rbac.authorization.k8s.io',
      'coordination.k8s.io',
      'gateway.networking.k8s.io',
      'acid.zalan.do',
    ]) {
      assert.ok(names.includes(expected), `discovery lacks ${expected}: ${names.join(', ')}`);
    }
    const pinned = /^\s*k8s\.io\/kubernetes (v\S+)/m.exec(
      readFileSync(join(repoRoot, 'tools/kube/go.mod'), 'utf8'),
    )?.[1];
    const version = await kubeRequestOk<{ gitVersion: string }>(admin, 'GET', '/version');
    assert.equal(version.gitVersion, pinned);
  });

  test('a ServiceAccount token is refused listing Secrets (403) until a RoleBinding allows it', async () => {
    const namespace = await uniqueNamespace(admin, 'rbac');
    await kubeRequestOk(admin, 'POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, {
      body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'restricted' } },
    });
    const tokenRequest = await kubeRequestOk<{ status: { token: string } }>(
      admin,
      'POST',
      `/api/v1/namespaces/${namespace}/serviceaccounts/restricted/token`,
      {
        body: {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: { expirationSeconds: 600 },
        },
      },
    );
    const token = tokenRequest.status.token;

    const whoami = await kubeRequestOk<{ status: { userInfo: { username: string } } }>(
      { ...admin, cert: undefined, key: undefined },
      'POST',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      { token, body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } },
    );
    assert.equal(whoami.status.userInfo.username, `system:serviceaccount:${namespace}:restricted`);

    const refused = await kubeRequest(admin, 'GET', `/api/v1/namespaces/${namespace}/secrets`, { token });
    assert.equal(refused.status, 403, refused.text);

    await kubeRequestOk(admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles`, {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'read-secrets' },
        rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['list'] }],
      },
    });
    await kubeRequestOk(
      admin,
      'POST',
      `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`,
      {
        body: {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: { name: 'read-secrets' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read-secrets' },
          subjects: [{ kind: 'ServiceAccount', name: 'restricted', namespace }],
        },
      },
    );
    // The RBAC authorizer reads bindings from an informer cache, so the grant
    // becomes visible shortly after the write, not at once.
    let status = 0;
    for (let attempt = 0; attempt < 50 && status !== 200; attempt++) {
      status = (await kubeRequest(admin, 'GET', `/api/v1/namespaces/${namespace}/secrets`, { token })).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(status, 200, 'the RoleBinding did not grant listing Secrets');
    const stillRefused = await kubeRequest(admin, 'GET', `/api/v1/namespaces/${namespace}/configmaps`, {
      token,
    });
    assert.equal(stillRefused.status, 403);
  });

  test('the Gateway API CRDs reject an invalid HTTPRoute with 422 and accept a valid one', async () => {
    const namespace = await uniqueNamespace(admin, 'crds');
    const route = (name: string, pathValue: string): object => ({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name },
      spec: {
        parentRefs: [{ name: 'public' }],
        hostnames: ['terdut.example.com'],
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: pathValue } }],
            backendRefs: [{ name: 'terdut', port: 8080 }],
          },
        ],
      },
    });
    const path = `/apis/gateway.networking.k8s.io/v1/namespaces/${namespace}/httproutes`;
    const valid = await kubeRequest(admin, 'POST', path, { body: route('valid', '/') });
    assert.equal(valid.status, 201, valid.text);
    // Gateway API requires paths to start with "/" (schema pattern + CEL rule).
    const invalid = await kubeRequest(admin, 'POST', path, { body: route('invalid', 'no-leading-slash') });
    assert.equal(invalid.status, 422, invalid.text);
    assert.match(invalid.text, /spec\.rules\[0\]\.matches\[0\]\.path/);
  });

  test("the postgres-operator CRD rejects a postgresql without the operator's required fields", async () => {
    const namespace = await uniqueNamespace(admin, 'crds');
    const path = `/apis/acid.zalan.do/v1/namespaces/${namespace}/postgresqls`;
    const valid = await kubeRequest(admin, 'POST', path, {
      body: {
        apiVersion: 'acid.zalan.do/v1',
        kind: 'postgresql',
        metadata: { name: 'acid-terdut' },
        spec: {
          teamId: 'acid',
          numberOfInstances: 1,
          volume: { size: '1Gi' },
          postgresql: { version: '17' },
          users: { terdut: [] },
        },
      },
    });
    assert.equal(valid.status, 201, valid.text);
    const invalid = await kubeRequest(admin, 'POST', path, {
      body: {
        apiVersion: 'acid.zalan.do/v1',
        kind: 'postgresql',
        metadata: { name: 'no-spec-fields' },
        spec: { numberOfInstances: 1 },
      },
    });
    assert.equal(invalid.status, 422, invalid.text);
  });
});

describe('startKubeControlPlane', () => {
  test('stop() leaves no process and no listening port behind', async () => {
    const plane = await startKubeControlPlane();
    const port = Number(new URL(plane.server).port);
    assert.equal((await plane.request('GET', '/readyz')).status, 200);
    assert.equal(plane.pids.length, 2);
    await plane.stop();
    for (const pid of plane.pids) assert.equal(isProcessAlive(pid), false, `process ${pid} outlived stop()`);
    assert.equal(await portAcceptsConnections(port), false, `port ${port} still accepts connections`);
  });
});

function portAcceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolvePort) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolvePort(true);
    });
    socket.once('error', () => resolvePort(false));
  });
}
