/**
 * terdut-operator on the real kube-apiserver, with real terdut-server
 * processes started by the kubelet stand-in from the Deployments the
 * operator creates: the happy path, the seed incident, and deletion.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { TerdutClient, TerdutApiError } from '../../packages/client/src/index.ts';
import { KubeletStandIn } from '../peers/kubelet-standin.ts';
import { kubeRequest, kubeRequestOk } from '../peers/kube.ts';
import { kubeForTests, uniqueNamespace, type KubeForTests } from '../peers/peers-for-tests.ts';
import { waitUntil } from '../peers/child-processes.ts';
import { createTestPostgres } from '../support/databases.ts';
import {
  conditionOf,
  createSecret,
  createTerdutServer,
  ensureNamespace,
  getSecret,
  getTerdutServer,
  installTerdutCrd,
  listEvents,
  listSecrets,
  operatorNamespace,
  secretValue,
  waitForCondition,
  waitForDeployment,
  waitForEvent,
} from './support/operator.ts';
import { startInProcessOperator, type InProcessOperator } from './support/operator-process.ts';
import { argoCdHealth } from './support/argocd-health.ts';

let kube: KubeForTests;
let namespace: string;
let standIn: KubeletStandIn;
let operator: InProcessOperator;
const databases: { drop(): Promise<void> }[] = [];

before(async () => {
  kube = await kubeForTests();
  await installTerdutCrd(kube.admin);
  await ensureNamespace(kube.admin, operatorNamespace);
  namespace = await uniqueNamespace(kube.admin, 'op-bootstrap');
  standIn = new KubeletStandIn(kube.admin);
  operator = await startInProcessOperator({
    kubeconfigPath: kube.kubeconfigPath,
    standIn,
    watchNamespaces: [namespace],
  });
});

after(async () => {
  await operator?.stop();
  await standIn?.stop();
  for (const database of databases) await database.drop();
  await kube?.stop();
});

/** A fresh migrated PostgreSQL database and a Secret holding its URL. */
async function databaseSecret(name: string) {
  const database = await createTestPostgres();
  databases.push(database);
  await createSecret(kube.admin, namespace, name, { DATABASE_URL: database.url });
  return database;
}

const routePath = (name: string) =>
  `/apis/gateway.networking.k8s.io/v1/namespaces/${namespace}/httproutes/${name}`;

async function credentialsOf(server: any): Promise<{ apiKey: string; secret: any }> {
  const ref = server.status.credentialsSecretRef;
  const secret = await getSecret(kube.admin, operatorNamespace, ref.name);
  return { apiKey: secretValue(secret, ref.key)!, secret };
}

