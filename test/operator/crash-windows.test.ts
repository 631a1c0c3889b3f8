/**
 * Every crash window of every branch (bootstrap, recover, token rotation,
 * adoption and reissue, the finalizer), against the credential invariant
 * (bootstrap-protocol.md, "What the operator guarantees"): when Ready, the
 * recorded key is the only valid key of the operator's identities on the
 * server; after deletion, none is. The server itself is asked
 * (support/credential-invariant.ts), admin keys included.
 *
 * Cheap by design: one control plane, two terdut-servers, and per server
 * one restart loop. A real operator process (main.ts) runs with a set of
 * failpoints armed (TERDUT_OPERATOR_FAILPOINT); it exits at the first one it
 * reaches, as if killed there; the loop disarms that one and starts a new
 * process, until the wanted state is reached. One walk through a branch
 * thus crashes once at each of its steps, in order.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { failpointExitCode } from '../../packages/operator/src/controllers/terdutserver/failpoint.ts';
import { KubeletStandIn } from '../peers/kubelet-standin.ts';
import { kubeRequestOk } from '../peers/kube.ts';
import { kubeForTests, uniqueNamespace, type KubeForTests } from '../peers/peers-for-tests.ts';
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
  waitForDeployment,
} from './support/operator.ts';
import { startOperatorProcess, type OperatorProcess } from './support/operator-process.ts';
import { assertCredentialInvariant, auditorOf } from './support/credential-invariant.ts';

let kube: KubeForTests;
let standIn: KubeletStandIn;
const processes: OperatorProcess[] = [];
const databases: { drop(): Promise<void> }[] = [];

before(async () => {
  kube = await kubeForTests();
  await installTerdutCrd(kube.admin);
  await ensureNamespace(kube.admin, operatorNamespace);
  standIn = new KubeletStandIn(kube.admin);
});

/** Removed once every process that may read them has stopped. */
const temporaryDirs: string[] = [];

