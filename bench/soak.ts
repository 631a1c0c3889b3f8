/**
 * `npm run bench:soak`: the server's memory over a long intake run. Drives
 * the real CLI server (a child process, bench/support/server-process.ts)
 * with Alertmanager-shaped notifications until it has stored
 * BENCH_SOAK_ALERTS distinct alerts, and prints its resident set size
 * (VmRSS from /proc/<pid>/status) and V8 heap (from its own /metrics) idle
 * at the start, every BENCH_SOAK_EVERY stored alerts, and idle at the end.
 * A server that leaks grows with every step; one that does not levels off.
 *
 * Traffic, from BENCH_SOAK_CONCURRENCY senders: every other notification is
 * a new group (1, 10 or 100 new firing alerts in turn, so small and large
 * notifications both repeat many times); the rest re-send a recent group
 * unchanged (Alertmanager's repeat_interval) or resolve the oldest recent
 * group (its incident closes), in turn.
 *
 * Not a test: it prints figures (record them in bench/README.md).
 * Environment: BENCH_SOAK_ALERTS (default 1000000), BENCH_SOAK_EVERY
 * (default 100000), BENCH_SOAK_DATABASES (default "postgres,pglite"),
 * BENCH_SOAK_CONCURRENCY (default 4), BENCH_SOAK_HEAP_SNAPSHOTS (a
 * directory: the server writes a V8 heap snapshot there when idle at the
 * start and at the end, to compare retained sizes by constructor in Chrome
 * DevTools), BENCH_SOAK_SERVER_ENV (extra environment for the server, a JSON
 * object, e.g. '{"TERDUT_NODE_FLAGS":"--max-semi-space-size=4"}': flags there
 * come after the shipped ones and win),
 * TERDUT_BENCH_DATABASE_URL as for bench:intake.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { TerdutClient } from '../packages/client/src/index.ts';
import { notificationOfSize } from '../test/support/alertmanager-payloads.ts';
import { formatMs, LatencyRecorder, printTable } from './support/latency.ts';
import { printMachine } from './support/machine.ts';
import { v8HeapOf } from './support/memory.ts';
import { provideBenchPostgres } from './support/postgres.ts';
import { prepareStorage, startServerProcess, type BenchStorage } from './support/server-process.ts';

const ALERTS = Number(process.env.BENCH_SOAK_ALERTS ?? 1_000_000);
const EVERY = Number(process.env.BENCH_SOAK_EVERY ?? 100_000);
const CONCURRENCY = Number(process.env.BENCH_SOAK_CONCURRENCY ?? 4);
const DATABASES = (process.env.BENCH_SOAK_DATABASES ?? 'postgres,pglite')
  .split(',')
  .map((name) => name.trim());
/** Extra environment for the server (JSON object), e.g. '{"MALLOC_ARENA_MAX":"2"}', to compare settings. */
const SERVER_ENV = JSON.parse(process.env.BENCH_SOAK_SERVER_ENV ?? '{}') as Record<string, string>;
const SNAPSHOT_DIR = process.env.BENCH_SOAK_HEAP_SNAPSHOTS
  ? resolve(process.env.BENCH_SOAK_HEAP_SNAPSHOTS)
  : undefined;

/** Sizes of new groups, in turn: Alertmanager sends many small notifications and some large ones. */
const NEW_GROUP_SIZES = [1, 10, 100];
/** Groups kept for repeats and resolves. */
const RECENT_GROUPS = 200;
/** How long the server is left alone before an idle reading (timers, a GC or two). */
const IDLE_MS = 5000;

interface Reading {
  label: string;
  storedAlerts: number;
  rssMiB: number;
  /** The part of RSS that is anonymous memory (heaps, malloc, WASM), not mapped files (the node binary). */
  rssAnonMiB: number;
  heapUsedMiB: number;
  /** What V8 holds from the system for its heap (used plus free space it keeps). */
  heapTotalMiB: number;
  externalMiB: number;
  loadAverage: number;
  /** Notification latency since the previous reading. */
  p50?: number;
  p99?: number;
}

