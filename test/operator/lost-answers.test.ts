/**
 * Answers lost on the network after the server committed: the operator's
 * requests go through a fault injector (support/lost-answer-proxy.ts) that
 * drops the first answer of POST /api/bootstrap, POST /api/bootstrap/recover,
 * POST /api/service-accounts and POST /api/service-accounts/:id/keys. Each
 * leaves a key on the server that the operator never saw; the bootstrap
 * must still end with the recorded key as the only valid key of the
 * operator's identities, which the server itself is asked. Then an admin
 * revokes that key while the operator runs: the key verifier
 * (--key-check-interval 2) notices with no Kubernetes change, and the key is
 * replaced (CredentialsRefused, CredentialsReissued). Last, deleting it
 * while its server does not answer: KeyRevocationFailed, naming the key.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { KubeletStandIn } from '../peers/kubelet-standin.ts';
import { kubeForTests, uniqueNamespace, type KubeForTests } from '../peers/peers-for-tests.ts';
import { createTestPostgres } from '../support/databases.ts';
import { kubeRequestOk } from '../peers/kube.ts';
import { waitUntil } from '../peers/child-processes.ts';
import {
  conditionOf,
  createSecret,
  createTerdutServer,
  ensureNamespace,
  getSecret,
  getTerdutServer,
  installTerdutCrd,
  listEvents,
  operatorNamespace,
  secretValue,
  waitForCondition,
  waitForDeployment,
  waitForEvent,
} from './support/operator.ts';
import { startInProcessOperator, type InProcessOperator } from './support/operator-process.ts';
import { LostAnswerInjector } from './support/lost-answer-proxy.ts';
import { assertCredentialInvariant, auditorOf } from './support/credential-invariant.ts';
import { argoCdHealth } from './support/argocd-health.ts';

let kube: KubeForTests;
let standIn: KubeletStandIn;
let operator: InProcessOperator | undefined;
let injector: LostAnswerInjector | undefined;
const databases: { drop(): Promise<void> }[] = [];

before(async () => {
  kube = await kubeForTests();
  await installTerdutCrd(kube.admin);
  await ensureNamespace(kube.admin, operatorNamespace);
  standIn = new KubeletStandIn(kube.admin);
});

after(async () => {
  await operator?.stop();
  await injector?.stop();
  await standIn?.stop();
  for (const database of databases) await database.drop();
  await kube?.stop();
});

test('answers lost after the server committed (bootstrap, recover, service account, key) leave no key behind; a key revoked later is noticed and replaced; a deletion that cannot revoke says which key remains', async (t) => {
  const namespace = await uniqueNamespace(kube.admin, 'op-lost');
  injector = await LostAnswerInjector.start(
    () => standIn.workload(namespace, 'lost')?.url,
    [
      { method: 'POST', path: /^\/api\/bootstrap$/ },
      { method: 'POST', path: /^\/api\/bootstrap\/recover$/ },
      { method: 'POST', path: /^\/api\/service-accounts$/ },
      { method: 'POST', path: /^\/api\/service-accounts\/\d+\/keys$/ },
    ],
  );
  operator = await startInProcessOperator({
    kubeconfigPath: kube.kubeconfigPath,
    standIn,
    watchNamespaces: [namespace],
    resolveServerUrl: (ns, service, url) => (ns === namespace ? injector!.url : url),
    extraArgs: ['--key-check-interval', '2', '--finalize-timeout', '8'],
  });
  const database = await createTestPostgres();
  databases.push(database);
  await createSecret(kube.admin, namespace, 'db', { DATABASE_URL: database.url });
  await createTerdutServer(kube.admin, namespace, 'lost', { database: { secretRef: { name: 'db' } } });
  await waitForDeployment(kube.admin, namespace, 'lost');
  const workload = await standIn.runDeployment(namespace, 'lost');
  t.after(() => workload.stop());

  const settled = await waitForCondition(
    kube.admin,
    namespace,
    'lost',
    { type: 'Ready', status: 'True' },
    120_000,
  );
  assert.deepEqual(
    injector.pending,
    [],
    `every answer was dropped once (dropped: ${injector.dropped.join('; ')})`,
  );
  t.diagnostic(`dropped: ${injector.dropped.join('; ')}`);

  const ref = settled.status.credentialsSecretRef;
  const secret = await getSecret(kube.admin, operatorNamespace, ref.name);
  const auditor = await auditorOf(kube.admin, namespace, 'lost', workload.url);
  await assertCredentialInvariant(auditor, workload.url, 'after four lost answers', {
    apiKey: secretValue(secret, ref.key)!,
    keyId: Number(secret.metadata.annotations['terdut.ryuvia.com/api-key-id']),
  });

  const recordedKeyId = Number(secret.metadata.annotations['terdut.ryuvia.com/api-key-id']);
  const reasons = (await listEvents(kube.admin, namespace)).map((e) => e.reason);
  // The pass that lost the service account's answer failed; the next one
  // continued from the checkpoint, and the one Ready event says so.
  const ready = ['BootstrapSucceeded', 'BootstrapRecovered', 'BootstrapResumed', 'CredentialsReissued'];
  assert.deepEqual(
    reasons.filter((r) => ready.includes(r)),
    ['BootstrapResumed'],
    `one Ready event, naming how: ${reasons.join(', ')}`,
  );

  // An admin revokes the recorded key while the operator runs and nothing
  // changes in Kubernetes: the key verifier notices, and the key is replaced.
  const account = (await auditor.serviceAccounts.findByName('terdut-operator'))!;
  await auditor.serviceAccounts.revokeKey(account.id, recordedKeyId);
  await waitForEvent(kube.admin, namespace, 'CredentialsRefused', 30_000);
  await waitForEvent(kube.admin, namespace, 'CredentialsReissued', 60_000);
  const reissued = await waitForCondition(
    kube.admin,
    namespace,
    'lost',
    { type: 'Bootstrapped', status: 'True', reason: 'CredentialsVerified' },
    60_000,
  );
  const newSecret = await getSecret(kube.admin, operatorNamespace, reissued.status.credentialsSecretRef.name);
  const newKeyId = Number(newSecret.metadata.annotations['terdut.ryuvia.com/api-key-id']);
  assert.notEqual(newKeyId, recordedKeyId);
  await assertCredentialInvariant(auditor, workload.url, 'after the verifier replaced a revoked key', {
    apiKey: secretValue(newSecret, ref.key)!,
    keyId: newKeyId,
  });

  // Deleted while its server does not answer: nothing can be revoked, and
  // the operator says so — which key may remain and how to remove it —
  // then lets the deletion finish after --finalize-timeout.
  await workload.stop();
  await kubeRequestOk(
    kube.admin,
    'DELETE',
    `/apis/terdut.ryuvia.com/v1alpha1/namespaces/${namespace}/terdutservers/lost`,
  );
  const failing = await waitForCondition(
    kube.admin,
    namespace,
    'lost',
    { type: 'Ready', status: 'False', reason: 'KeyRevocationFailed' },
    30_000,
  );
  // Marking it deleted raised its generation; the condition is about that
  // generation, and status says so (else Argo CD's health check would read
  // "waiting for the operator" instead of Degraded with this message).
  assert.equal(failing.status.observedGeneration, failing.metadata.generation);
  assert.deepEqual(await argoCdHealth(failing), {
    status: 'Degraded',
    message: conditionOf(failing, 'Ready').message,
  });
  const message: string = conditionOf(failing, 'Ready').message;
  assert.match(message, new RegExp(`service-account key ${newKeyId} \\(the recorded one\\)`));
  assert.match(message, /terdut-server admin recover/);
  assert.match(message, /DELETE \/api\/service-accounts\/<id>\/keys\/<key>/);
  await waitUntil(async () => (await getTerdutServer(kube.admin, namespace, 'lost')) === undefined, {
    timeoutMs: 60_000,
    describe: () => 'the deletion did not finish after --finalize-timeout',
  });
  const failures = (await listEvents(kube.admin, namespace)).filter(
    (e) => e.reason === 'KeyRevocationFailed',
  );
  assert.ok(
    failures.some((e) => e.type === 'Warning' && /gave up after 8 s/.test(e.note)),
    `a Warning event says the operator gave up: ${failures.map((e) => e.note).join(' | ')}`,
  );
});
