/**
 * A namespace deleted under the operator, on the real kube-apiserver with
 * real terdut-server processes. This control plane runs no namespace
 * controller, so the test does its work: it deletes the namespace (which
 * then stays Terminating, refusing anything new in it), then the objects in
 * it, the TerdutServers last. The operator must neither retry what admission
 * refuses nor hold the deletion up waiting for a server that is gone, and
 * must leave none of its Secrets behind.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { KubeletStandIn } from '../peers/kubelet-standin.ts';
import { kubeRequest, kubeRequestOk } from '../peers/kube.ts';
import { waitUntil } from '../peers/child-processes.ts';
import { kubeForTests, uniqueNamespace, type KubeForTests } from '../peers/peers-for-tests.ts';
import { createTestPostgres } from '../support/databases.ts';
import {
  conditionOf,
  createSecret,
  createTerdutServer,
  ensureNamespace,
  getTerdutServer,
  installTerdutCrd,
  listSecrets,
  operatorNamespace,
  waitForCondition,
  waitForDeployment,
} from './support/operator.ts';
import { startInProcessOperator, type InProcessOperator } from './support/operator-process.ts';

let kube: KubeForTests;
let standIn: KubeletStandIn;
let operator: InProcessOperator;
const databases: { drop(): Promise<void> }[] = [];

before(async () => {
  kube = await kubeForTests();
  await installTerdutCrd(kube.admin);
  await ensureNamespace(kube.admin, operatorNamespace);
  standIn = new KubeletStandIn(kube.admin);
  // The default --finalize-timeout (120 s): a deletion must not wait for it
  // when there is no server left to ask.
  operator = await startInProcessOperator({ kubeconfigPath: kube.kubeconfigPath, standIn });
});

after(async () => {
  await operator?.stop();
  await standIn?.stop();
  for (const database of databases) await database.drop();
  await kube?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('deleting the namespace of a Ready TerdutServer and of one still bootstrapping: no retry loop, nothing made anew, the deletion is not held up and no operator Secret remains', async () => {
  const namespace = await uniqueNamespace(kube.admin, 'doomed');
  const database = await createTestPostgres();
  databases.push(database);
  await createSecret(kube.admin, namespace, 'db', { DATABASE_URL: database.url });
  await createTerdutServer(kube.admin, namespace, 'ready', { database: { secretRef: { name: 'db' } } });
  await createTerdutServer(kube.admin, namespace, 'starting', { database: { secretRef: { name: 'db' } } });
  await waitForDeployment(kube.admin, namespace, 'ready');
  await waitForDeployment(kube.admin, namespace, 'starting');
  const running = await standIn.runDeployment(namespace, 'ready');
  const ready = await waitForCondition(
    kube.admin,
    namespace,
    'ready',
    { type: 'Ready', status: 'True' },
    90_000,
  );
  // 'starting' waits for a replica: its bootstrap has not happened yet.
  const starting = await waitForCondition(kube.admin, namespace, 'starting', {
    type: 'Available',
    status: 'False',
  });

  await kubeRequestOk(kube.admin, 'DELETE', `/api/v1/namespaces/${namespace}`);
  const logsFrom = operator.logs.length;
  // The namespace controller removes what is in the namespace; the pods go
  // with their Deployments.
  await running.stop();
  for (const name of ['ready', 'starting']) {
    await kubeRequestOk(kube.admin, 'DELETE', `/apis/apps/v1/namespaces/${namespace}/deployments/${name}`);
    await kubeRequestOk(kube.admin, 'DELETE', `/api/v1/namespaces/${namespace}/services/${name}`);
    await kubeRequestOk(
      kube.admin,
      'DELETE',
      `/api/v1/namespaces/${namespace}/secrets/${name}-bootstrap-token`,
    );
  }

  // Each TerdutServer says why nothing happens any more…
  for (const name of ['ready', 'starting']) {
    const terminating = await waitForCondition(kube.admin, namespace, name, {
      type: 'Ready',
      status: 'False',
      reason: 'NamespaceTerminating',
    });
    assert.match(
      conditionOf(terminating, 'Ready').message,
      new RegExp(`namespace ${namespace} is being deleted`),
    );
  }
  // …and the operator does not retry what admission refuses.
  await sleep(4000);
  const failures = operator.logs
    .slice(logsFrom)
    .filter((line) => line.startsWith('error') && line.includes(namespace));
  assert.deepEqual(failures, [], 'no reconcile of a TerdutServer in the terminating namespace failed');
  for (const path of [
    `/apis/apps/v1/namespaces/${namespace}/deployments/ready`,
    `/api/v1/namespaces/${namespace}/secrets/starting-bootstrap-token`,
  ])
    assert.equal((await kubeRequest(kube.admin, 'GET', path)).status, 404, `${path} was made anew`);

  // Then the TerdutServers. The Ready one's server is gone with its
  // Deployment, so its keys cannot be revoked: the operator says so and
  // lets the deletion finish at once, not after --finalize-timeout.
  const deletedAt = Date.now();
  for (const name of ['ready', 'starting'])
    await kubeRequestOk(
      kube.admin,
      'DELETE',
      `/apis/terdut.ryuvia.com/v1alpha1/namespaces/${namespace}/terdutservers/${name}`,
    );
  for (const name of ['ready', 'starting'])
    await waitUntil(async () => (await getTerdutServer(kube.admin, namespace, name)) === undefined, {
      timeoutMs: 30_000,
      describe: () =>
        `TerdutServer ${name} was not finalized; operator log:\n${operator.logs.slice(logsFrom).join('\n')}`,
    });
  assert.ok(Date.now() - deletedAt < 30_000);
  for (const server of [ready, starting])
    assert.deepEqual(
      await listSecrets(kube.admin, operatorNamespace, `terdut.ryuvia.com/owner-uid=${server.metadata.uid}`),
      [],
      `operator-namespace Secrets of ${server.metadata.name} remain`,
    );
  // The namespace refuses Events, so the one naming what may remain is in
  // the operator's log instead of lost.
  const unrecorded = operator.logs
    .slice(logsFrom)
    .find((line) => line.includes('could not record an event') && line.includes('KeyRevocationFailed'));
  assert.ok(
    unrecorded,
    `the operator log does not carry the KeyRevocationFailed note:\n${operator.logs.slice(logsFrom).join('\n')}`,
  );
  assert.match(unrecorded, /service-account key \d+ \(the recorded one\)/);
  assert.match(unrecorded, /Deployment \S+\/ready is gone/);
});