function residentMiB(pid: number): { rss: number; anon: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => {
    const kib = new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(status)?.[1];
    if (kib === undefined) throw new Error(`no ${name} in /proc/${pid}/status`);
    return Number(kib) / 1024;
  };
  return { rss: field('VmRSS'), anon: field('RssAnon') };
}

async function read(
  label: string,
  pid: number,
  baseUrl: string,
  storedAlerts: number,
  latency?: LatencyRecorder,
): Promise<Reading> {
  const heap = await v8HeapOf(baseUrl);
  const resident = residentMiB(pid);
  const reading: Reading = {
    label,
    storedAlerts,
    rssMiB: resident.rss,
    rssAnonMiB: resident.anon,
    heapUsedMiB: heap.heapUsedMiB,
    heapTotalMiB: heap.heapTotalMiB,
    externalMiB: heap.externalMiB,
    loadAverage: loadavg()[0]!,
    ...(latency && latency.count > 0 ? { p50: latency.percentile(50), p99: latency.percentile(99) } : {}),
  };
  console.log(
    `  ${label}: ${storedAlerts} alerts stored, RSS ${reading.rssMiB.toFixed(0)} MiB (${reading.rssAnonMiB.toFixed(0)} anonymous), V8 heap used ${reading.heapUsedMiB.toFixed(0)} of ${reading.heapTotalMiB.toFixed(0)} MiB, external ${reading.externalMiB.toFixed(0)} MiB, load average ${reading.loadAverage.toFixed(2)}` +
      (reading.p50 !== undefined
        ? `, notification p50 ${formatMs(reading.p50)} p99 ${formatMs(reading.p99!)}`
        : ''),
  );
  return reading;
}

/** Asks the server for a heap snapshot (it was started with --heapsnapshot-signal) and waits for the file. */
async function snapshot(pid: number, dir: string): Promise<void> {
  const before = readdirSync(dir).length;
  process.kill(pid, 'SIGUSR2');
  const deadline = Date.now() + 120_000;
  // The file appears when writing starts; a snapshot of a few hundred MiB takes seconds.
  while (readdirSync(dir).length === before && Date.now() < deadline) await sleep(200);
  let size = -1;
  for (;;) {
    await sleep(1000);
    const total = readdirSync(dir).reduce((sum, file) => sum + statSync(join(dir, file)).size, 0);
    if (total === size || Date.now() > deadline) break;
    size = total;
  }
}