test('a TerdutServer becomes Ready with a working service-account key; its HTTPRoute appears only after Bootstrapped', async (t) => {
  await databaseSecret('happy-db');
  await createTerdutServer(kube.admin, namespace, 'happy', {
    database: { secretRef: { name: 'happy-db' } },
    networking: { hostname: 'terdut.example.com', parentRefs: [{ name: 'public' }] },
  });
  const deployment = await waitForDeployment(kube.admin, namespace, 'happy');
  const pod = deployment.spec.template.spec;
  assert.equal(pod.securityContext.runAsNonRoot, true);
  const container = pod.containers[0];
  assert.equal(container.readinessProbe.httpGet.path, '/readyz');
  assert.equal(container.livenessProbe.httpGet.path, '/healthz');
  assert.deepEqual(
    container.env.find((e: any) => e.name === 'DATABASE_URL'),
    { name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'happy-db', key: 'DATABASE_URL' } } },
    'the database URL is referenced, never copied into the pod spec',
  );
  assert.equal(
    container.env.find((e: any) => e.name === 'TERDUT_BOOTSTRAP_TOKEN_FILE').value,
    '/var/run/terdut/bootstrap/token',
  );

  // Not bootstrapped yet (no replica): no public route.
  await waitForCondition(kube.admin, namespace, 'happy', {
    type: 'Bootstrapped',
    status: 'False',
    reason: 'WaitingForServer',
  });
  assert.equal((await kubeRequest(kube.admin, 'GET', routePath('happy'))).status, 404);

  const workload = await standIn.runDeployment(namespace, 'happy');
  t.after(() => workload.stop());
  const bootstrapped = await waitForCondition(kube.admin, namespace, 'happy', {
    type: 'Bootstrapped',
    status: 'True',
  });
  await waitUntil(async () => (await kubeRequest(kube.admin, 'GET', routePath('happy'))).status === 200, {
    timeoutMs: 20_000,
    describe: () => 'the HTTPRoute was not created after Bootstrapped=True',
  });
  const route = await kubeRequestOk<any>(kube.admin, 'GET', routePath('happy'));
  assert.deepEqual(route.spec.hostnames, ['terdut.example.com']);
  assert.equal(route.spec.parentRefs[0].name, 'public');
  assert.equal(route.spec.rules[0].backendRefs[0].name, 'happy');
  assert.equal(
    conditionOf(bootstrapped, 'Ready').status,
    'False',
    'not Ready while no Gateway accepted the route',
  );

  // The Gateway's controller accepts the route.
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await kubeRequestOk(kube.admin, 'PATCH', `${routePath('happy')}/status`, {
    body: {
      status: {
        parents: [
          {
            parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'public' },
            controllerName: 'example.com/gateway-controller',
            conditions: [
              {
                type: 'Accepted',
                status: 'True',
                reason: 'Accepted',
                message: 'ok',
                lastTransitionTime: now,
                observedGeneration: 1,
              },
            ],
          },
        ],
      },
    },
  });
  const ready = await waitForCondition(kube.admin, namespace, 'happy', { type: 'Ready', status: 'True' });
  assert.equal((await argoCdHealth(ready)).status, 'Healthy', 'Argo CD with the README health check');
  assert.equal(ready.status.url, 'https://terdut.example.com');
  assert.equal(ready.status.observedGeneration, ready.metadata.generation);
  for (const type of ['DatabaseReady', 'Available', 'Bootstrapped', 'Exposed', 'Ready'])
    assert.equal(conditionOf(ready, type).observedGeneration, ready.metadata.generation, type);

  // The recorded key authenticates as the instance service account.
  const { apiKey, secret } = await credentialsOf(ready);
  assert.equal(secret.metadata.labels['terdut.ryuvia.com/owner-uid'], ready.metadata.uid);
  assert.equal(secret.metadata.labels['terdut.ryuvia.com/owner-namespace'], namespace);
  const asOperator = new TerdutClient({ baseUrl: workload.url, token: apiKey });
  const accounts = await asOperator.serviceAccounts.list();
  assert.deepEqual(
    accounts.map((a) => [a.name, a.scope]),
    [['terdut-operator', 'instance']],
  );
  const me = await asOperator.users.me();
  assert.equal(me.user.username, 'service:terdut-operator');

  // No checkpoint left; the bootstrap admin key was revoked; a Normal event says what happened.
  const leftovers = await listSecrets(
    kube.admin,
    operatorNamespace,
    `terdut.ryuvia.com/owner-uid=${ready.metadata.uid}`,
  );
  assert.deepEqual(
    leftovers.map((s) => s.metadata.labels['terdut.ryuvia.com/secret-role']),
    ['credentials'],
  );
  const event = await waitForEvent(kube.admin, namespace, 'BootstrapSucceeded');
  assert.equal(event.type, 'Normal');
  assert.equal(event.regarding.name, 'happy');

  // Everything in the TerdutServer's namespace is owned by it (garbage collection removes it).
  for (const path of [
    `/apis/apps/v1/namespaces/${namespace}/deployments/happy`,
    `/api/v1/namespaces/${namespace}/services/happy`,
    `/api/v1/namespaces/${namespace}/secrets/happy-bootstrap-token`,
    routePath('happy'),
  ]) {
    const object = await kubeRequestOk<any>(kube.admin, 'GET', path);
    assert.equal(object.metadata.ownerReferences?.[0]?.uid, ready.metadata.uid, path);
    assert.equal(object.metadata.ownerReferences[0].controller, true, path);
  }

  // Deletion: the key is revoked on the server, the operator-namespace Secrets go, the finalizer goes.
  await kubeRequestOk(
    kube.admin,
    'DELETE',
    `/apis/terdut.ryuvia.com/v1alpha1/namespaces/${namespace}/terdutservers/happy`,
  );
  await waitUntil(async () => (await getTerdutServer(kube.admin, namespace, 'happy')) === undefined, {
    timeoutMs: 30_000,
    describe: () => 'the TerdutServer was not finalized',
  });
  const error = await asOperator.users.me().catch((e: unknown) => e);
  assert.ok(
    error instanceof TerdutApiError && error.status === 401,
    `the key still works after deletion: ${String(error)}`,
  );
  assert.deepEqual(
    await listSecrets(kube.admin, operatorNamespace, `terdut.ryuvia.com/owner-uid=${ready.metadata.uid}`),
    [],
  );
  assert.ok((await listEvents(kube.admin, namespace)).some((e) => e.reason === 'KeyRevoked'));
});

