/**
 * deploy/ on the real kube-apiserver: everything the kustomization lists
 * applies, and the generated least-privilege RBAC is enough for the whole
 * reconcile: an operator authenticated as the terdut-operator
 * ServiceAccount (a real token from the TokenRequest API, leader election
 * on) takes a TerdutServer to Ready and through deletion. The ClusterRoles
 * for people give exactly the access their names say.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { repoRoot } from '../peers/child-processes.ts';
import { KubeletStandIn } from '../peers/kubelet-standin.ts';
import { kubeRequest, kubeRequestOk } from '../peers/kube.ts';
import { kubeForTests, uniqueNamespace, type KubeForTests } from '../peers/peers-for-tests.ts';
import { waitUntil } from '../peers/child-processes.ts';
import { createTestPostgres } from '../support/databases.ts';
import { startOperator } from '../../packages/operator/src/operator.ts';
import { loadOperatorConfig } from '../../packages/operator/src/config.ts';
import { KubeClient } from '../../packages/operator/src/runtime/kube-client.ts';
import {
  applyYamlFile,
  createSecret,
  createTerdutServer,
  getTerdutServer,
  listSecrets,
  operatorNamespace,
  waitForCondition,
  waitForDeployment,
  yamlIdentity,
} from './support/operator.ts';

let kube: KubeForTests;
let standIn: KubeletStandIn;
let database: { url: string; drop(): Promise<void> } | undefined;

before(async () => {
  kube = await kubeForTests();
  standIn = new KubeletStandIn(kube.admin);
});
after(async () => {
  await standIn?.stop();
  await database?.drop();
  await kube?.stop();
});

test('every manifest the kustomization lists applies to the API server', async () => {
  const kustomization = readFileSync(join(repoRoot, 'deploy', 'kustomization.yaml'), 'utf8');
  const resources = [...kustomization.matchAll(/^ {2}- (\S+)$/gm)].map((m) => m[1]!);
  assert.deepEqual(resources.sort(), [
    'crds/terdut.ryuvia.com_terdutservers.yaml',
    'operator/operator.yaml',
    'rbac/rbac.yaml',
    'rbac/user-roles.yaml',
  ]);
  // Namespaces first, as kustomize orders them.
  for (const file of [
    'operator/operator.yaml',
    'crds/terdut.ryuvia.com_terdutservers.yaml',
    'rbac/rbac.yaml',
    'rbac/user-roles.yaml',
  ])
    await applyYamlFile(kube.admin, join(repoRoot, 'deploy', file));
  const deployment = await kubeRequestOk<any>(
    kube.admin,
    'GET',
    '/apis/apps/v1/namespaces/terdut-system/deployments/terdut-operator',
  );
  const pod = deployment.spec.template.spec;
  assert.equal(pod.serviceAccountName, 'terdut-operator');
  assert.equal(pod.securityContext.runAsNonRoot, true);
  assert.equal(pod.containers[0].readinessProbe.httpGet.path, '/readyz');
  assert.equal(pod.containers[0].livenessProbe.httpGet.path, '/healthz');
  assert.ok(pod.containers[0].resources.limits.memory);
  await waitUntil(
    async () =>
      (await kubeRequest(kube.admin, 'GET', '/apis/terdut.ryuvia.com/v1alpha1/terdutservers')).status === 200,
    { timeoutMs: 30_000, describe: () => 'TerdutServers are not served' },
  );

  // The samples are valid TerdutServers (server-side dry run).
  for (const sample of ['terdutserver-database-url.yaml', 'terdutserver-zalando.yaml']) {
    const text = readFileSync(join(repoRoot, 'deploy', 'samples', sample), 'utf8');
    const doc = text.split(/^---\s*$/m).find((d) => /^kind: TerdutServer$/m.test(d))!;
    const { name } = yamlIdentity(doc);
    const ns = await uniqueNamespace(kube.admin, 'sample');
    const res = await kubeRequest(
      kube.admin,
      'PATCH',
      `/apis/terdut.ryuvia.com/v1alpha1/namespaces/${ns}/terdutservers/${name}?fieldManager=terdut-tests&dryRun=All`,
      {
        body: doc.replace(/namespace: oncall/, `namespace: ${ns}`),
        contentType: 'application/apply-patch+yaml',
      },
    );
    assert.equal(res.status, 201, `${sample}: ${res.text}`);
  }
});

test('the generated RBAC is enough for the whole reconcile, and no more than it needs', async () => {
  const token = (
    await kubeRequestOk<any>(
      kube.admin,
      'POST',
      `/api/v1/namespaces/${operatorNamespace}/serviceaccounts/terdut-operator/token`,
      {
        body: {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: { expirationSeconds: 3600 },
        },
      },
    )
  ).status.token as string;

  // Least privilege: nothing outside the listed rules.
  assert.equal((await kubeRequest(kube.admin, 'GET', '/api/v1/pods', { token })).status, 403);
  assert.equal(
    (
      await kubeRequest(
        kube.admin,
        'DELETE',
        `/apis/apps/v1/namespaces/${operatorNamespace}/deployments/terdut-operator`,
        { token },
      )
    ).status,
    403,
  );

  // Secrets are deleted in the operator's own namespace only.
  const elsewhere = await uniqueNamespace(kube.admin, 'op-rbac-secrets');
  await createSecret(kube.admin, elsewhere, 'app-secret', { password: 'keep me' });
  assert.equal(
    (
      await kubeRequest(kube.admin, 'DELETE', `/api/v1/namespaces/${elsewhere}/secrets/app-secret`, {
        token,
      })
    ).status,
    403,
    'a Secret outside the operator namespace cannot be deleted with its token',
  );

  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [
      { name: 'test', server: kube.admin.server, caData: Buffer.from(kube.admin.ca).toString('base64') },
    ],
    users: [{ name: 'terdut-operator', token }],
    contexts: [{ name: 'test', cluster: 'test', user: 'terdut-operator' }],
    currentContext: 'test',
  });
  const namespace = await uniqueNamespace(kube.admin, 'op-rbac');
  const logs: string[] = [];
  const record = (msg: string, fields?: Record<string, unknown>) =>
    logs.push(`${msg} ${JSON.stringify(fields ?? {})}`);
  const operator = await startOperator({
    config: loadOperatorConfig(
      [
        '--operator-namespace',
        operatorNamespace,
        '--watch-namespaces',
        namespace,
        '--lease-name',
        `rbac-${namespace}`,
        '--metrics-address',
        '127.0.0.1:0',
        '--probe-address',
        '127.0.0.1:0',
      ],
      {},
    ),
    kube: new KubeClient(config),
    logger: { debug: () => {}, info: record, warn: record, error: record },
    resolveServerUrl: (ns, service, url) => standIn.serviceUrls.get(`${ns}/${service}`) ?? url,
  });
  try {
    database = await createTestPostgres();
    await createSecret(kube.admin, namespace, 'db', { DATABASE_URL: database.url });
    await createTerdutServer(kube.admin, namespace, 'rbac', { database: { secretRef: { name: 'db' } } });
    await waitForDeployment(kube.admin, namespace, 'rbac');
    await standIn.runDeployment(namespace, 'rbac');
    const ready = await waitForCondition(
      kube.admin,
      namespace,
      'rbac',
      { type: 'Ready', status: 'True' },
      90_000,
    );
    assert.ok(operator.leading(), 'the operator took the Lease with its Role');

    await kubeRequestOk(
      kube.admin,
      'DELETE',
      `/apis/terdut.ryuvia.com/v1alpha1/namespaces/${namespace}/terdutservers/rbac`,
    );
    await waitUntil(async () => (await getTerdutServer(kube.admin, namespace, 'rbac')) === undefined, {
      timeoutMs: 30_000,
      describe: () => `the TerdutServer was not finalized; operator log:\n${logs.join('\n')}`,
    });
    assert.deepEqual(
      await listSecrets(kube.admin, operatorNamespace, `terdut.ryuvia.com/owner-uid=${ready.metadata.uid}`),
      [],
    );
    const forbidden = logs.filter((line) => /forbidden|403/i.test(line));
    assert.deepEqual(forbidden, [], 'no request of the operator was refused by RBAC');
  } finally {
    await operator.stop();
  }
});

/** Every verb on every part of a TerdutServer that RBAC can grant, as `verb resource[/subresource]`. */
const terdutServerAccess = ['', '/status', '/scale'].flatMap((sub) =>
  ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'].map(
    (verb) => `${verb} terdutservers${sub}`,
  ),
);