async function soak(name: string, storage: BenchStorage): Promise<Reading[]> {
  const { adminKey } = await prepareStorage(storage);
  const snapshots = SNAPSHOT_DIR ? join(SNAPSHOT_DIR, name.toLowerCase()) : undefined;
  if (snapshots) mkdirSync(snapshots, { recursive: true });
  const nodeOptions = [
    SERVER_ENV.NODE_OPTIONS,
    snapshots ? `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${snapshots}` : undefined,
  ].filter(Boolean);
  const server = await startServerProcess(storage, {
    ...SERVER_ENV,
    ...(nodeOptions.length > 0 ? { NODE_OPTIONS: nodeOptions.join(' ') } : {}),
  });
  const client = new TerdutClient({ baseUrl: server.baseUrl, token: adminKey, timeoutMs: 120_000 });
  const readings: Reading[] = [];
  try {
    await sleep(IDLE_MS);
    readings.push(await read(`${name} idle at start`, server.pid, server.baseUrl, 0));
    if (snapshots) await snapshot(server.pid, snapshots);

    let stored = 0;
    let nextReading = EVERY;
    let notifications = 0;
    let groupSequence = 0;
    let failures = 0;
    let latency = new LatencyRecorder();
    const recent: { name: string; size: number }[] = [];
    const pendingReadings: Promise<void>[] = [];
    const send = async (payload: ReturnType<typeof notificationOfSize>) => {
      const started = performance.now();
      await client.webhook.sendAlertmanager(payload);
      latency.record(performance.now() - started);
      notifications++;
    };
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, worker) => {
        for (let turn = 0; stored < ALERTS; turn++) {
          try {
            if (turn % 2 === 0 || recent.length < 2) {
              const sequence = groupSequence++;
              const size = NEW_GROUP_SIZES[sequence % NEW_GROUP_SIZES.length]!;
              const group = { name: `Soak${worker}n${sequence}`, size };
              await send(
                notificationOfSize(size, { name: group.name, groupKey: `{}:{alertname="${group.name}"}` }),
              );
              recent.push(group);
              stored += size;
            } else if (turn % 4 === 1) {
              const group = recent[Math.floor(Math.random() * recent.length)]!;
              await send(
                notificationOfSize(group.size, {
                  name: group.name,
                  groupKey: `{}:{alertname="${group.name}"}`,
                }),
              );
            } else {
              const group = recent.length > RECENT_GROUPS ? recent.shift()! : recent[0]!;
              await send(
                notificationOfSize(group.size, {
                  name: group.name,
                  groupKey: `{}:{alertname="${group.name}"}`,
                  status: 'resolved',
                }),
              );
            }
          } catch (error) {
            failures++;
            if (failures === 1) console.error(`  first failure: ${(error as Error).message}`);
            if (failures > 100)
              throw new Error(`${name}: more than 100 notifications failed; stopping`, { cause: error });
          }
          if (stored >= nextReading) {
            const at = nextReading;
            nextReading += EVERY;
            const window = latency;
            latency = new LatencyRecorder();
            pendingReadings.push(
              read(`${name} at ${at / 1000}k`, server.pid, server.baseUrl, stored, window).then((reading) => {
                readings.push(reading);
              }),
            );
          }
        }
      }),
    );
    await Promise.all(pendingReadings);
    console.log(`  ${name}: ${notifications} notifications, ${failures} failed`);
    await sleep(IDLE_MS);
    readings.push(await read(`${name} idle at the end`, server.pid, server.baseUrl, stored));
    if (snapshots) {
      await snapshot(server.pid, snapshots);
      console.log(`  ${name}: heap snapshots in ${snapshots}`);
    }
  } finally {
    await server.stop();
  }
  return readings;
}

async function main(): Promise<void> {
  printMachine();
  console.log(
    `${ALERTS} alerts stored through the webhook, readings every ${EVERY}; ${CONCURRENCY} concurrent senders\n`,
  );
  const all: Reading[] = [];
  const postgres = DATABASES.includes('postgres') ? await provideBenchPostgres() : undefined;
  try {
    if (postgres) {
      console.log(`PostgreSQL: ${postgres.origin}; ${postgres.durability}`);
      const database = await postgres.createDatabase('terdut_bench_soak');
      try {
        all.push(...(await soak('PostgreSQL', { kind: 'postgres', url: database.url })));
      } finally {
        await database.drop();
      }
    }
    if (DATABASES.includes('pglite')) {
      const dataDir = mkdtempSync(join(tmpdir(), 'terdut-bench-soak-'));
      try {
        all.push(...(await soak('PGlite', { kind: 'pglite', dataDir })));
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    }
  } finally {
    await postgres?.stop();
  }
  console.log('');
  printTable(
    [
      'reading',
      'alerts stored',
      'RSS',
      'of it anonymous',
      'V8 heap used / total',
      'external',
      'notification p50 / p99',
      'load average',
    ],
    all.map((reading) => [
      reading.label,
      String(reading.storedAlerts),
      `${reading.rssMiB.toFixed(0)} MiB`,
      `${reading.rssAnonMiB.toFixed(0)} MiB`,
      `${reading.heapUsedMiB.toFixed(0)} / ${reading.heapTotalMiB.toFixed(0)} MiB`,
      `${reading.externalMiB.toFixed(0)} MiB`,
      reading.p50 !== undefined ? `${formatMs(reading.p50)} / ${formatMs(reading.p99!)}` : '-',
      reading.loadAverage.toFixed(2),
    ]),
  );
}

await main();