after(async () => {
  for (const process of processes) await process.stop();
  await standIn?.stop();
  for (const database of databases) await database.drop();
  await kube?.stop();
  for (const dir of temporaryDirs) rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A namespace with a database, a TerdutServer `terdut`, and a kubelet that runs its Deployment once created. */
async function scenario(prefix: string, env?: Record<string, string>) {
  const namespace = await uniqueNamespace(kube.admin, prefix);
  const database = await createTestPostgres();
  databases.push(database);
  await createSecret(kube.admin, namespace, 'db', { DATABASE_URL: database.url });
  await createTerdutServer(kube.admin, namespace, 'terdut', { database: { secretRef: { name: 'db' } } });
  const running = waitForDeployment(kube.admin, namespace, 'terdut', 120_000).then(() =>
    standIn.runDeployment(namespace, 'terdut', { readyTimeoutMs: 120_000, ...(env ? { env } : {}) }),
  );
  return { namespace, running };
}

/**
 * Runs operator processes with `armed` failpoints until `done()`: each
 * process that exits at a failpoint is replaced by one without it. Answers
 * the failpoints reached, in order. `onCrash` runs between a crash and the
 * restart (a kubelet delivering a rotated token, a person deleting).
 */
async function crashLoop(options: {
  namespace: string;
  armed: string[];
  done: () => Promise<boolean>;
  onCrash?: (failpoint: string) => Promise<void>;
  /** Return right after this failpoint, with no operator running. */
  stopAt?: string;
  timeoutMs?: number;
}): Promise<string[]> {
  const armed = [...options.armed];
  const reached: string[] = [];
  const deadline = Date.now() + (options.timeoutMs ?? 180_000);
  for (;;) {
    const operator = startOperatorProcess({
      kubeconfigPath: kube.kubeconfigPath,
      standIn,
      identity: `crash-${options.namespace}-${reached.length}`,
      failpoint: armed.join(','),
      watchNamespaces: [options.namespace],
      leaderElection: false,
      extraArgs: ['--key-check-interval', '2', '--token-pickup-timeout', '120'],
    });
    processes.push(operator);
    let exit: { code: number | null } | undefined;
    void operator.child.exited.then((result) => (exit = result));
    for (;;) {
      assert.ok(
        Date.now() < deadline,
        `${options.namespace}: not done; reached ${reached.join(', ')}; still armed ${armed.join(', ')}\n${operator.log()}`,
      );
      operator.syncServiceUrls();
      if (exit) break;
      if (await options.done()) {
        // A status written before a crash can look done: done only if the process lives on.
        await sleep(1000);
        if (exit) break;
        await operator.stop();
        return reached;
      }
      await sleep(250);
    }
    assert.equal(exit.code, failpointExitCode, `${options.namespace}: the operator died:\n${operator.log()}`);
    const failpoint = /failpoint (\S+) reached/.exec(operator.log())?.[1];
    assert.ok(failpoint && armed.includes(failpoint), `unknown exit:\n${operator.log()}`);
    armed.splice(armed.indexOf(failpoint), 1);
    reached.push(failpoint);
    if (failpoint === options.stopAt) return reached;
    await options.onCrash?.(failpoint);
  }
}

/** Ready=True with the Bootstrapped reason that says the sweep ran, and the recorded key. */
async function settledCredentials(namespace: string) {
  const server = await getTerdutServer(kube.admin, namespace, 'terdut');
  if (conditionOf(server, 'Ready')?.status !== 'True') return undefined;
  if (conditionOf(server, 'Bootstrapped')?.reason !== 'CredentialsVerified') return undefined;
  const ref = server.status.credentialsSecretRef;
  const secret = await getSecret(kube.admin, operatorNamespace, ref.name);
  if (!secret) return undefined;
  return {
    server,
    apiKey: secretValue(secret, ref.key)!,
    keyId: Number(secret.metadata.annotations['terdut.ryuvia.com/api-key-id']),
  };
}

async function reasons(namespace: string): Promise<string[]> {
  return (await listEvents(kube.admin, namespace)).map((e) => e.reason);
}

async function checkpointExists(uid: string): Promise<boolean> {
  const secrets = await listSecrets(kube.admin, operatorNamespace, `terdut.ryuvia.com/owner-uid=${uid}`);
  return secrets.some((s) => s.metadata.labels['terdut.ryuvia.com/secret-role'] === 'bootstrap-checkpoint');
}

/** Deletes the TerdutServer and crash-loops the finalizer until it is gone; then no key may remain. */
async function deleteThroughCrashes(namespace: string, baseUrl: string, armed: string[]): Promise<string[]> {
  const auditor = await auditorOf(kube.admin, namespace, 'terdut', baseUrl);
  const uid = (await getTerdutServer(kube.admin, namespace, 'terdut')).metadata.uid;
  await kubeRequestOk(
    kube.admin,
    'DELETE',
    `/apis/terdut.ryuvia.com/v1alpha1/namespaces/${namespace}/terdutservers/terdut`,
  );
  const reached = await crashLoop({
    namespace,
    armed,
    done: async () => (await getTerdutServer(kube.admin, namespace, 'terdut')) === undefined,
  });
  await assertCredentialInvariant(auditor, baseUrl, `${namespace} deleted`);
  assert.deepEqual(
    await listSecrets(kube.admin, operatorNamespace, `terdut.ryuvia.com/owner-uid=${uid}`),
    [],
    'no operator-namespace Secret of the deleted TerdutServer is left',
  );
  assert.ok((await reasons(namespace)).includes('KeyRevoked'), 'a KeyRevoked event says what was revoked');
  return reached;
}

// About 2 minutes: two server start-ups and some 30 operator restarts.
test(
  'a crash at every step of every branch converges to the invariant: Ready with the recorded key the only valid one; deleted with none',
  { timeout: 600_000 },
  async (t) => {
    const started = Date.now();

    // Server 1: a fresh bootstrap, crashing at every step on the way to Ready.
    const first = await scenario('crash-bootstrap');
    // Server 2: a pod with a token the operator does not hold (token rotation).
    const tokenDir = mkdtempSync(join(tmpdir(), 'terdut-foreign-token-'));
    temporaryDirs.push(tokenDir);
    const tokenFile = join(tokenDir, 'token');
    writeFileSync(tokenFile, 'f'.repeat(64));
    const second = await scenario('crash-token', { TERDUT_BOOTSTRAP_TOKEN_FILE: tokenFile });

    const bootstrapSteps = [
      'finalizer',
      'token-secret',
      'workload',
      'bootstrap',
      'recover',
      'checkpoint',
      'service-account-created',
      'service-account-key-minted',
      'credentials',
      'status',
      'sweep-service-account-key-revoked',
      'sweep-admin-key-revoked',
      'checkpoint-deleted',
    ];
    const tokenSteps = [
      'token-rotated',
      'token-rotation-mark-cleared',
      'checkpoint',
      'service-account-created',
    ];

    const [firstReached, secondReached] = await Promise.all([
      crashLoop({
        namespace: first.namespace,
        armed: bootstrapSteps,
        done: async () => (await settledCredentials(first.namespace)) !== undefined,
      }),
      // Token rotation, then a deletion in the middle of the bootstrap: a
      // checkpoint exists, no credentials do.
      crashLoop({
        namespace: second.namespace,
        armed: tokenSteps,
        onCrash: async (failpoint) => {
          // The kubelet delivers the rotated Secret: the pod now reads the new token.
          if (failpoint === 'token-rotated')
            writeFileSync(
              tokenFile,
              secretValue(await getSecret(kube.admin, second.namespace, 'terdut-bootstrap-token'), 'token')!,
            );
        },
        stopAt: 'service-account-created',
        done: async () => false,
      }),
    ]);
    assert.deepEqual(firstReached, bootstrapSteps, 'every bootstrap step was crashed at, in order');
    const workload = await first.running;
    const ready = (await settledCredentials(first.namespace))!;
    const auditor = await auditorOf(kube.admin, first.namespace, 'terdut', workload.url);
    await assertCredentialInvariant(auditor, workload.url, 'after the bootstrap crashes', ready);
    const admins = (await auditor.users.list()).filter((u) => u.username === 'terdut-operator');
    assert.equal(admins.length, 1, 'no second admin');
    assert.equal(await checkpointExists(ready.server.metadata.uid), false, 'no checkpoint left');
    assert.ok(
      (await reasons(first.namespace)).includes('BootstrapResumed'),
      `a Ready event names how: ${(await reasons(first.namespace)).join(', ')}`,
    );
    t.diagnostic(`bootstrap crashes done after ${Math.round((Date.now() - started) / 1000)} s`);

    // Server 1 again: an admin revokes the recorded key on the server; the
    // next operator's first pass finds it refused (lost-answers.test.ts shows
    // the key verifier noticing it in a running operator). The reissue
    // crashes at each of its steps (adoption included) and ends with the
    // invariant.
    await auditor.serviceAccounts.revokeKey(
      (await auditor.serviceAccounts.findByName('terdut-operator'))!.id,
      ready.keyId,
    );
    const reissueSteps = [
      'credentials-forgotten',
      'recover',
      'checkpoint',
      'service-account-key-minted',
      'credentials',
      'status',
      'sweep-admin-key-revoked',
      'checkpoint-deleted',
    ];
    const reissued = await crashLoop({
      namespace: first.namespace,
      armed: reissueSteps,
      done: async () => {
        const now = await settledCredentials(first.namespace);
        return (
          now !== undefined && now.keyId !== ready.keyId && !(await checkpointExists(now.server.metadata.uid))
        );
      },
    });
    assert.deepEqual(reissued, reissueSteps, 'every reissue step was crashed at, in order');
    const again = (await settledCredentials(first.namespace))!;
    await assertCredentialInvariant(auditor, workload.url, 'after the reissue crashes', again);
    const events = await reasons(first.namespace);
    assert.ok(events.includes('CredentialsRefused'), `a refused key is reported: ${events.join(', ')}`);
    assert.ok(events.includes('CredentialsReissued'), `the reissue is reported: ${events.join(', ')}`);

    // A person deletes the credentials Secret; the verifier is not needed: the watch wakes the pass.
    await kubeRequestOk(
      kube.admin,
      'DELETE',
      `/api/v1/namespaces/${operatorNamespace}/secrets/${again.server.status.credentialsSecretRef.name}`,
    );
    await crashLoop({
      namespace: first.namespace,
      armed: [],
      done: async () => {
        const now = await settledCredentials(first.namespace);
        return now !== undefined && now.keyId !== again.keyId;
      },
    });
    await assertCredentialInvariant(
      auditor,
      workload.url,
      'after the credentials Secret was deleted by hand',
      await settledCredentials(first.namespace),
    );
    assert.ok((await reasons(first.namespace)).includes('CredentialsMissing'));
    t.diagnostic(`reissue crashes done after ${Math.round((Date.now() - started) / 1000)} s`);

    // Deleting a settled server, crashing at each step of the finalizer.
    const finalizerSteps = [
      'finalizer-sweep-service-account-key-revoked',
      'finalizer-recover',
      'finalizer-sweep-admin-key-revoked',
      'finalizer-secrets-deleted',
    ];
    assert.deepEqual(
      await deleteThroughCrashes(first.namespace, workload.url, finalizerSteps),
      finalizerSteps,
      'every finalizer step was crashed at, in order',
    );

    // Server 2: token rotated and picked up, then the bootstrap was stopped
    // right after the service account was created (a checkpoint, no
    // credentials). Deleting now must still revoke everything, using the checkpoint.
    assert.deepEqual(secondReached, tokenSteps, 'every token-rotation step was crashed at');
    const secondWorkload = await second.running;
    assert.ok((await reasons(second.namespace)).includes('TokenRotated'));
    const stopped = await getTerdutServer(kube.admin, second.namespace, 'terdut');
    assert.equal(stopped.status?.credentialsSecretRef, undefined, 'stopped before any credentials');
    assert.ok(await checkpointExists(stopped.metadata.uid), 'stopped with a checkpoint');
    // An admin revokes the checkpointed admin key: the next pass drops the
    // checkpoint and recovers another; stop again right after the adopted
    // account's new key is minted (still no credentials Secret).
    const secondAuditor = await auditorOf(kube.admin, second.namespace, 'terdut', secondWorkload.url);
    const operatorUser = (await secondAuditor.users.list()).find((u) => u.username === 'terdut-operator')!;
    for (const key of await secondAuditor.users.listApiKeys(operatorUser.id))
      await secondAuditor.users.deleteApiKey(operatorUser.id, key.id);
    assert.deepEqual(
      await crashLoop({
        namespace: second.namespace,
        armed: ['checkpoint-dropped', 'service-account-key-minted'],
        stopAt: 'service-account-key-minted',
        done: async () => false,
      }),
      ['checkpoint-dropped', 'service-account-key-minted'],
    );
    await deleteThroughCrashes(second.namespace, secondWorkload.url, [
      'finalizer-sweep-service-account-key-revoked',
      'finalizer-sweep-admin-key-revoked',
    ]);
    t.diagnostic(`all done after ${Math.round((Date.now() - started) / 1000)} s`);
  },
);
