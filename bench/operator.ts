/**
 * Operator benchmark (issue 5): N TerdutServers (default 100) on a real
 * kube-apiserver + etcd, each bootstrapped against a real terdut-server with
 * a PostgreSQL database of its own, the operator in a child process. Prints
 * time from creation to all Ready, Kubernetes API requests per reconcile,
 * steady-state requests per minute (reads vs writes) and the operator's peak
 * RSS. Figures, not assertions; see bench/README.md ("Operator").
 *
 *   npm run bench:operator -- [--count 100] [--namespaces 4] [--steady-seconds 60]
 *                             [--timeout-minutes 20] [--concurrency N]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startKubeControlPlane, kubeRequestOk, type KubeControlPlane } from '../test/peers/kube.ts';
import { installThirdPartyCrds } from '../test/peers/crds.ts';
import {
  createSecret,
  createTerdutServer,
  ensureNamespace,
  installTerdutCrd,
  operatorNamespace,
} from '../test/operator/support/operator.ts';
import { openPostgres } from '../packages/server/src/db/database.ts';
import { migrate } from '../packages/server/src/db/migrate.ts';
import { provideBenchPostgres, type BenchPostgres } from './support/postgres.ts';
import { describeMachine } from './support/machine.ts';
import { InProcessKubelet } from '../test/support/in-process-kubelet.ts';
import { startBenchOperator, type BenchOperator } from '../test/support/operator-child.ts';
import {
  delta,
  parsePrometheusText,
  readsAndWrites,
  sumBy,
  total,
  type Sample,
} from '../test/support/operator-metrics.ts';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '100' },
    namespaces: { type: 'string', default: '4' },
    'steady-seconds': { type: 'string', default: '60' },
    'timeout-minutes': { type: 'string', default: '20' },
    concurrency: { type: 'string' },
  },
});
const count = Number(values.count);
const namespaceCount = Math.min(Number(values.namespaces), count);
const steadySeconds = Number(values['steady-seconds']);
const timeoutMs = Number(values['timeout-minutes']) * 60_000;
for (const [flag, value] of Object.entries({
  count,
  namespaces: namespaceCount,
  'steady-seconds': steadySeconds,
  'timeout-minutes': timeoutMs,
})) {
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${flag} must be a whole number ≥ 1`);
}

const started = performance.now();
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
const log = (message: string) => console.log(`[${elapsed()}] ${message}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let kube: KubeControlPlane | undefined;
let postgres: BenchPostgres | undefined;
let kubelet: InProcessKubelet | undefined;
let operator: BenchOperator | undefined;
const dir = mkdtempSync(join(tmpdir(), 'terdut-bench-operator-'));

async function cleanup(): Promise<void> {
  await operator?.stop().catch(() => {});
  await kubelet?.stop().catch(() => {});
  await postgres?.stop().catch(() => {});
  await kube?.stop().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
}

// Everything is bounded: past the deadline, clean up and fail.
const deadline = setTimeout(() => {
  console.error(`bench:operator: overall timeout of ${values['timeout-minutes']} min reached; stopping`);
  if (operator) console.error(`operator peak RSS so far: ${operator.memory().peakMiB.toFixed(0)} MiB`);
  void cleanup().finally(() => process.exit(2));
}, timeoutMs);

interface Snapshot {
  operator: Sample[];
  apiserver: Sample[];
}
async function snapshot(): Promise<Snapshot> {
  const [operatorText, apiserverRes] = await Promise.all([
    operator!.scrape(),
    kube!.request('GET', '/metrics', { timeoutMs: 30_000 }),
  ]);
  return { operator: parsePrometheusText(operatorText), apiserver: parsePrometheusText(apiserverRes.text) };
}
const operatorByVerb = (s: Snapshot) =>
  sumBy(s.operator, 'terdut_operator_kube_requests_total', (l) => l.verb!);
const operatorByVerbResource = (s: Snapshot) =>
  sumBy(s.operator, 'terdut_operator_kube_requests_total', (l) => `${l.verb} ${l.resource}`);
const reconciles = (s: Snapshot) =>
  total(sumBy(s.operator, 'terdut_operator_reconcile_total', (l) => l.result!));
const apiserverByVerb = (s: Snapshot) => sumBy(s.apiserver, 'apiserver_request_total', (l) => l.verb!);

async function main(): Promise<void> {
  const machine = describeMachine();
  log(
    `machine: ${machine.cores} cores (${machine.cpuModel}), ${machine.memoryTotal} RAM (${machine.memoryFree} free), Node ${machine.node}, load ${machine.loadAverage}`,
  );
  log(`${count} TerdutServers in ${namespaceCount} namespaces; steady-state window ${steadySeconds} s`);

  kube = await startKubeControlPlane();
  await installTerdutCrd(kube.admin);
  await installThirdPartyCrds(kube.admin);
  await ensureNamespace(kube.admin, operatorNamespace);
  const namespaces = Array.from({ length: namespaceCount }, (_, i) => `bench-op-${i}`);
  for (const namespace of namespaces) await ensureNamespace(kube.admin, namespace);
  log(`kube-apiserver ${kube.server} ready, CRDs installed`);

  // One migrated template database, copied per server: a migration run per
  // server would dominate the run without telling anything about the operator.
  postgres = await provideBenchPostgres();
  const template = await postgres.createDatabase('bench_op_template');
  const templateDb = await openPostgres(template.url, { max: 1 });
  await migrate(templateDb);
  await templateDb.close();
  const templateName = new URL(template.url).pathname.slice(1);
  const maintenance = new pg.Client({ connectionString: postgres.url });
  await maintenance.connect();
  const databaseUrls: string[] = [];
  for (let i = 0; i < count; i++) {
    const name = `${templateName.replace('template', 'srv')}_${i}`;
    await maintenance.query(`CREATE DATABASE ${name} TEMPLATE ${templateName}`);
    const url = new URL(postgres.url);
    url.pathname = `/${name}`;
    databaseUrls.push(url.toString());
  }
  await maintenance.end();
  const at = (i: number) => ({ namespace: namespaces[i % namespaceCount]!, name: `terdut-${i}` });
  for (let i = 0; i < count; i++)
    await createSecret(kube.admin, at(i).namespace, `${at(i).name}-db`, { DATABASE_URL: databaseUrls[i]! });
  log(`${count} databases (${postgres.origin}, ${postgres.durability}) and DATABASE_URL Secrets ready`);

  const overridesFile = join(dir, 'server-urls');
  kubelet = new InProcessKubelet(kube.admin, overridesFile);
  kubelet.start();
  operator = await startBenchOperator({
    kubeconfigPath: kube.kubeconfigPath,
    overridesFile,
    dir,
    concurrency: values.concurrency ? Number(values.concurrency) : undefined,
  });
  log(`operator pid ${operator.pid} ready (RSS ${operator.memory().currentMiB.toFixed(0)} MiB)`);
  await sleep(2000);
  const beforeRollout = await snapshot();

  const createStarted = performance.now();
  const seconds = (from: number) => (performance.now() - from) / 1000;
  for (let i = 0; i < count; i += 8) {
    await Promise.all(
      Array.from({ length: Math.min(8, count - i) }, (_, j) =>
        createTerdutServer(kube!.admin, at(i + j).namespace, at(i + j).name, {
          database: { secretRef: { name: `${at(i + j).name}-db` } },
        }),
      ),
    );
  }
  const createSeconds = seconds(createStarted);
  log(`${count} TerdutServers created in ${createSeconds.toFixed(1)} s`);

  const milestones: Record<string, number> = {};
  let lastProgress = 0;
  for (;;) {
    const list = await kubeRequestOk<{ items: any[] }>(
      kube.admin,
      'GET',
      '/apis/terdut.ryuvia.com/v1alpha1/terdutservers',
    );
    const ready = list.items.filter((s) =>
      s.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True'),
    ).length;
    for (const [label, threshold] of [
      ['first', 1],
      ['half', Math.ceil(count / 2)],
      ['all', count],
    ] as const)
      if (ready >= threshold && milestones[label] === undefined) milestones[label] = seconds(createStarted);
    if (ready >= count) break;
    if (performance.now() - lastProgress > 15_000) {
      lastProgress = performance.now();
      log(
        `${ready}/${count} Ready, ${kubelet.running} servers running, operator RSS ${operator.memory().currentMiB.toFixed(0)} MiB`,
      );
      if (kubelet.errors.length) log(`kubelet errors so far: ${kubelet.errors.slice(-3).join(' | ')}`);
    }
    await sleep(500);
  }
  const afterRollout = await snapshot();
  log(`all ${count} Ready after ${milestones.all!.toFixed(1)} s`);

  // Steady state: the benchmark's own pollers are stopped, so what reaches
  // the API server now is the operator (plus the API server's own
  // loopback requests, which its counter includes).
  kubelet.pause();
  // All Ready is not all done: reconciles woken by the last status writes
  // may still be queued. Settled = work queue empty and no reconcile for
  // 15 s (at most 3 min); the tail is reported on its own.
  const settleStarted = performance.now();
  let settleLast = parsePrometheusText(await operator.scrape());
  let quietPolls = 0;
  while (quietPolls < 3 && seconds(settleStarted) < 180) {
    await sleep(5000);
    const now = parsePrometheusText(await operator.scrape());
    const depth = total(sumBy(now, 'terdut_operator_workqueue_depth', () => 'all'));
    const same =
      reconciles({ operator: now, apiserver: [] }) === reconciles({ operator: settleLast, apiserver: [] });
    quietPolls = same && depth === 0 ? quietPolls + 1 : 0;
    settleLast = now;
  }
  const settleSeconds = seconds(settleStarted) - 15;
  const steadyStart = await snapshot();
  const steadyStarted = performance.now();
  // Slices of 10 s show whether leftover work is still draining or keeps coming.
  const slices: string[] = [];
  let sliceStart = steadyStart.operator;
  for (let slice = 0; slice < Math.ceil(steadySeconds / 10); slice++) {
    await sleep(Math.min(10, steadySeconds - slice * 10) * 1000);
    const now = parsePrometheusText(await operator.scrape());
    const was = { operator: sliceStart, apiserver: [] };
    const is = { operator: now, apiserver: [] };
    const split = readsAndWrites(delta(operatorByVerb(was), operatorByVerb(is)));
    slices.push(`${reconciles(is) - reconciles(was)} reconciles/${split.reads} reads/${split.writes} writes`);
    sliceStart = now;
  }
  const steadyEnd = await snapshot();
  const steadyMinutes = seconds(steadyStarted) / 60;
  const memory = operator.memory();

  // Report.
  const rolloutByVerb = delta(operatorByVerb(beforeRollout), operatorByVerb(afterRollout));
  const rolloutRequests = total(rolloutByVerb);
  const rolloutReconciles = reconciles(afterRollout) - reconciles(beforeRollout);
  const steadyByVerb = delta(operatorByVerb(steadyStart), operatorByVerb(steadyEnd));
  const steadySplit = readsAndWrites(steadyByVerb);
  const apiSteadyByVerb = delta(apiserverByVerb(steadyStart), apiserverByVerb(steadyEnd));
  const apiSteadySplit = readsAndWrites(apiSteadyByVerb);
  const perMinute = (n: number) => (n / steadyMinutes).toFixed(1);
  const verbs = (m: Map<string, number>) =>
    [...m]
      .filter(([, n]) => n > 0)
      .sort((a, b) => b[1] - a[1])
      .map(([v, n]) => `${v} ${n}`)
      .join(', ');

  console.log('\nbench:operator results');
  console.table({
    TerdutServers: { value: `${count} in ${namespaceCount} namespaces` },
    'creation (POSTs) took': { value: `${createSeconds.toFixed(1)} s` },
    'first Ready after creation began': { value: `${milestones.first!.toFixed(1)} s` },
    'half Ready': { value: `${milestones.half!.toFixed(1)} s` },
    'all Ready': { value: `${milestones.all!.toFixed(1)} s` },
    'reconciles during rollout': { value: String(rolloutReconciles) },
    'operator kube requests during rollout': { value: String(rolloutRequests) },
    'kube requests per reconcile': { value: (rolloutRequests / rolloutReconciles).toFixed(2) },
    'kube requests per TerdutServer': { value: (rolloutRequests / count).toFixed(1) },
    [`steady state, operator (${steadySeconds} s)`]: {
      value: `${perMinute(total(steadyByVerb))}/min (reads ${perMinute(steadySplit.reads)}, writes ${perMinute(steadySplit.writes)})`,
    },
    'steady state, kube-apiserver counter (all clients)': {
      value: `${perMinute(total(apiSteadyByVerb))}/min (reads ${perMinute(apiSteadySplit.reads)}, writes ${perMinute(apiSteadySplit.writes)})`,
    },
    'operator peak RSS (VmHWM)': {
      value: `${memory.peakMiB.toFixed(0)} MiB (now ${memory.currentMiB.toFixed(0)} MiB)`,
    },
    'tail after all Ready (reconciles until quiet)': {
      value: `${reconciles(steadyStart) - reconciles(afterRollout)} reconciles, quiet after ${settleSeconds.toFixed(0)} s`,
    },
    'reconciles in steady state': { value: String(reconciles(steadyEnd) - reconciles(steadyStart)) },
    // Not the operator: this process holds the in-process terdut-servers.
    [`benchmark process RSS (${count} terdut-servers)`]: {
      value: `${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`,
    },
  });
  console.log(`rollout, operator requests by verb: ${verbs(rolloutByVerb)}`);
  console.log(
    `rollout, by verb and resource: ${verbs(delta(operatorByVerbResource(beforeRollout), operatorByVerbResource(afterRollout)))}`,
  );
  console.log(
    `steady state, operator by verb and resource: ${verbs(delta(operatorByVerbResource(steadyStart), operatorByVerbResource(steadyEnd))) || 'none'}`,
  );
  console.log(`steady state per 10 s slice: ${slices.join('; ')}`);
  console.log(
    `steady state, kube-apiserver apiserver_request_total by verb: ${verbs(apiSteadyByVerb) || 'none'}`,
  );
  if (kubelet.errors.length)
    console.log(`kubelet retries: ${kubelet.errors.length} (${kubelet.errors.slice(0, 3).join(' | ')})`);
}

try {
  await main();
  await cleanup();
  clearTimeout(deadline);
} catch (error) {
  console.error(`bench:operator failed: ${(error as Error).stack ?? String(error)}`);
  if (operator) console.error(`operator log tail in ${operator.logPath}`);
  await cleanup();
  clearTimeout(deadline);
  process.exitCode = 1;
}
