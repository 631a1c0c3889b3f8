/**
 * `npm run bench:intake`: how fast terdut-server takes Alertmanager
 * notifications, against a real listening server over loopback HTTP, on the
 * embedded PGlite and on PostgreSQL; and, in the same run, how fast the same
 * PostgreSQL takes single-row INSERT transactions of a comparable alert row
 * (the physical limit of durable intake), with our rate as a share of it.
 *
 * Not a test: it prints figures (record them in bench/README.md).
 * Environment: BENCH_SECONDS (per scenario, default 6), BENCH_CONCURRENCY
 * (concurrent senders and raw-insert connections, default 4),
 * TERDUT_BENCH_DATABASE_URL (else TERDUT_TEST_DATABASE_URL, else a
 * temporary cluster).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { TerdutClient } from '../packages/client/src/index.ts';
import { openPglite } from '../packages/server/src/db/database.ts';
import { notificationOfSize } from '../test/support/alertmanager-payloads.ts';
import { LatencyRecorder, formatMs, printTable } from './support/latency.ts';
import { printMachine } from './support/machine.ts';
import { provideBenchPostgres } from './support/postgres.ts';
import { prepareStorage, startServerProcess, type BenchStorage } from './support/server-process.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const WARM_UP_MS = 1000;
const SERVER_WARM_UP_MS = 4000;

interface Scenario {
  label: string;
  alertsPerNotification: number;
  /** `new`: every notification is a new group of new firing alerts (opens an incident, inserts every alert).
   *  `repeat`: the same groups re-sent unchanged (Alertmanager's repeat_interval): only "last seen" moves. */
  kind: 'new' | 'repeat';
}

const SCENARIOS: Scenario[] = [
  { label: '1 new alert', alertsPerNotification: 1, kind: 'new' },
  { label: '10 new alerts', alertsPerNotification: 10, kind: 'new' },
  { label: '100 new alerts', alertsPerNotification: 100, kind: 'new' },
  { label: '100 alerts, repeat', alertsPerNotification: 100, kind: 'repeat' },
];

interface Measured {
  alertsPerSecond: number;
  notificationsPerSecond: number;
  p50: number;
  p99: number;
  failures: number;
}

/** Runs `send` from CONCURRENCY workers until the deadline; the first WARM_UP_MS are not recorded. */
async function drive(send: (worker: number, sequence: number) => Promise<number>): Promise<Measured> {
  const latency = new LatencyRecorder();
  let alerts = 0;
  let failures = 0;
  let sequence = 0;
  const warmUntil = performance.now() + WARM_UP_MS;
  const deadline = warmUntil + SECONDS * 1000;
  let measuredFrom = Number.NaN;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      while (performance.now() < deadline) {
        const started = performance.now();
        try {
          const sent = await send(worker, sequence++);
          if (started >= warmUntil) {
            if (Number.isNaN(measuredFrom)) measuredFrom = started;
            latency.record(performance.now() - started);
            alerts += sent;
          }
        } catch (error) {
          failures++;
          if (failures === 1) console.error(`  first failure: ${(error as Error).message}`);
        }
      }
    }),
  );
  const elapsed = (performance.now() - (Number.isNaN(measuredFrom) ? warmUntil : measuredFrom)) / 1000;
  return {
    alertsPerSecond: alerts / elapsed,
    notificationsPerSecond: latency.count / elapsed,
    p50: latency.percentile(50),
    p99: latency.percentile(99),
    failures,
  };
}

async function benchServer(name: string, storage: BenchStorage): Promise<Map<string, Measured>> {
  const { adminKey } = await prepareStorage(storage);
  const server = await startServerProcess(storage);
  const client = new TerdutClient({ baseUrl: server.baseUrl, token: adminKey, timeoutMs: 60_000 });
  const results = new Map<string, Measured>();
  try {
    // A fresh process is slow at first (JIT, PGlite's WASM, cold caches);
    // none of that is what a running server does.
    const warmUntil = performance.now() + SERVER_WARM_UP_MS;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, worker) => {
        for (let sequence = 0; performance.now() < warmUntil; sequence++) {
          const alertName = `Warm${worker}n${sequence}`;
          await client.webhook.sendAlertmanager(
            notificationOfSize(10, { name: alertName, groupKey: alertName }),
          );
        }
      }),
    );
    for (const scenario of SCENARIOS) {
      const size = scenario.alertsPerNotification;
      let measured: Measured;
      if (scenario.kind === 'new') {
        measured = await drive(async (worker, sequence) => {
          // A new alert name per notification gives new fingerprints and a new group.
          const alertName = `Bench${size}x${worker}n${sequence}`;
          await client.webhook.sendAlertmanager(
            notificationOfSize(size, { name: alertName, groupKey: `{}:{alertname="${alertName}"}` }),
          );
          return size;
        });
      } else {
        const groups = Array.from({ length: CONCURRENCY * 4 }, (_, index) =>
          notificationOfSize(size, {
            name: `BenchRepeat${index}`,
            groupKey: `{}:{alertname="BenchRepeat${index}"}`,
          }),
        );
        for (const group of groups) await client.webhook.sendAlertmanager(group);
        measured = await drive(async (_worker, sequence) => {
          await client.webhook.sendAlertmanager(groups[sequence % groups.length]!);
          return size;
        });
      }
      results.set(scenario.label, measured);
      console.log(
        `  ${name}, ${scenario.label}: ${measured.alertsPerSecond.toFixed(0)} alerts/s, p50 ${formatMs(measured.p50)}, p99 ${formatMs(measured.p99)}` +
          (measured.failures ? `, ${measured.failures} FAILED` : ''),
      );
    }
  } finally {
    await server.stop();
  }
  return results;
}

