/**
 * `npm run bench:storm`: an alert storm's whole life on PostgreSQL, not
 * only its first notifications. Each round, against one server whose store
 * keeps growing: new 1-alert groups; then STORM_GROUPS more groups opened
 * (not measured); a second alert joining each of half of them; every alert
 * of each of the other half resolved (the incident resolves itself and its
 * paging ends); unchanged repeats. `bench:intake` measures new groups and
 * repeats on a fresh store; this shows whether joins and resolves keep
 * their cost as the tables grow and their statistics go stale (it found
 * resolves at 6-19 ms of PostgreSQL each: bench/README.md, "Resolves and
 * kept plans").
 *
 * Not a test: it prints figures (record them in bench/README.md).
 * Environment: BENCH_SECONDS (per measurement, default 6),
 * BENCH_CONCURRENCY (senders, default 4), BENCH_ROUNDS (default 2),
 * BENCH_STORM_GROUPS (groups opened per round, default 15000; each
 * measurement of joins or resolves must not use more than half of them),
 * TERDUT_BENCH_DATABASE_URL (else TERDUT_TEST_DATABASE_URL, else a
 * temporary cluster).
 */
import { loadavg } from 'node:os';
import pg from 'pg';
import { notificationOfSize, type WebhookPayloadJson } from '../test/support/alertmanager-payloads.ts';
import {
  CONCURRENCY,
  SECONDS,
  WARM_UP_MS,
  drive,
  terdutSender,
  warmUpServer,
} from './support/intake-load.ts';
import { countCpuFromNow } from './support/cpu.ts';
import { formatMs, printTable } from './support/latency.ts';
import { printMachine } from './support/machine.ts';
import { startServerOnBenchPostgres } from './support/server-on-postgres.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const STORM_GROUPS = Number(process.env.BENCH_STORM_GROUPS ?? 15_000);

/** The notification of group `name`'s one alert (firing unless said otherwise), plus `extra` more alerts. */
function groupNotification(
  name: string,
  status: 'firing' | 'resolved' = 'firing',
  extra = 0,
): WebhookPayloadJson {
  const groupKey = `{}:{alertname="${name}"}`;
  const notification = notificationOfSize(1, { name, groupKey, status });
  for (let index = 1; index <= extra; index++)
    notification.alerts.push(...notificationOfSize(1, { name: `${name}j${index}`, groupKey }).alerts);
  return notification;
}

async function main(): Promise<void> {
  printMachine();
  console.log(
    `${SECONDS} s per measurement after ${WARM_UP_MS} ms warm-up, ${CONCURRENCY} senders, ` +
      `${ROUNDS} rounds, ${STORM_GROUPS} groups opened per round\n`,
  );
  const { postgres, databaseUrl, adminKey, server, backends, stop } =
    await startServerOnBenchPostgres('terdut_bench_storm');
  console.log(`PostgreSQL: ${postgres.origin}; ${postgres.durability}`);
  const rows: string[][] = [];
  let resolvesAccepted = 0;
  let resolvedByAlerts: number;
  try {
    const send = terdutSender(server.baseUrl, adminKey);
    await warmUpServer(send);
    /** Drives `notify` (one notification per call) and adds its row: rate, latency, CPU per notification. */
    const measure = async (round: number, label: string, notify: (sequence: number) => Promise<void>) => {
      const cpuSince = countCpuFromNow(server.pid, backends);
      let sent = 0;
      const measured = await drive(async (_worker, sequence) => {
        sent++;
        await notify(sequence);
        return 1;
      });
      const cpu = cpuSince(sent);
      rows.push([
        String(round),
        label,
        measured.notificationsPerSecond.toFixed(0),
        formatMs(measured.p50),
        formatMs(measured.p99),
        String(measured.failures),
        cpu.serverCpuMs.toFixed(2),
        cpu.databaseCpuMs.toFixed(2),
      ]);
      console.log(`  round ${round}, ${label}: ${rows.at(-1)!.slice(2).join(' | ')}`);
    };
    /** The group of this round's half `half` (0 or 1) numbered `sequence`; fails once the half is used up. */
    const opened = (round: number, half: number, sequence: number) => {
      if (sequence >= STORM_GROUPS / 2)
        throw new Error(
          `more than ${STORM_GROUPS / 2} notifications in ${SECONDS} s: raise BENCH_STORM_GROUPS`,
        );
      return `Storm${round}g${half * Math.ceil(STORM_GROUPS / 2) + sequence}`;
    };

    for (let round = 1; round <= ROUNDS; round++) {
      await measure(round, 'new group, 1 alert', (sequence) =>
        send(groupNotification(`Storm${round}n${sequence}`)),
      );
      const started = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          for (let index = next++; index < STORM_GROUPS; index = next++)
            await send(groupNotification(`Storm${round}g${index}`));
        }),
      );
      console.log(
        `  round ${round}: ${STORM_GROUPS} groups opened in ${((performance.now() - started) / 1000).toFixed(1)} s`,
      );
      await measure(round, 'an alert joins (1+1)', (sequence) =>
        send(groupNotification(opened(round, 1, sequence), 'firing', 1)),
      );
      await measure(round, 'resolve (1 alert)', async (sequence) => {
        await send(groupNotification(opened(round, 0, sequence), 'resolved'));
        resolvesAccepted++;
      });
      await measure(round, 'repeat, 1 alert', (sequence) =>
        send(groupNotification(`Storm${round}n${sequence % 16}`)),
      );
    }
    // Every accepted resolve must have resolved its incident, or the figures measure something else.
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const result = await client.query<{ count: string }>(
        `SELECT count(*) AS count FROM incidents WHERE resolution_source = 'alerts'`,
      );
      resolvedByAlerts = Number(result.rows[0]!.count);
    } finally {
      await client.end();
    }
  } finally {
    await stop();
  }
  console.log('');
  printTable(
    ['round', 'notifications', 'per s', 'p50', 'p99', 'failed', 'server CPU ms', 'PostgreSQL CPU ms'],
    rows,
  );
  console.log(
    `\nIncidents resolved by their alerts: ${resolvedByAlerts} of ${resolvesAccepted} resolves accepted` +
      (resolvedByAlerts === resolvesAccepted
        ? '.'
        : ' (MISMATCH: every accepted resolve should resolve its incident).'),
  );
  console.log(`CPU per notification, from /proc. load average at the end: ${loadavg()[0]!.toFixed(2)}`);
}

await main();
