/**
 * `npm run bench:stats-triggers`: what the statistics triggers (migration
 * 0800) cost the intake. Two terdut-server processes on two PostgreSQL
 * databases of the same server, one with the triggers and one with them
 * disabled (`ALTER TABLE … DISABLE TRIGGER USER`), take the scenarios of
 * `bench:intake` in interleaved passes (with, without, with, without…), so
 * that the noise of a shared machine falls on both alike; it prints each
 * side's notifications/s and p50, and the ratio with/without.
 *
 * Not a test: it prints figures (record them in bench/README.md).
 * Environment: BENCH_SECONDS (per pass, default 3), BENCH_PASSES (per side
 * and scenario, default 2), BENCH_CONCURRENCY (default 4),
 * TERDUT_BENCH_DATABASE_URL as for bench:intake.
 */
import { loadavg } from 'node:os';
import pg from 'pg';
import { TerdutClient } from '../packages/client/src/index.ts';
import { notificationOfSize } from '../test/support/alertmanager-payloads.ts';
import { LatencyRecorder, formatMs, printTable } from './support/latency.ts';
import { printMachine } from './support/machine.ts';
import { provideBenchPostgres } from './support/postgres.ts';
import { prepareStorage, startServerProcess } from './support/server-process.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const PASSES = Number(process.env.BENCH_PASSES ?? 2);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const WARM_UP_MS = 3000;

const SCENARIOS: { label: string; size: number; repeat: boolean }[] = [
  { label: '1 new alert', size: 1, repeat: false },
  { label: '10 new alerts', size: 10, repeat: false },
  { label: '100 new alerts', size: 100, repeat: false },
  { label: '100 alerts, repeat', size: 100, repeat: true },
];

interface Side {
  name: 'with triggers' | 'without';
  client: TerdutClient;
  latency: LatencyRecorder;
  notifications: number;
  seconds: number;
}

/** CONCURRENCY senders for SECONDS; returns notifications sent and their latencies. */
async function pass(side: Side, send: (client: TerdutClient, worker: number, n: number) => Promise<void>) {
  const started = performance.now();
  const deadline = started + SECONDS * 1000;
  let sequence = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      while (performance.now() < deadline) {
        const at = performance.now();
        await send(side.client, worker, sequence++);
        side.latency.record(performance.now() - at);
        side.notifications++;
      }
    }),
  );
  side.seconds += (performance.now() - started) / 1000;
}

async function main(): Promise<void> {
  printMachine();
  console.log(`${PASSES} interleaved passes of ${SECONDS} s per side and scenario, ${CONCURRENCY} senders\n`);
  const postgres = await provideBenchPostgres();
  const databases = [
    await postgres.createDatabase('terdut_bench_stats_on'),
    await postgres.createDatabase('terdut_bench_stats_off'),
  ];
  const servers: Awaited<ReturnType<typeof startServerProcess>>[] = [];
  try {
    const sides: Side[] = [];
    for (const [index, database] of databases.entries()) {
      const storage = { kind: 'postgres' as const, url: database.url };
      const { adminKey } = await prepareStorage(storage);
      if (index === 1) {
        const admin = new pg.Client({ connectionString: database.url });
        await admin.connect();
        // USER: the triggers migrations create; the foreign keys' own (system) triggers stay.
        await admin.query(
          'ALTER TABLE incidents DISABLE TRIGGER USER; ALTER TABLE alerts DISABLE TRIGGER USER; ' +
            'ALTER TABLE incident_alerts DISABLE TRIGGER USER',
        );
        await admin.end();
      }
      const server = await startServerProcess(storage);
      servers.push(server);
      const client = new TerdutClient({ baseUrl: server.baseUrl, token: adminKey, timeoutMs: 60_000 });
      sides.push({
        name: index === 0 ? 'with triggers' : 'without',
        client,
        latency: new LatencyRecorder(),
        notifications: 0,
        seconds: 0,
      });
    }
    for (const side of sides) {
      const until = performance.now() + WARM_UP_MS;
      for (let n = 0; performance.now() < until; n++) {
        await side.client.webhook.sendAlertmanager(
          notificationOfSize(10, { name: `Warm${n}`, groupKey: `warm-${n}` }),
        );
      }
    }
    const rows: string[][] = [];
    for (const scenario of SCENARIOS) {
      const measured = sides.map((side) => ({
        ...side,
        latency: new LatencyRecorder(),
        notifications: 0,
        seconds: 0,
      }));
      const repeated = Array.from({ length: CONCURRENCY * 4 }, (_, index) =>
        notificationOfSize(scenario.size, {
          name: `Repeat${index}`,
          groupKey: `{}:{alertname="Repeat${index}"}`,
        }),
      );
      if (scenario.repeat) {
        for (const side of measured)
          for (const group of repeated) await side.client.webhook.sendAlertmanager(group);
      }
      for (let round = 0; round < PASSES; round++) {
        // Alternate which side goes first, so neither always follows the other.
        const order = round % 2 === 0 ? measured : [...measured].reverse();
        for (const side of order) {
          await pass(side, async (client, worker, n) => {
            if (scenario.repeat) {
              await client.webhook.sendAlertmanager(repeated[n % repeated.length]!);
              return;
            }
            const name = `S${scenario.size}r${round}w${worker}n${n}`;
            await client.webhook.sendAlertmanager(
              notificationOfSize(scenario.size, { name, groupKey: `{}:{alertname="${name}"}` }),
            );
          });
        }
      }
      const rate = (side: (typeof measured)[number]) => side.notifications / side.seconds;
      const [on, off] = measured as [(typeof measured)[number], (typeof measured)[number]];
      rows.push([
        scenario.label,
        `${rate(on).toFixed(1)} / ${formatMs(on.latency.percentile(50))}`,
        `${rate(off).toFixed(1)} / ${formatMs(off.latency.percentile(50))}`,
        `${((rate(on) / rate(off)) * 100).toFixed(0)} %`,
      ]);
      console.log(`  ${scenario.label}: done`);
    }
    console.log('');
    printTable(
      ['scenario (PostgreSQL)', 'with triggers: notif./s / p50', 'without: notif./s / p50', 'with / without'],
      rows,
    );
    console.log(`\nload average at the end: ${loadavg()[0]!.toFixed(2)}`);
  } finally {
    for (const server of servers) await server.stop();
    for (const database of databases) await database.drop();
    await postgres.stop();
  }
}

await main();