test('the seed incident: a person already holds the first user and there is no bootstrap record — the operator recovers, no SQL', async (t) => {
  const database = await databaseSecret('seed-db');
  // An install from before the bootstrap protocol: a person signed in first.
  await database.db.query(
    `INSERT INTO users (username, email, role, kind) VALUES ('alice', 'alice@example.com', 'admin', 'person')`,
  );
  await createTerdutServer(kube.admin, namespace, 'seed', { database: { secretRef: { name: 'seed-db' } } });
  await waitForDeployment(kube.admin, namespace, 'seed');
  const workload = await standIn.runDeployment(namespace, 'seed');
  t.after(() => workload.stop());

  const ready = await waitForCondition(kube.admin, namespace, 'seed', { type: 'Ready', status: 'True' });
  const event = await waitForEvent(kube.admin, namespace, 'BootstrapRecovered');
  assert.equal(event.type, 'Normal');
  assert.equal(conditionOf(ready, 'Exposed').reason, 'NotRequested');

  const { apiKey } = await credentialsOf(ready);
  const asOperator = new TerdutClient({ baseUrl: workload.url, token: apiKey });
  assert.deepEqual(
    (await asOperator.serviceAccounts.list()).map((a) => a.name),
    ['terdut-operator'],
  );
  const people = await asOperator.users.list();
  assert.ok(
    people.some((u) => u.username === 'alice'),
    'the person who came first is untouched',
  );
});

test('a Zalando database whose Secret does not exist yet: DatabaseReady=False naming it, then True as soon as it appears (watch, no polling)', async () => {
  await createTerdutServer(kube.admin, namespace, 'zalando', {
    database: { postgresql: { clusterName: 'terdut-db', user: 'terdut_app', databaseName: 'terdut' } },
  });
  const waiting = await waitForCondition(kube.admin, namespace, 'zalando', {
    type: 'DatabaseReady',
    status: 'False',
    reason: 'DatabaseSecretMissing',
  });
  const secretName = 'terdut-app.terdut-db.credentials.postgresql.acid.zalan.do';
  assert.match(conditionOf(waiting, 'DatabaseReady').message, new RegExp(secretName.replace(/\./g, '\\.')));
  assert.equal(conditionOf(waiting, 'Ready').reason, 'DatabaseSecretMissing');
  // Another tool (the postgres-operator) makes the Secret: Argo CD waits, it does not call it broken.
  assert.equal((await argoCdHealth(waiting)).status, 'Progressing');
  const missing = await waitForEvent(kube.admin, namespace, 'DatabaseMissing');
  assert.equal(missing.type, 'Warning');
  assert.equal(
    (await kubeRequest(kube.admin, 'GET', `/apis/apps/v1/namespaces/${namespace}/deployments/zalando`))
      .status,
    404,
    'no Deployment without a database',
  );

  // The postgres-operator creates the Secret; the operator notices through its watch.
  await createSecret(kube.admin, namespace, secretName, { username: 'terdut_app', password: 'pw' });
  await waitForCondition(kube.admin, namespace, 'zalando', { type: 'DatabaseReady', status: 'True' }, 10_000);
  const deployment = await waitForDeployment(kube.admin, namespace, 'zalando');
  const env = deployment.spec.template.spec.containers[0].env;
  assert.deepEqual(env.find((e: any) => e.name === 'TERDUT_DB_PASSWORD').valueFrom, {
    secretKeyRef: { name: secretName, key: 'password' },
  });
  assert.equal(
    env.find((e: any) => e.name === 'DATABASE_URL').value,
    `postgres://$(TERDUT_DB_USER):$(TERDUT_DB_PASSWORD)@terdut-db.${namespace}.svc:5432/terdut?sslmode=require`,
  );
});

