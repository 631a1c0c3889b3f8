/**
 * Every crash window of the reconcile (bootstrap-protocol.md, operator rule
 * 5): a real operator process exits right after one step's API call
 * (TERDUT_OPERATOR_FAILPOINT), a new operator takes over, and the result is
 * always the same: Ready, exactly one service account whose only key on the
 * server is the recorded, working one, no checkpoint left, no second admin.
 *
 * The scenarios run side by side, each in a namespace of its own with a
 * real terdut-server on its own PostgreSQL database.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { TerdutClient } from '../../packages/client/src/index.ts';
import { failpointExitCode } from '../../packages/operator/src/controllers/terdutserver/failpoint.ts';
import { KubeletStandIn, type RunningWorkload } from '../peers/kubelet-standin.ts';
import { kubeRequest } from '../peers/kube.ts';
import { kubeForTests, uniqueNamespace, type KubeForTests } from '../peers/peers-for-tests.ts';
import { createTestPostgres } from '../support/databases.ts';
import {
  createSecret,
  createTerdutServer,
  ensureNamespace,
  getSecret,
  installTerdutCrd,
  listSecrets,
  operatorNamespace,
  secretValue,
  waitForCondition,
  waitForDeployment,
} from './support/operator.ts';
import {
  startInProcessOperator,
  startOperatorProcess,
  type OperatorProcess,
} from './support/operator-process.ts';

/**
 * The workload step and every step of the bootstrap that ends with a call,
 * in reconcile order. (`recover` is the seed-incident path, covered in
 * bootstrap.test.ts.) Each scenario starts a real terdut-server, so they run
 * three at a time: ten server start-ups at once starve a 2-core machine.
 */
const failpoints = [
  'workload',
  'bootstrap',
  'checkpoint',
  'service-account',
  'credentials',
  'status',
  'admin-key-revoked',
  'checkpoint-deleted',
];

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

after(async () => {
  for (const process of processes) await process.stop();
  await standIn?.stop();
  for (const database of databases) await database.drop();
  await kube?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `fn` over `items`, at most `limit` at a time. */
async function mapLimited<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** Runs the Deployment once it exists (the kubelet's part), unless `done()` first. */
async function runWhenCreated(namespace: string, done: () => boolean): Promise<RunningWorkload | undefined> {
  for (;;) {
    const res = await kubeRequest(
      kube.admin,
      'GET',
      `/apis/apps/v1/namespaces/${namespace}/deployments/terdut`,
    );
    if (res.status === 200) return standIn.runDeployment(namespace, 'terdut', { readyTimeoutMs: 120_000 });
    if (done()) return undefined;
    await sleep(200);
  }
}

// Eight real terdut-server start-ups dominate: about 5.5 minutes on the 2-core machine.
test(
  'killing the operator right after any single step converges to one service account, one recorded key, no checkpoint, no second admin',
  { timeout: 900_000 },
  async () => {
    const scenarios = await mapLimited(failpoints, 3, async (failpoint) => {
      const namespace = await uniqueNamespace(kube.admin, `crash-${failpoint}`.slice(0, 40));
      const database = await createTestPostgres();
      databases.push(database);
      await createSecret(kube.admin, namespace, 'db', { DATABASE_URL: database.url });
      await createTerdutServer(kube.admin, namespace, 'terdut', { database: { secretRef: { name: 'db' } } });
      const operator = startOperatorProcess({
        kubeconfigPath: kube.kubeconfigPath,
        standIn,
        identity: `crash-${failpoint}`,
        failpoint,
        watchNamespaces: [namespace],
        leaseName: `crash-${namespace}`,
      });
      processes.push(operator);
      let exited = false;
      const exit = operator.child.exited.then((result) => {
        exited = true;
        return result;
      });
      const workload = runWhenCreated(namespace, () => exited).then((running) => {
        operator.syncServiceUrls();
        return running;
      });
      const timeout = sleep(120_000).then(() => ({ code: -1, signal: null }));
      const result = await Promise.race([exit, timeout]);
      await workload;
      assert.equal(
        result.code,
        failpointExitCode,
        `the operator with failpoint ${failpoint} did not stop there:\n${operator.log()}`,
      );
      return { failpoint, namespace };
    });

    // A new operator (no failpoint) takes over every namespace.
    const successor = await startInProcessOperator({
      kubeconfigPath: kube.kubeconfigPath,
      standIn,
      watchNamespaces: scenarios.map((s) => s.namespace),
    });
    try {
      await mapLimited(scenarios, 3, async ({ failpoint, namespace }) => {
        if (!standIn.workload(namespace, 'terdut')) {
          await waitForDeployment(kube.admin, namespace, 'terdut');
          await standIn.runDeployment(namespace, 'terdut', { readyTimeoutMs: 120_000 });
        }
        const ready = await waitForCondition(
          kube.admin,
          namespace,
          'terdut',
          { type: 'Ready', status: 'True' },
          180_000,
        );
        const ref = ready.status.credentialsSecretRef;
        const credentials = await getSecret(kube.admin, operatorNamespace, ref.name);
        const apiKey = secretValue(credentials, ref.key)!;
        const client = new TerdutClient({
          baseUrl: standIn.workload(namespace, 'terdut')!.url,
          token: apiKey,
        });
        const me = await client.users.me();
        assert.equal(me.user.username, 'service:terdut-operator', `${failpoint}: the recorded key works`);
        assert.deepEqual(
          (await client.serviceAccounts.list()).map((a) => a.name),
          ['terdut-operator'],
          `${failpoint}: exactly one service account`,
        );
        // A key minted but never recorded (a crash before the credentials
        // Secret) would stay valid forever; adoption must revoke it.
        const account = (await client.serviceAccounts.findByName('terdut-operator'))!;
        assert.deepEqual(
          (await client.serviceAccounts.listKeys(account.id)).map((key) => key.id),
          [Number(credentials.metadata.annotations['terdut.ryuvia.com/api-key-id'])],
          `${failpoint}: the service account has exactly one key on the server, the recorded one`,
        );
        const admins = (await client.users.list()).filter((u) => u.username === 'terdut-operator');
        assert.equal(admins.length, 1, `${failpoint}: no second admin`);
        const secrets = await listSecrets(
          kube.admin,
          operatorNamespace,
          `terdut.ryuvia.com/owner-uid=${ready.metadata.uid}`,
        );
        assert.deepEqual(
          secrets.map((s) => s.metadata.labels['terdut.ryuvia.com/secret-role']),
          ['credentials'],
          `${failpoint}: one credentials Secret and no checkpoint`,
        );
      });
    } finally {
      await successor.stop();
    }
  },
);
