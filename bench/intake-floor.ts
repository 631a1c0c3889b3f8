/**
 * `npm run bench:intake-floor`: the database's part of a new group's first
 * notification, alone. The intake call (`openIfNewGroups`, migration 0960)
 * from CONCURRENCY connections in a loop, with no HTTP, no server, no
 * paging pass and no API key: the most a new group can reach on this
 * PostgreSQL with what it stores (the alerts, the incident, its
 * escalation, the links, the events and the statistics rollups). It runs
 * one group per statement, and four per statement as gathered new groups
 * go (services/intake.ts), and divides by the raw single-row commit rate
 * of the same server measured in between, as `bench:intake` does.
 *
 * Then the HTTP floor: a bare `node:http` server (support/bare-intake-server.ts)
 * that parses each notification and stores its alerts as rows of the raw
 * table before it answers, with no API key, validation, incident or
 * framework, driven by the intake benchmarks' senders: the most any HTTP
 * intake that commits before it answers can reach on this machine.
 *
 * Not a test: it prints figures (record them in bench/README.md).
 * Environment: BENCH_SECONDS (per measurement, default 6),
 * BENCH_CONCURRENCY (connections, default 4), TERDUT_BENCH_DATABASE_URL
 * (else TERDUT_TEST_DATABASE_URL, else a temporary cluster).
 */
import { loadavg } from 'node:os';
import { openPostgres, type Database } from '../packages/server/src/db/database.ts';
import { migrate } from '../packages/server/src/db/migrate.ts';
import { parseNotification } from '../packages/server/src/alertmanager/parse.ts';
import { openIfNewGroups, type NewGroupCall } from '../packages/server/src/repositories/alert-groups.ts';
import { RoutingCache } from '../packages/server/src/services/paging/policy-routing.ts';
import { notificationOfSize } from '../test/support/alertmanager-payloads.ts';
import { CONCURRENCY, SECONDS, WARM_UP_MS, drive } from './support/intake-load.ts';
import { formatMs, printTable } from './support/latency.ts';
import { printMachine } from './support/machine.ts';
import { provideBenchPostgres } from './support/postgres.ts';
import { rawPostgresInsertRate } from './support/raw-inserts.ts';
import { bareIntakeRate, type BareMode } from './support/bare-intake.ts';

const SIZES = [1, 10, 100];
const GROUPS_PER_STATEMENT = [1, 4];
const BARE_MODES: { mode: BareMode; label: string }[] = [
  { mode: 'answer', label: 'parses, answers, stores nothing' },
  { mode: 'insert', label: 'stores the alerts (one INSERT, one commit each)' },
  { mode: 'gathered', label: 'stores the alerts, group commit' },
];
/** Issue 15's targets for new groups, end to end: a share of the raw commit rate. */
const TARGET_SHARE: Record<number, number> = { 1: 30, 10: 100, 100: 200 };

async function main(): Promise<void> {
  printMachine();
  console.log(`${SECONDS} s per measurement after ${WARM_UP_MS} ms warm-up, ${CONCURRENCY} connections\n`);
  const postgres = await provideBenchPostgres();
  console.log(`PostgreSQL: ${postgres.origin}; ${postgres.durability}`);
  const intakeDb = await postgres.createDatabase('terdut_bench_floor');
  const db = await openPostgres(intakeDb.url, { max: CONCURRENCY });
  try {
    await migrate(db);
    const routing = await new RoutingCache().route(db, {});
    let sequence = 0;
    const newGroup = (size: number): NewGroupCall => {
      const name = `Floor${size}n${sequence++}`;
      const now = new Date();
      const notification = parseNotification(notificationOfSize(size, { name, groupKey: name }), now);
      return {
        groupKey: notification.groupKey,
        alerts: notification.alerts,
        incident: {
          title: name,
          group_labels: notification.groupLabels,
          severity: null,
          severity_rank: 0,
          routing: { ...routing, labels: {} },
        },
        now,
        staleBefore: new Date(now.getTime() - 3_600_000),
      };
    };
    const rows: string[][] = [];
    const httpRows: string[][] = [];
    for (const size of SIZES) {
      // A database of its own each time: the raw table starts empty, as bench:intake's does.
      const rawDb = await postgres.createDatabase('terdut_bench_floor_raw');
      const raw = await rawPostgresInsertRate(rawDb.url).finally(() => rawDb.drop());
      console.log(`raw single-row commits: ${raw.alertsPerSecond.toFixed(0)}/s`);
      for (const perStatement of GROUPS_PER_STATEMENT) {
        const measured = await drive(() => openGroups(db, size, perStatement, newGroup));
        const share = (measured.alertsPerSecond / raw.alertsPerSecond) * 100;
        console.log(
          `  ${size}-alert new groups, ${perStatement} per statement: ${(measured.alertsPerSecond / size).toFixed(0)} groups/s`,
        );
        rows.push([
          `${size} new alert${size === 1 ? '' : 's'}`,
          String(perStatement),
          (measured.alertsPerSecond / size).toFixed(0),
          measured.alertsPerSecond.toFixed(0),
          formatMs(measured.p50),
          `${share.toFixed(1)} %`,
          `${TARGET_SHARE[size]} %`,
        ]);
      }
      for (const { mode, label } of BARE_MODES) {
        const bareDb = await postgres.createDatabase('terdut_bench_floor_bare');
        const measured = await bareIntakeRate(bareDb.url, mode, size).finally(() => bareDb.drop());
        const share = (measured.alertsPerSecond / raw.alertsPerSecond) * 100;
        console.log(
          `  bare HTTP server, ${size}-alert new groups, ${mode}: ${measured.notificationsPerSecond.toFixed(0)}/s` +
            (measured.failures ? `, ${measured.failures} FAILED` : ''),
        );
        httpRows.push([
          `${size} new alert${size === 1 ? '' : 's'}`,
          label,
          measured.notificationsPerSecond.toFixed(0),
          measured.alertsPerSecond.toFixed(0),
          formatMs(measured.p50),
          mode === 'answer' ? '-' : `${share.toFixed(1)} %`,
          `${TARGET_SHARE[size]} %`,
        ]);
      }
    }
    console.log('');
    printTable(
      [
        'new group',
        'groups per statement',
        'groups/s',
        'alerts/s',
        'p50 per statement',
        'of raw PG inserts',
        'issue 15 target, end to end',
      ],
      rows,
    );
    console.log(
      '\nThe intake call alone: the end-to-end figures of bench:intake add HTTP, the server, the API key and the paging pass to it.\n',
    );
    printTable(
      [
        'notification',
        'bare HTTP server',
        'notifications/s',
        'alerts/s',
        'p50',
        'of raw PG inserts',
        'issue 15 target',
      ],
      httpRows,
    );
    console.log(
      '\nThe HTTP floor: no HTTP intake that commits before it answers, whatever it stores, goes faster on this machine.',
    );
    console.log(`load average at the end: ${loadavg()[0]!.toFixed(2)}`);
  } finally {
    await db.close();
    await intakeDb.drop();
    await postgres.stop();
  }
}

/** One statement of `perStatement` new groups of `size` alerts; answers the alerts it stored. */
async function openGroups(
  db: Database,
  size: number,
  perStatement: number,
  newGroup: (size: number) => NewGroupCall,
): Promise<number> {
  const calls = Array.from({ length: perStatement }, () => newGroup(size));
  const outcomes = await openIfNewGroups(db, calls);
  if (outcomes.some((outcome) => typeof outcome !== 'object')) {
    throw new Error(`a new group did not open: ${JSON.stringify(outcomes)}`);
  }
  return size * perStatement;
}

await main();