/** What the API server's authoriser answers for `user` in `namespace`, one SubjectAccessReview per entry. */
async function allowedFor(user: string, namespace: string): Promise<string[]> {
  const allowed: string[] = [];
  for (const access of terdutServerAccess) {
    const [verb, path] = access.split(' ') as [string, string];
    const [resource, subresource] = path.split('/') as [string, string | undefined];
    const review = await kubeRequestOk<{ status: { allowed: boolean } }>(
      kube.admin,
      'POST',
      '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      {
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user,
            resourceAttributes: { namespace, verb, group: 'terdut.ryuvia.com', resource, subresource },
          },
        },
      },
    );
    if (review.status.allowed) allowed.push(access);
  }
  return allowed;
}

test('the ClusterRoles for people: view reads TerdutServers, edit and admin also change them, nobody but the operator writes status', async () => {
  const roles = await applyYamlFile(kube.admin, join(repoRoot, 'deploy', 'rbac', 'user-roles.yaml'));
  assert.deepEqual(
    roles.map((role) => role.name),
    ['terdutservers-view', 'terdutservers-edit', 'terdutservers-admin'],
  );
  // Aggregation is kube-controller-manager's work, which this control plane
  // does not run; what can be checked is that each role carries the label
  // the API server's own built-in role selects its aggregated rules by.
  for (const role of ['view', 'edit', 'admin']) {
    const builtIn = await kubeRequestOk<any>(
      kube.admin,
      'GET',
      `/apis/rbac.authorization.k8s.io/v1/clusterroles/${role}`,
    );
    const ours = await kubeRequestOk<any>(
      kube.admin,
      'GET',
      `/apis/rbac.authorization.k8s.io/v1/clusterroles/terdutservers-${role}`,
    );
    const selects = (
      builtIn.aggregationRule.clusterRoleSelectors as { matchLabels: Record<string, string> }[]
    ).some((selector) =>
      Object.entries(selector.matchLabels).every(([k, v]) => ours.metadata.labels[k] === v),
    );
    assert.ok(selects, `the built-in ${role} role does not aggregate terdutservers-${role}`);
  }

  // People bound to each role in one namespace, as the built-in roles would
  // bind them once aggregated.
  const namespace = await uniqueNamespace(kube.admin, 'user-roles');
  const other = await uniqueNamespace(kube.admin, 'user-roles-other');
  for (const role of ['view', 'edit', 'admin'])
    await kubeRequestOk(
      kube.admin,
      'POST',
      `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`,
      {
        body: {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: { name: `terdut-${role}` },
          roleRef: {
            apiGroup: 'rbac.authorization.k8s.io',
            kind: 'ClusterRole',
            name: `terdutservers-${role}`,
          },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: `${role}-person` }],
        },
      },
    );

  const read = terdutServerAccess.filter((access) => /^(get|list|watch) /.test(access));
  const change = terdutServerAccess.filter(
    (access) => !access.endsWith('/status') || /^(get|list|watch) /.test(access),
  );
  assert.deepEqual(await allowedFor('view-person', namespace), read);
  assert.deepEqual(await allowedFor('edit-person', namespace), change);
  assert.deepEqual(await allowedFor('admin-person', namespace), change);
  assert.deepEqual(
    await allowedFor('edit-person', other),
    [],
    'a RoleBinding grants nothing in another namespace',
  );
});
