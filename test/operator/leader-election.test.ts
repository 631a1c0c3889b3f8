/**
 * Two real operator processes share one Lease: one leads, the other waits;
 * killing the leader (SIGKILL, no release) lets the other take over within
 * the lease duration and finish a bootstrap the first one left pending; a
 * graceful stop (SIGTERM) hands the lease back at once.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
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
  getTerdutServer,
  installTerdutCrd,
  operatorNamespace,
  waitForCondition,
  waitForDeployment,
} from './support/operator.ts';
import { startOperatorProcess, type OperatorProcess } from './support/operator-process.ts';
import { StallingProxy } from './support/stalling-proxy.ts';
import { KubeClient } from '../../packages/operator/src/runtime/kube-client.ts';
import { LeaderElector } from '../../packages/operator/src/runtime/leader-election.ts';
import { KubeConfig } from '@kubernetes/client-node';

let kube: KubeForTests;
let standIn: KubeletStandIn;
const processes: OperatorProcess[] = [];
let database: { drop(): Promise<void> } | undefined;

before(async () => {
  kube = await kubeForTests();
  await installTerdutCrd(kube.admin);
  await ensureNamespace(kube.admin, operatorNamespace);
  standIn = new KubeletStandIn(kube.admin);
});
after(async () => {
  for (const process of processes) await process.stop();
  await standIn?.stop();
  await database?.drop();
  await kube?.stop();
});

async function leaseHolder(leaseName: string): Promise<any> {
  const res = await kubeRequest(
    kube.admin,
    'GET',
    `/apis/coordination.k8s.io/v1/namespaces/${operatorNamespace}/leases/${leaseName}`,
  );
  return res.status === 200 ? res.json<any>().spec : undefined;
}

test(
  'one operator leads; when it is killed the other takes over and finishes the pending bootstrap',
  { timeout: 240_000 },
  async () => {
    const namespace = await uniqueNamespace(kube.admin, 'op-leader');
    const leaseName = `leader-${namespace}`;
    const start = (identity: string) => {
      const operator = startOperatorProcess({
        kubeconfigPath: kube.kubeconfigPath,
        standIn,
        identity,
        watchNamespaces: [namespace],
        leaseName,
      });
      processes.push(operator);
      return operator;
    };

    const first = start('leader-a');
    await waitUntil(async () => (await leaseHolder(leaseName))?.holderIdentity === first.identity, {
      timeoutMs: 30_000,
      describe: () => `the first operator did not take the Lease:\n${first.log()}`,
    });
    const second = start('leader-b');
    await new Promise((resolve) => setTimeout(resolve, 5000));
    assert.equal(
      (await leaseHolder(leaseName)).holderIdentity,
      first.identity,
      'the standby does not steal a renewed lease',
    );

    // The leader creates the workload; the bootstrap is still pending (no replica yet) when it dies.
    database = await createTestPostgres();
    await createSecret(kube.admin, namespace, 'db', { DATABASE_URL: (database as any).url });
    await createTerdutServer(kube.admin, namespace, 'terdut', { database: { secretRef: { name: 'db' } } });
    await waitForDeployment(kube.admin, namespace, 'terdut');
    const pending = await getTerdutServer(kube.admin, namespace, 'terdut');
    assert.notEqual(conditionOf(pending, 'Bootstrapped')?.status, 'True');
    first.kill();
    const killedAt = Date.now();

    await standIn.runDeployment(namespace, 'terdut');
    second.syncServiceUrls();
    await waitForCondition(kube.admin, namespace, 'terdut', { type: 'Ready', status: 'True' }, 90_000);
    const lease = await leaseHolder(leaseName);
    assert.equal(lease.holderIdentity, second.identity);
    assert.ok(lease.leaseTransitions >= 1);
    assert.ok(Date.now() - killedAt >= 10_000, 'the standby waited for the killed leader’s lease to expire');

    // SIGTERM: the leader releases the lease instead of letting it run out.
    await second.stop();
    const released = await leaseHolder(leaseName);
    assert.equal(released.holderIdentity, '', 'a graceful stop hands the lease back');
    const events = await kubeRequestOk<any>(
      kube.admin,
      'GET',
      `/apis/events.k8s.io/v1/namespaces/${namespace}/events`,
    );
    assert.ok(events.items.some((e: any) => e.reason === 'BootstrapSucceeded'));
  },
);

test('a leader whose connection to the API server stalls stops acting within the renew deadline, before another replica can take the lease', async (t) => {
  const proxy = await StallingProxy.start(kube.admin.server);
  t.after(() => proxy.stop());
  const base64 = (pem: string | undefined) => Buffer.from(pem ?? '').toString('base64');
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [
      { name: 'stalling', server: `https://127.0.0.1:${proxy.port}`, caData: base64(kube.admin.ca) },
    ],
    users: [{ name: 'admin', certData: base64(kube.admin.cert), keyData: base64(kube.admin.key) }],
    contexts: [{ name: 'stalling', cluster: 'stalling', user: 'admin' }],
    currentContext: 'stalling',
  });
  const name = `stall-${Date.now()}`;
  const seen: string[] = [];
  const elector = (identity: string, client: KubeClient) =>
    new LeaderElector({
      client,
      namespace: operatorNamespace,
      name,
      identity,
      leaseDurationMs: 4000,
      renewDeadlineMs: 2000,
      retryPeriodMs: 500,
      onStartedLeading: () => seen.push(`${identity} leads`),
      onLost: () => seen.push(`${identity} lost`),
    });
  const first = elector('first', new KubeClient(config));
  first.start();
  t.after(() => first.release());
  await waitUntil(async () => first.leading, { timeoutMs: 10_000, describe: () => 'first did not lead' });
  const second = elector('second', KubeClient.load(kube.kubeconfigPath));
  second.start();
  t.after(() => second.release());

  proxy.stall();
  await waitUntil(async () => seen.includes('second leads'), {
    timeoutMs: 20_000,
    describe: () => `second never took the lease (${seen.join(', ')})`,
  });
  assert.deepEqual(seen, ['first leads', 'first lost', 'second leads'], 'never two leaders at once');
});
