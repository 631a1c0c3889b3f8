/**
 * `npm run bench:intake-alerta`: terdut-server's Alertmanager intake side by
 * side with a peer's, Alerta (PyPI `alerta-server`, its Prometheus webhook
 * `POST /api/webhooks/prometheus`, gunicorn with 4 sync workers), both on
 * the same PostgreSQL, each in a database of its own, both authenticating
 * every request with an API key. The same notifications and senders as
 * `bench:intake` (bench/support/intake-load.ts); the passes are interleaved
 * (terdut's scenario, then Alerta's same scenario, then the next), so a
 * change in the machine's load falls on both. Prints terdut/Alerta per
 * scenario against the goal of 10×, and each server's memory when started
 * and at the end (RSS and PSS; Alerta's summed over gunicorn's processes).
 *
 * Honesty checks: every notification must be answered 2xx (Alerta: 201
 * naming every alert sent), and at the end each database must hold exactly
 * the distinct alerts that were accepted; otherwise the exit code is 1.
 *
 * Not a test, not part of `npm test` or CI: it prints figures (record them in
 * bench/README.md). Installs Alerta into a venv on first use
 * (bench/support/alerta.ts). Environment: BENCH_SECONDS, BENCH_CONCURRENCY
 * (as bench:intake), BENCH_ALERTA_WORKERS (gunicorn workers, default 4),
 * TERDUT_BENCH_VENV, TERDUT_BENCH_DATABASE_URL (else
 * TERDUT_TEST_DATABASE_URL, else a temporary cluster).
 */
import { loadavg } from 'node:os';
import pg from 'pg';
import { ALERTA_PACKAGES, alertaSender, ensureAlertaVenv, startAlerta } from './support/alerta.ts';
import {
  CONCURRENCY,
  SCENARIOS,
  SECONDS,
  WARM_UP_MS,
  describeMeasured,
  runScenario,
  terdutSender,
  warmUpServer,
  type Measured,
  type SendNotification,
} from './support/intake-load.ts';
import { formatMs, printTable } from './support/latency.ts';
import { printMachine } from './support/machine.ts';
import { formatMiB, memoryOfAll } from './support/memory.ts';
import { provideBenchPostgres } from './support/postgres.ts';
import { prepareStorage, startServerProcess } from './support/server-process.ts';

const ALERTA_WORKERS = Number(process.env.BENCH_ALERTA_WORKERS ?? 4);
const GOAL = 10;

interface Contender {
  name: string;
  send: SendNotification;
  /** The server's processes (terdut-server; gunicorn's master and workers), for memory readings. */
  pids(): number[];
  databaseUrl: string;
  /** Distinct alerts the server answered 2xx for: the rows its `alerts` table must hold at the end. */
  accepted: number;
  results: Map<string, Measured>;
}