test('removing spec.networking.hostname from an exposed TerdutServer deletes its HTTPRoute: the server is no longer public', async (t) => {
  await databaseSecret('unexpose-db');
  await createTerdutServer(kube.admin, namespace, 'unexpose', {
    database: { secretRef: { name: 'unexpose-db' } },
    networking: { hostname: 'unexpose.example.com', parentRefs: [{ name: 'public' }] },
  });
  await waitForDeployment(kube.admin, namespace, 'unexpose');
  const workload = await standIn.runDeployment(namespace, 'unexpose');
  t.after(() => workload.stop());
  await waitForCondition(kube.admin, namespace, 'unexpose', {
    type: 'Exposed',
    status: 'False',
    reason: 'RouteNotAccepted',
  });
  assert.equal((await kubeRequest(kube.admin, 'GET', routePath('unexpose'))).status, 200);
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await kubeRequestOk(kube.admin, 'PATCH', `${routePath('unexpose')}/status`, {
    body: {
      status: {
        parents: [
          {
            parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'public' },
            controllerName: 'example.com/gateway-controller',
            conditions: [
              {
                type: 'Accepted',
                status: 'True',
                reason: 'Accepted',
                message: 'ok',
                lastTransitionTime: now,
                observedGeneration: 1,
              },
            ],
          },
        ],
      },
    },
  });
  const exposed = await waitForCondition(kube.admin, namespace, 'unexpose', {
    type: 'Ready',
    status: 'True',
  });
  assert.equal(exposed.status.url, 'https://unexpose.example.com');

  await kubeRequestOk(
    kube.admin,
    'PATCH',
    `/apis/terdut.ryuvia.com/v1alpha1/namespaces/${namespace}/terdutservers/unexpose`,
    { body: { spec: { networking: null } } },
  );
  const internal = await waitForCondition(kube.admin, namespace, 'unexpose', {
    type: 'Exposed',
    status: 'False',
    reason: 'NotRequested',
  });
  assert.equal(conditionOf(internal, 'Ready').status, 'True');
  const serviceUrl = `http://unexpose.${namespace}.svc:8080`;
  assert.equal(internal.status.url, serviceUrl, 'status.url no longer names the public hostname');
  assert.match(conditionOf(internal, 'Ready').message, new RegExp(`at ${serviceUrl.replace(/\./g, '\\.')}$`));
  await waitUntil(async () => (await kubeRequest(kube.admin, 'GET', routePath('unexpose'))).status === 404, {
    timeoutMs: 10_000,
    describe: () => 'the HTTPRoute is still there, routing the public hostname',
  });
});

