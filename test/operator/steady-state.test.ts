/**
 * A settled operator makes no write requests (issue 5): with 50 Ready
 * TerdutServers and nothing changing, it writes nothing to the Kubernetes
 * API for 60 s except renewing its own leader-election Lease.
 *
 * Its request budget per minute, with N settled TerdutServers and a key
 * check interval of I seconds: to the Kubernetes API, no write but the Lease
 * renewals and no read but the Lease's and the watches' own; to the
 * terdut-servers, only the key checks, GET /api/me, about N × 60 / I
 * (jittered; here 50 servers, I = 30 s: about 100, at most 150 allowed).
 * The short interval puts the checks inside the window, so the test also
 * shows that verifying the recorded keys writes nothing.
 *
 * 50 servers fit because they are set up the way bench/operator.ts does it:
 * every Deployment the operator creates is answered by a real terdut-server
 * (`buildApp`) inside this test process, on a PostgreSQL database of its own
 * copied from one migrated template, and reached by the operator through its
 * `--server-url-overrides-file`. The operator is the real `main.ts` in a
 * child process (leader election on, as deployed), and its requests are
 * counted from its own /metrics and cross-checked against kube-apiserver's.
 *
 * The control plane is this file's own, not the shared one: the in-process
 * kubelet answers Deployments cluster-wide and the operator watches every
 * namespace, so on a shared control plane other files' objects would be
 * started here and reconciled by this operator.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startKubeControlPlane, kubeRequestOk, type KubeControlPlane } from '../peers/kube.ts';
import { installThirdPartyCrds } from '../peers/crds.ts';
import { openPostgres } from '../../packages/server/src/db/database.ts';
import { migrate } from '../../packages/server/src/db/migrate.ts';
import { writeVerbs, type Verb } from '../../packages/operator/src/runtime/kube-client.ts';
import {
  createSecret,
  createTerdutServer,
  ensureNamespace,
  installTerdutCrd,
  operatorNamespace,
} from './support/operator.ts';
import { InProcessKubelet } from '../support/in-process-kubelet.ts';
import { startBenchOperator, type BenchOperator } from '../support/operator-child.ts';
import { delta, parsePrometheusText, sumBy, total, type Sample } from '../support/operator-metrics.ts';

const count = 50;
const windowSeconds = 60;
const keyCheckIntervalSeconds = 30;
const namespace = 'op-steady';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let kube: KubeControlPlane | undefined;
let kubelet: InProcessKubelet | undefined;
let operator: BenchOperator | undefined;
let dir: string | undefined;
const databaseNames: string[] = [];
const prefix = `terdut_steady_${randomBytes(4).toString('hex')}`;

function adminDatabaseUrl(): string {
  const url = process.env.TERDUT_TEST_DATABASE_URL;
  if (!url)
    throw new Error(
      'TERDUT_TEST_DATABASE_URL is not set; run tests with npm test (its global setup starts PostgreSQL)',
    );
  return url;
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'terdut-steady-state-'));
  kube = await startKubeControlPlane();
  await installTerdutCrd(kube.admin);
  await installThirdPartyCrds(kube.admin);
  await ensureNamespace(kube.admin, operatorNamespace);
  await ensureNamespace(kube.admin, namespace);

  // One migrated template, copied per server: 50 migration runs would cost
  // minutes and say nothing about the operator.
  const adminUrl = adminDatabaseUrl();
  const maintenance = new pg.Client({ connectionString: adminUrl });
  await maintenance.connect();
  try {
    const template = `${prefix}_template`;
    await maintenance.query(`CREATE DATABASE ${template}`);
    databaseNames.push(template);
    const templateUrl = new URL(adminUrl);
    templateUrl.pathname = `/${template}`;
    const templateDb = await openPostgres(templateUrl.toString(), { max: 1 });
    await migrate(templateDb);
    await templateDb.close();
    for (let i = 0; i < count; i++) {
      const name = `${prefix}_${i}`;
      await maintenance.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
      databaseNames.push(name);
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      await createSecret(kube.admin, namespace, `steady-${i}-db`, { DATABASE_URL: url.toString() });
    }
  } finally {
    await maintenance.end();
  }
});

after(async () => {
  await operator?.stop().catch(() => {});
  await kubelet?.stop().catch(() => {});
  if (databaseNames.length) {
    const maintenance = new pg.Client({ connectionString: adminDatabaseUrl() });
    await maintenance.connect();
    for (const name of databaseNames.reverse())
      await maintenance.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
    await maintenance.end();
  }
  await kube?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const readVerbs = new Set(['GET', 'LIST', 'WATCH', 'WATCHLIST', 'CONNECT']);

interface Snapshot {
  operator: Sample[];
  apiserver: Sample[];
}
async function snapshot(): Promise<Snapshot> {
  const [operatorText, apiserver] = await Promise.all([
    operator!.scrape(),
    kube!.request('GET', '/metrics', { timeoutMs: 30_000 }),
  ]);
  return { operator: parsePrometheusText(operatorText), apiserver: parsePrometheusText(apiserver.text) };
}
/** The operator's own count of its write requests, by `verb resource`. */
const operatorWrites = (s: Snapshot) =>
  sumBy(
    s.operator,
    'terdut_operator_kube_requests_total',
    (l) => `${l.verb} ${l.resource}`,
    (l) => writeVerbs.has(l.verb as Verb),
  );
