/**
 * `npm run bench:flapping`: one alert that flaps (fires, resolves, fires
 * again with a new startsAt, ...) for a long time, on PostgreSQL. Every
 * firing opens an incident and every resolve closes it, so the alert's
 * links to past incidents pile up: a flapping disk alert three times an
 * hour for a year has 26,000. Each group here gets its history at once
 * (HISTORY past incidents, written directly), then FLAPS fire/resolve pairs
 * are sent one after the other (a group's notifications are serialised
 * anyway) and timed. A notification's cost must not depend on how long the
 * alert has flapped: compare each row with the one without history, in the
 * same run (bench/README.md, "A flapping alert's history").
 *
 * Not a test: it prints figures (record them in bench/README.md).
 * Environment: BENCH_FLAPPING_HISTORIES (comma-separated, default
 * 0,2000,20000), BENCH_FLAPS (fire/resolve pairs per group, default 300),
 * TERDUT_BENCH_DATABASE_URL (else TERDUT_TEST_DATABASE_URL, else a temporary
 * cluster).
 */
import { loadavg } from 'node:os';
import pg from 'pg';
import { notificationOfSize, type WebhookPayloadJson } from '../test/support/alertmanager-payloads.ts';
import { terdutSender, warmUpServer } from './support/intake-load.ts';
import { countCpuFromNow } from './support/cpu.ts';
import { LatencyRecorder, formatMs, printTable } from './support/latency.ts';
import { printMachine } from './support/machine.ts';
import { startServerOnBenchPostgres } from './support/server-on-postgres.ts';

const HISTORIES = (process.env.BENCH_FLAPPING_HISTORIES ?? '0,2000,20000').split(',').map(Number);
const FLAPS = Number(process.env.BENCH_FLAPS ?? 300);
const MINUTE = 60_000;

/** Group `name`'s one alert, firing since `startsAt`, or resolved. */
function flap(name: string, startsAt: Date, status: 'firing' | 'resolved'): WebhookPayloadJson {
  return notificationOfSize(1, { name, groupKey: `{}:{alertname="${name}"}`, startsAt, status });
}

/**
 * `count` resolved incidents of the alert's group before `before`, each with
 * the alert's occurrence of its time as a member, as `count` flaps would
 * have left them.
 */
async function addPastIncidents(client: pg.Client, name: string, count: number, before: Date): Promise<void> {
  if (count === 0) return;
  await client.query(
    `WITH alert AS (SELECT id, group_key FROM alerts WHERE name = $1),
     past AS (
       SELECT n, $3::timestamptz - n * interval '20 minutes' AS starts_at FROM generate_series(1, $2::int) AS n
     ),
     added AS (
       INSERT INTO incidents (group_key, title, status, triggered_at, resolved_at, resolution_source)
       SELECT alert.group_key, $1, 'resolved', past.starts_at, past.starts_at + interval '5 minutes', 'alerts'
         FROM past, alert
        ORDER BY past.n DESC
       RETURNING id, triggered_at
     )
     INSERT INTO incident_alerts (incident_id, alert_id, occurrence_starts_at, added_at)
     SELECT added.id, alert.id, added.triggered_at, added.triggered_at FROM added, alert`,
    [name, count, before],
  );
}

async function main(): Promise<void> {
  printMachine();
  console.log(`${FLAPS} fire/resolve pairs per group, one sender; past incidents: ${HISTORIES.join(', ')}\n`);
  const { postgres, databaseUrl, adminKey, server, backends, stop } =
    await startServerOnBenchPostgres('terdut_bench_flapping');
  console.log(`PostgreSQL: ${postgres.origin}; ${postgres.durability}`);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const rows: string[][] = [];
  let baseline = Number.NaN;
  try {
    const send = terdutSender(server.baseUrl, adminKey);
    await warmUpServer(send);
    const firstStart = new Date('2026-01-01T00:00:00Z');
    for (const history of HISTORIES) {
      const name = `Flapping${history}`;
      // The alert exists and its first incident is resolved; then its past.
      await send(flap(name, firstStart, 'firing'));
      await send(flap(name, firstStart, 'resolved'));
      await addPastIncidents(client, name, history, firstStart);
      await client.query('ANALYZE incidents; ANALYZE incident_alerts');

      const latency = new LatencyRecorder();
      const cpuSince = countCpuFromNow(server.pid, backends);
      const started = performance.now();
      for (let index = 1; index <= FLAPS; index++) {
        const startsAt = new Date(firstStart.getTime() + index * 20 * MINUTE);
        for (const status of ['firing', 'resolved'] as const) {
          const sent = performance.now();
          await send(flap(name, startsAt, status));
          latency.record(performance.now() - sent);
        }
      }
      const perSecond = latency.count / ((performance.now() - started) / 1000);
      const cpu = cpuSince(latency.count);
      const opened = await client.query<{ count: number }>(
        `SELECT count(*)::int AS count FROM incidents WHERE group_key = $1`,
        [`{}:{alertname="${name}"}`],
      );
      if (history === HISTORIES[0]) baseline = latency.percentile(50);
      rows.push([
        String(history),
        String(opened.rows[0]!.count),
        perSecond.toFixed(0),
        formatMs(latency.percentile(50)),
        formatMs(latency.percentile(99)),
        `${(latency.percentile(50) / baseline).toFixed(2)}×`,
        cpu.serverCpuMs.toFixed(2),
        cpu.databaseCpuMs.toFixed(2),
      ]);
      console.log(`  ${history} past incidents: ${rows.at(-1)!.slice(1).join(' | ')}`);
    }
  } finally {
    await client.end();
    await stop();
  }
  console.log('');
  printTable(
    [
      'past incidents',
      'incidents at the end',
      'notifications/s',
      'p50',
      'p99',
      `p50 / first row's`,
      'server CPU ms',
      'PostgreSQL CPU ms',
    ],
    rows,
  );
  console.log(
    `\nEach flap opens an incident and resolves it: "incidents at the end" should be the past ones + ${FLAPS + 1}.` +
      `\nCPU per notification, from /proc. load average at the end: ${loadavg()[0]!.toFixed(2)}`,
  );
}

await main();