test('a deleted Service of a Ready TerdutServer comes back (the operator watches it)', async (t) => {
  await databaseSecret('service-db');
  await createTerdutServer(kube.admin, namespace, 'service', {
    database: { secretRef: { name: 'service-db' } },
  });
  await waitForDeployment(kube.admin, namespace, 'service');
  const workload = await standIn.runDeployment(namespace, 'service');
  t.after(() => workload.stop());
  await waitForCondition(kube.admin, namespace, 'service', { type: 'Ready', status: 'True' });
  const servicePath = `/api/v1/namespaces/${namespace}/services/service`;
  const before = await kubeRequestOk<any>(kube.admin, 'GET', servicePath);

  await kubeRequestOk(kube.admin, 'DELETE', servicePath);
  let after: any;
  await waitUntil(
    async () => {
      const res = await kubeRequest(kube.admin, 'GET', servicePath);
      if (res.status !== 200) return false;
      after = res.json<any>();
      return after.metadata.uid !== before.metadata.uid;
    },
    { timeoutMs: 10_000, describe: () => 'the deleted Service was not recreated' },
  );
  assert.deepEqual(after.spec.selector, before.spec.selector);
  assert.equal(after.metadata.ownerReferences[0].name, 'service');
});

test('an HTTPRoute a person made under the name of a TerdutServer without hostname is left alone', async () => {
  await createSecret(kube.admin, namespace, 'byhand-db', { DATABASE_URL: 'postgres://u:p@db:5432/terdut' });
  await kubeRequestOk(
    kube.admin,
    'POST',
    `/apis/gateway.networking.k8s.io/v1/namespaces/${namespace}/httproutes`,
    {
      body: {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { name: 'byhand' },
        spec: {
          parentRefs: [{ name: 'internal' }],
          rules: [{ backendRefs: [{ name: 'byhand', port: 8080 }] }],
        },
      },
    },
  );
  await createTerdutServer(kube.admin, namespace, 'byhand', {
    database: { secretRef: { name: 'byhand-db' } },
  });
  await waitForCondition(kube.admin, namespace, 'byhand', {
    type: 'Exposed',
    status: 'False',
    reason: 'NotRequested',
  });
  assert.equal((await kubeRequest(kube.admin, 'GET', routePath('byhand'))).status, 200);
});

test('every write of the operator is recorded under its field manager terdut-operator (kubectl get --show-managed-fields, audit logs), none under "unknown"', async () => {
  await createSecret(kube.admin, namespace, 'managed-db', { DATABASE_URL: 'postgres://u:p@db:5432/terdut' });
  await createTerdutServer(kube.admin, namespace, 'managed', {
    database: { secretRef: { name: 'managed-db' } },
  });
  await waitForCondition(kube.admin, namespace, 'managed', {
    type: 'Available',
    status: 'False',
    reason: 'ReplicasNotReady',
  });
  const managedFields = async (path: string): Promise<any[]> =>
    (await kubeRequestOk<any>(kube.admin, 'GET', path)).metadata.managedFields ?? [];
  const server = await managedFields(
    `/apis/terdut.ryuvia.com/v1alpha1/namespaces/${namespace}/terdutservers/managed`,
  );
  // The spec is the test's; the finalizer and the status are the operator's.
  const managersOf = (holds: (fields: any) => boolean, subresource?: string) =>
    server
      .filter((entry) => entry.subresource === subresource && holds(entry.fieldsV1 ?? {}))
      .map((entry) => entry.manager);
  assert.deepEqual(
    managersOf((fields) => 'f:finalizers' in (fields['f:metadata'] ?? {})),
    ['terdut-operator'],
  );
  assert.deepEqual(
    managersOf((fields) => 'f:status' in fields, 'status'),
    ['terdut-operator'],
  );
  for (const path of [
    `/api/v1/namespaces/${namespace}/secrets/managed-bootstrap-token`,
    `/apis/apps/v1/namespaces/${namespace}/deployments/managed`,
    `/api/v1/namespaces/${namespace}/services/managed`,
  ])
    assert.deepEqual(
      (await managedFields(path)).map((entry) => entry.manager),
      ['terdut-operator'],
      path,
    );
});