/** kube-apiserver's count of write requests from every client, by `VERB resource`. */
const apiserverWrites = (s: Snapshot) =>
  sumBy(
    s.apiserver,
    'apiserver_request_total',
    (l) => `${l.verb} ${l.resource}${l.subresource ? `/${l.subresource}` : ''}`,
    (l) => !readVerbs.has(l.verb!),
  );
const reconciles = (s: Snapshot) => total(sumBy(s.operator, 'terdut_operator_reconcile_total', () => 'all'));
const nonZero = (m: Map<string, number>) => Object.fromEntries([...m].filter(([, n]) => n > 0));
const isLease = (key: string) => key.endsWith(' leases');
const withoutLeases = (m: Map<string, number>) =>
  Object.fromEntries(Object.entries(nonZero(m)).filter(([key]) => !isLease(key)));

test(
  `with ${count} Ready TerdutServers the operator makes no write requests but its Lease renewals for ${windowSeconds} s`,
  { timeout: 10 * 60_000 },
  async (t) => {
    const started = performance.now();
    const seconds = () => ((performance.now() - started) / 1000).toFixed(1);
    const overridesFile = join(dir!, 'server-urls');
    kubelet = new InProcessKubelet(kube!.admin, overridesFile);
    kubelet.start();
    operator = await startBenchOperator({
      kubeconfigPath: kube!.kubeconfigPath,
      overridesFile,
      dir: dir!,
      extraArgs: ['--key-check-interval', String(keyCheckIntervalSeconds)],
    });

    for (let i = 0; i < count; i += 8) {
      await Promise.all(
        Array.from({ length: Math.min(8, count - i) }, (_, j) =>
          createTerdutServer(kube!.admin, namespace, `steady-${i + j}`, {
            database: { secretRef: { name: `steady-${i + j}-db` } },
          }),
        ),
      );
    }

    const readyDeadline = performance.now() + 5 * 60_000;
    let ready = 0;
    while (ready < count) {
      assert.ok(
        performance.now() < readyDeadline,
        `only ${ready}/${count} TerdutServers Ready after 5 min; kubelet errors: ${kubelet.errors.slice(-3).join(' | ')}; operator log: ${operator.logPath}`,
      );
      await sleep(1000);
      const list = await kubeRequestOk<{
        items: { status?: { conditions?: { type: string; status: string }[] } }[];
      }>(kube!.admin, 'GET', `/apis/terdut.ryuvia.com/v1alpha1/namespaces/${namespace}/terdutservers`);
      ready = list.items.filter((s) =>
        s.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      ).length;
    }
    t.diagnostic(`all ${count} Ready after ${seconds()} s`);

    // From here on only the operator (and the API server itself) talks to
    // the API server. All Ready is not all done: reconciles woken by the last
    // status writes may still be queued, so wait, as the benchmark does, for
    // an empty work queue and no reconcile for 15 s.
    kubelet.pause();
    const settleDeadline = performance.now() + 3 * 60_000;
    let last = parsePrometheusText(await operator.scrape());
    for (let quietPolls = 0; quietPolls < 3;) {
      assert.ok(
        performance.now() < settleDeadline,
        'the operator did not go quiet within 3 min of all Ready',
      );
      await sleep(5000);
      const now = parsePrometheusText(await operator.scrape());
      const depth = total(sumBy(now, 'terdut_operator_workqueue_depth', () => 'all'));
      const same =
        reconciles({ operator: now, apiserver: [] }) === reconciles({ operator: last, apiserver: [] });
      quietPolls = same && depth === 0 ? quietPolls + 1 : 0;
      last = now;
    }
    t.diagnostic(`operator quiet after ${seconds()} s; observing for ${windowSeconds} s`);

    const windowStart = await snapshot();
    await sleep(windowSeconds * 1000);
    const windowEnd = await snapshot();

    const byOperator = delta(operatorWrites(windowStart), operatorWrites(windowEnd));
    const byAnyone = delta(apiserverWrites(windowStart), apiserverWrites(windowEnd));
    const reconcileCount = reconciles(windowEnd) - reconciles(windowStart);
    t.diagnostic(
      `window: ${reconcileCount} reconciles; operator writes ${JSON.stringify(nonZero(byOperator))}; ` +
        `kube-apiserver writes (all clients) ${JSON.stringify(nonZero(byAnyone))}; total ${seconds()} s`,
    );

    assert.deepEqual(withoutLeases(byOperator), {}, 'operator write requests other than its Lease');
    // Proves the counter is live: the leader renews its Lease every few seconds.
    assert.ok((byOperator.get('update leases') ?? 0) > 0, 'the operator renewed its Lease during the window');
    // The operator's counter sees only requests made through its client; the
    // API server sees every write, by anyone, to anything but Leases.
    assert.deepEqual(withoutLeases(byAnyone), {}, 'writes the API server received, other than Leases');

    // Reads: nothing but the Lease's own and the watches.
    const readsBy = (x: Snapshot) =>
      sumBy(
        x.operator,
        'terdut_operator_kube_requests_total',
        (l) => `${l.verb} ${l.resource}`,
        (l) => (l.verb === 'get' || l.verb === 'list') && l.resource !== 'leases',
      );
    assert.deepEqual(
      nonZero(delta(readsBy(windowStart), readsBy(windowEnd))),
      {},
      'operator reads other than its Lease',
    );
    // To the terdut-servers: the key checks, within their budget, and nothing else.
    const serverRequests = delta(
      sumBy(windowStart.operator, 'terdut_operator_server_requests_total', (l) => `${l.operation} ${l.code}`),
      sumBy(windowEnd.operator, 'terdut_operator_server_requests_total', (l) => `${l.operation} ${l.code}`),
    );
    const checks = serverRequests.get('GET /api/me 200') ?? 0;
    t.diagnostic(`terdut-server requests in the window: ${JSON.stringify(nonZero(serverRequests))}`);
    assert.deepEqual(Object.keys(nonZero(serverRequests)), checks > 0 ? ['GET /api/me 200'] : []);
    const budget = Math.ceil((count * windowSeconds) / keyCheckIntervalSeconds) + count;
    assert.ok(
      checks > 0 && checks <= budget,
      `${checks} key checks in ${windowSeconds} s; budget 1..${budget}`,
    );
  },
);
