/**
 * `npm run bench:notify`: how long from Alertmanager's 2xx to the page being
 * accepted by its provider (a webhook receiver on loopback, standing in for
 * the provider), with the real CLI server in a child process, on PGlite and
 * on PostgreSQL: one incident at a time (p50/p99), then a burst opened at
 * once (p50/p99 of each page, and pages per second until the last arrived).
 *
 * Not a test: it prints figures (record them in bench/README.md).
 * Environment: BENCH_SINGLE (single incidents, default 30), BENCH_BURST
 * (incidents opened at once, default 500), BENCH_DATABASES (default
 * `pglite,postgres`), TERDUT_BENCH_DATABASE_URL / TERDUT_TEST_DATABASE_URL.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { firingAlert, notification } from '../test/support/alertmanager-payloads.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../test/support/webhook-receiver.ts';
import { LatencyRecorder, formatMs, printTable } from './support/latency.ts';
import { printMachine } from './support/machine.ts';
import { provideBenchPostgres } from './support/postgres.ts';
import {
  openStorage,
  prepareStorage,
  startServerProcess,
  type BenchStorage,
} from './support/server-process.ts';

const SINGLE = Number(process.env.BENCH_SINGLE ?? 30);
const BURST = Number(process.env.BENCH_BURST ?? 500);
const DATABASES = (process.env.BENCH_DATABASES ?? 'pglite,postgres').split(',').map((name) => name.trim());

/** Arrival time of the first page of each incident, by the group key its webhook body names. */
function arrivals(receiver: WebhookReceiver): Map<string, number> {
  const seen = new Map<string, number>();
  const original = receiver.received.push.bind(receiver.received);
  receiver.received.push = (...items) => {
    for (const item of items) {
      const group = item.body?.incident?.group_key;
      if (typeof group === 'string' && !seen.has(group)) seen.set(group, performance.now());
    }
    return original(...items);
  };
  return seen;
}

async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

async function run(storage: BenchStorage, label: string): Promise<string[][]> {
  const receiver = await startWebhookReceiver();
  const arrived = arrivals(receiver);
  const { adminId, adminKey } = await prepareStorage(storage);
  const db = await openStorage(storage);
  await db.query(
    `INSERT INTO schedule_overrides (schedule_id, user_id, starts_at, ends_at)
     SELECT id, $1, now() - interval '1 hour', now() + interval '2 days' FROM schedules WHERE is_default`,
    [adminId],
  );
  await db.query(
    `INSERT INTO contact_methods (user_id, kind, name, target, secret, created_at)
     VALUES ($1, 'webhook', 'bench', $2, 'bench-secret-0123456789', now())`,
    [adminId, receiver.url],
  );
  await db.close();
  // Every page goes to one person: without a high storm limit the burst would (rightly) fold into summaries.
  // The server child gets only the environment given here, never the benchmark's own.
  const server = await startServerProcess(storage, {
    TERDUT_PAGING_STORM_LIMIT: process.env.TERDUT_PAGING_STORM_LIMIT ?? '1000000',
  });
  const post = async (groupKey: string) => {
    const payload = notification({
      groupKey,
      alerts: [firingAlert({ name: groupKey, severity: 'critical' })],
    });
    const response = await fetch(`${server.baseUrl}/api/webhook/alertmanager`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(payload),
    });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`webhook answered ${response.status}`);
    return performance.now();
  };
  const rows: string[][] = [];
  try {
    const single = new LatencyRecorder();
    for (let index = 0; index < SINGLE; index++) {
      const group = `single-${label}-${index}`;
      const answered = await post(group);
      await waitFor(() => arrived.has(group), 60_000, `the page of ${group}`);
      single.record(arrived.get(group)! - answered);
    }
    rows.push([
      label,
      `1 incident × ${SINGLE}`,
      formatMs(single.percentile(50)),
      formatMs(single.percentile(99)),
      '-',
    ]);

    const burst = new LatencyRecorder();
    const groups = Array.from({ length: BURST }, (_, index) => `burst-${label}-${index}`);
    const started = performance.now();
    const answeredAt = await Promise.all(groups.map((group) => post(group)));
    await waitFor(() => groups.every((group) => arrived.has(group)), 600_000, 'every page of the burst');
    const last = Math.max(...groups.map((group) => arrived.get(group)!));
    groups.forEach((group, index) => burst.record(arrived.get(group)! - answeredAt[index]!));
    const perSecond = BURST / ((last - started) / 1000);
    rows.push([
      label,
      `${BURST} incidents at once`,
      formatMs(burst.percentile(50)),
      formatMs(burst.percentile(99)),
      perSecond.toFixed(0),
    ]);
  } finally {
    await server.stop();
    await receiver.close();
  }
  return rows;
}

async function main(): Promise<void> {
  printMachine();
  console.log(
    `load average at start: ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}`,
  );
  const rows: string[][] = [];
  if (DATABASES.includes('pglite')) {
    const dataDir = mkdtempSync(join(tmpdir(), 'terdut-bench-notify-'));
    try {
      rows.push(...(await run({ kind: 'pglite', dataDir }, 'PGlite')));
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  if (DATABASES.includes('postgres')) {
    const postgres = await provideBenchPostgres();
    const database = await postgres.createDatabase('terdut_bench_notify');
    try {
      rows.push(...(await run({ kind: 'postgres', url: database.url }, 'PostgreSQL')));
    } finally {
      await database.drop();
      await postgres.stop();
    }
  }
  console.log('\nwebhook 2xx → page accepted by the receiver (loopback)');
  printTable(['database', 'scenario', 'p50', 'p99', 'pages/s'], rows);
  console.log(
    `load average at end: ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}`,
  );
}

await main();