/** Cleanups run once, in reverse order of registration, at the end or on SIGINT/SIGTERM. */
const cleanups: Array<() => Promise<void>> = [];
let cleaning: Promise<void> | undefined;
function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        console.error(`cleanup failed: ${(error as Error).message}`);
      }
    }
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping gunicorn and terdut-server, dropping the benchmark databases`);
    void cleanUp().finally(() => process.exit(130));
  });
}

async function storedAlerts(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM alerts')).rows[0]!.n);
  } finally {
    await client.end();
  }
}

async function main(): Promise<number> {
  printMachine();
  console.log(
    `${SECONDS} s per scenario after ${WARM_UP_MS} ms warm-up, ${CONCURRENCY} concurrent senders; ` +
      `Alerta: ${Object.entries(ALERTA_PACKAGES)
        .map(([name, version]) => `${name} ${version}`)
        .join(', ')}, ${ALERTA_WORKERS} gunicorn workers\n`,
  );
  ensureAlertaVenv();
  const postgres = await provideBenchPostgres();
  cleanups.push(() => postgres.stop());
  console.log(`PostgreSQL: ${postgres.origin}; ${postgres.durability}`);
  const terdutDb = await postgres.createDatabase('terdut_bench_intake');
  cleanups.push(() => terdutDb.drop());
  const alertaDb = await postgres.createDatabase('alerta_bench_intake');
  cleanups.push(() => alertaDb.drop());

  const storage = { kind: 'postgres', url: terdutDb.url } as const;
  const { adminKey } = await prepareStorage(storage);
  const server = await startServerProcess(storage);
  cleanups.push(() => server.stop());
  const alerta = await startAlerta(alertaDb.url, ALERTA_WORKERS);
  cleanups.push(() => alerta.stop());

  const contenders: Contender[] = [
    {
      name: 'terdut',
      send: terdutSender(server.baseUrl, adminKey),
      pids: () => [server.pid],
      databaseUrl: terdutDb.url,
      accepted: 0,
      results: new Map(),
    },
    {
      name: 'Alerta',
      send: alertaSender(alerta),
      pids: () => alerta.pids(),
      databaseUrl: alertaDb.url,
      accepted: 0,
      results: new Map(),
    },
  ];

  const memory = (contender: Contender) => {
    const pids = contender.pids();
    const { rssMiB, pssMiB } = memoryOfAll(pids);
    return `${contender.name} ${formatMiB(rssMiB)} RSS, ${formatMiB(pssMiB)} PSS (${pids.length} process${pids.length === 1 ? '' : 'es'})`;
  };
  console.log(`memory when started: ${contenders.map(memory).join('; ')}`);
  console.log('warming up each server alone:');
  for (const contender of contenders) {
    contender.accepted += await warmUpServer(contender.send);
    console.log(`  ${contender.name}: ${contender.accepted} alerts`);
  }
  console.log('scenarios, interleaved:');
  for (const scenario of SCENARIOS) {
    for (const contender of contenders) {
      const { measured, distinctAlerts } = await runScenario(scenario, contender.send);
      contender.accepted += distinctAlerts;
      contender.results.set(scenario.label, measured);
      console.log(describeMeasured(contender.name, scenario, measured));
    }
  }

  console.log(`memory at the end: ${contenders.map(memory).join('; ')}`);
  let honest = true;
  console.log("\nstored alerts (rows of each one's `alerts` table) against distinct alerts answered 2xx:");
  for (const contender of contenders) {
    const stored = await storedAlerts(contender.databaseUrl);
    const failures = [...contender.results.values()].reduce((sum, measured) => sum + measured.failures, 0);
    const ok = stored === contender.accepted && failures === 0;
    honest &&= ok;
    console.log(
      `  ${contender.name}: ${stored} stored of ${contender.accepted} accepted, ${failures} failed requests${ok ? '' : '  <-- NOT like for like'}`,
    );
  }

  const [terdut, peer] = contenders as [Contender, Contender];
  const rows: string[][] = [];
  const missed: string[] = [];
  for (const scenario of SCENARIOS) {
    const ours = terdut.results.get(scenario.label)!;
    const theirs = peer.results.get(scenario.label)!;
    const ratio = ours.alertsPerSecond / theirs.alertsPerSecond;
    if (!(ratio >= GOAL)) missed.push(scenario.label);
    rows.push([
      scenario.label,
      `${ours.alertsPerSecond.toFixed(0)} / ${theirs.alertsPerSecond.toFixed(0)}`,
      `${ours.notificationsPerSecond.toFixed(1)} / ${theirs.notificationsPerSecond.toFixed(1)}`,
      `${formatMs(ours.p50)} / ${formatMs(theirs.p50)}`,
      `${formatMs(ours.p99)} / ${formatMs(theirs.p99)}`,
      `${ratio.toFixed(1)}×`,
      ratio >= GOAL ? 'met' : 'NOT met',
    ]);
  }
  console.log('');
  printTable(
    [
      'notification',
      'alerts/s terdut / Alerta',
      'notifications/s terdut / Alerta',
      'p50 terdut / Alerta',
      'p99 terdut / Alerta',
      'terdut ÷ Alerta',
      `goal ≥ ${GOAL}×`,
    ],
    rows,
  );
  console.log(
    `\n${missed.length === 0 ? `goal of ${GOAL}× met on every scenario` : `goal of ${GOAL}× NOT met on: ${missed.join(', ')}`}` +
      `\nBoth on the same PostgreSQL (${postgres.durability}), each authenticating every request with an API key.`,
  );
  console.log(`load average at the end: ${loadavg()[0]!.toFixed(2)}`);
  return honest ? 0 : 1;
}

try {
  process.exitCode = await main();
} finally {
  await cleanUp();
}