const RAW_TABLE = `
  CREATE TABLE raw_alerts (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    fingerprint text NOT NULL UNIQUE,
    group_key text NOT NULL,
    name text NOT NULL,
    status text NOT NULL,
    labels jsonb NOT NULL,
    annotations jsonb NOT NULL,
    starts_at timestamptz NOT NULL,
    received_at timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL
  )`;
const RAW_INSERT = `INSERT INTO raw_alerts (fingerprint, group_key, name, status, labels, annotations, starts_at, received_at, last_seen_at)
  VALUES ($1, $2, $3, 'firing', $4, $5, $6, now(), now())`;

function rawRow(worker: number, sequence: number): unknown[] {
  const name = `Raw${worker}n${sequence}`;
  const alert = notificationOfSize(1, { name }).alerts[0]!;
  return [
    alert.fingerprint,
    `{}:{alertname="${name}"}`,
    name,
    alert.labels,
    alert.annotations,
    alert.startsAt,
  ];
}

/** Single-row INSERT transactions (autocommit: one commit each) from CONCURRENCY connections. */
async function rawPostgresInsertRate(url: string): Promise<Measured> {
  const setup = new pg.Client({ connectionString: url });
  await setup.connect();
  await setup.query(RAW_TABLE);
  await setup.end();
  const clients = await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      return client;
    }),
  );
  try {
    return await drive(async (worker, sequence) => {
      await clients[worker]!.query(RAW_INSERT, rawRow(worker, sequence));
      return 1;
    });
  } finally {
    await Promise.all(clients.map((client) => client.end()));
  }
}

/** The same on an embedded PGlite in a data directory (one connection: the inserts queue). */
async function rawPgliteInsertRate(): Promise<Measured> {
  const dir = mkdtempSync(join(tmpdir(), 'terdut-bench-raw-'));
  const db = await openPglite(dir);
  try {
    await db.exec(RAW_TABLE);
    return await drive(async (worker, sequence) => {
      await db.query(RAW_INSERT, rawRow(worker, sequence));
      return 1;
    });
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  printMachine();
  console.log(
    `${SECONDS} s per scenario after ${WARM_UP_MS} ms warm-up, ${CONCURRENCY} concurrent senders\n`,
  );
  const postgres = await provideBenchPostgres();
  console.log(`PostgreSQL: ${postgres.origin}; ${postgres.durability}`);
  const pgliteDir = mkdtempSync(join(tmpdir(), 'terdut-bench-pglite-'));
  const serverDb = await postgres.createDatabase('terdut_bench_intake');
  const rawDb = await postgres.createDatabase('terdut_bench_raw');
  try {
    console.log('terdut-server on PGlite (embedded, data directory):');
    const onPglite = await benchServer('PGlite', { kind: 'pglite', dataDir: pgliteDir });
    console.log('terdut-server on PostgreSQL:');
    const onPostgres = await benchServer('PostgreSQL', { kind: 'postgres', url: serverDb.url });
    console.log('raw single-row INSERT transactions:');
    const rawPostgres = await rawPostgresInsertRate(rawDb.url);
    console.log(
      `  PostgreSQL: ${rawPostgres.alertsPerSecond.toFixed(0)} rows/s, p50 ${formatMs(rawPostgres.p50)}`,
    );
    const rawPglite = await rawPgliteInsertRate();
    console.log(`  PGlite: ${rawPglite.alertsPerSecond.toFixed(0)} rows/s, p50 ${formatMs(rawPglite.p50)}`);

    console.log('');
    const rows: string[][] = [];
    for (const [database, results] of [
      ['PGlite', onPglite],
      ['PostgreSQL', onPostgres],
    ] as const) {
      for (const [label, measured] of results) {
        rows.push([
          database,
          label,
          measured.alertsPerSecond.toFixed(0),
          measured.notificationsPerSecond.toFixed(1),
          formatMs(measured.p50),
          formatMs(measured.p99),
          `${((measured.alertsPerSecond / rawPostgres.alertsPerSecond) * 100).toFixed(1)} %`,
        ]);
      }
    }
    for (const [database, measured] of [
      ['PostgreSQL', rawPostgres],
      ['PGlite', rawPglite],
    ] as const) {
      rows.push([
        database,
        'raw INSERT, 1 row/commit',
        measured.alertsPerSecond.toFixed(0),
        '-',
        formatMs(measured.p50),
        formatMs(measured.p99),
        `${((measured.alertsPerSecond / rawPostgres.alertsPerSecond) * 100).toFixed(1)} %`,
      ]);
    }
    printTable(
      ['database', 'notification', 'alerts/s', 'notifications/s', 'p50', 'p99', 'of raw PG inserts'],
      rows,
    );
    console.log(
      `\nRaw PG inserts and terdut-server on PostgreSQL ran on the same server (${postgres.durability}), so the share is like for like.`,
    );
    console.log(`load average at the end: ${loadavg()[0]!.toFixed(2)}`);
  } finally {
    await serverDb.drop();
    await rawDb.drop();
    rmSync(pgliteDir, { recursive: true, force: true });
    await postgres.stop();
  }
}

await main();
