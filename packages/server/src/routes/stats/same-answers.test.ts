/**
 * The statistics read rollups (migration 0800) instead of scanning the
 * history; these tests hold them to the answers of the queries they replaced,
 * kept verbatim as the reference (test/support/statistics-reference.ts), on data sets with every kind of row
 * and after every kind of change: bulk SQL, the intake, people's actions,
 * retention, renames, deletes with cascades, truncation, an upgrade with
 * history, and zones with half- and quarter-hour offsets and odd historical
 * ones.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  forEachDatabase,
  ManualClock,
  startTestApp,
  testConfig,
  type TestApp,
  type TestUser,
  firingAlert,
  notification,
  resolvedAlert,
  referenceStatistics,
  type StatisticsAnswers,
} from '@terdut/test-support';
import type { Database } from '../../db/database.ts';
import { migrate } from '../../db/migrate.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const STALE_AFTER = '6h';
const STALE_AFTER_MS = 6 * HOUR;

/**
 * Zones whose offsets are whole hours, half hours (Kolkata, St John's,
 * Adelaide), quarter hours (Kathmandu, Chatham, Eucla), with summer time on
 * either hemisphere, and with odd local mean times in the 19th century.
 */
const ZONES = [
  'UTC',
  'Europe/Berlin',
  'America/New_York',
  'America/St_Johns',
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'Australia/Adelaide',
  'Australia/Eucla',
  'Pacific/Chatham',
];

/** What the endpoints answer now. */
async function endpointAnswers(server: TestApp, as: TestUser): Promise<StatisticsAnswers> {
  const get = async (url: string) => {
    const response = await server.request({ method: 'GET', url, as });
    assert.equal(response.status, 200, `${url}: ${JSON.stringify(response.body)}`);
    return response.body;
  };
  return {
    alerts: await get('/api/stats/alerts'),
    top: await get('/api/stats/alerts/top?limit=100'),
    top3: await get('/api/stats/alerts/top?limit=3'),
    byHour: await get('/api/stats/alerts/by-hour'),
    byDay: await get('/api/stats/alerts/by-day'),
    incidents: await get('/api/stats/incidents'),
  };
}

/** One in-process server per zone (the zone is configuration), all on the same database and clock. */
async function serversByZone(db: Database, clock: ManualClock): Promise<Map<string, TestApp>> {
  const servers = new Map<string, TestApp>();
  for (const zone of ZONES) {
    servers.set(
      zone,
      await startTestApp(db, {
        clock,
        config: testConfig({ TERDUT_TIMEZONE: zone, TERDUT_ALERT_STALE_AFTER: STALE_AFTER }),
      }),
    );
  }
  return servers;
}

async function assertSameAnswersInEveryZone(
  db: Database,
  servers: Map<string, TestApp>,
  as: TestUser,
  clock: ManualClock,
  when: string,
): Promise<void> {
  for (const [zone, server] of servers) {
    const expected = await referenceStatistics(db, zone, new Date(clock.now().getTime() - STALE_AFTER_MS));
    assert.deepEqual(await endpointAnswers(server, as), expected, `${when}, ${zone}`);
  }
}

/** Drops what migration 0800 created and forgets it ran: the schema as an installation before it had. */
async function dropRollups(db: Database): Promise<void> {
  const functions = await db.query<{ signature: string }>(
    `SELECT p.oid::regprocedure::text AS signature FROM pg_proc p
      WHERE p.pronamespace = 'public'::regnamespace AND p.proname LIKE 'stats\\_%'`,
  );
  for (const fn of functions.rows) await db.exec(`DROP FUNCTION IF EXISTS ${fn.signature} CASCADE`);
  await db.exec(
    `DROP TABLE stats_occurrences_by_name, stats_occurrences_by_quarter, stats_occurrence_deltas,
                stats_totals, stats_total_deltas;
     DELETE FROM schema_migrations WHERE name LIKE '0800\\_%';`,
  );
}

/**
 * A history with every kind of row, in bulk SQL: incidents triggered,
 * acknowledged (with sub-millisecond times), resolved by alerts or by hand,
 * archived, snoozed; alerts firing (fresh and stale) and resolved, under a
 * dozen names with ties; occurrences spread over years and every hour, on
 * quarter-hour boundaries and summer-time changes, in the 19th century (odd
 * local mean times), before 2000 and at ±infinity.
 */
async function fillHistory(
  db: Database,
  adminId: number,
  now: Date,
  options: { odd: boolean } = { odd: true },
): Promise<void> {
  await db.query('SELECT setseed(0.42)');
  await db.query(
    `INSERT INTO incidents (group_key, title, status, triggered_at, acknowledged_by, acknowledged_at,
                            snoozed_until, resolved_at, resolution_source, archived_at)
     SELECT 'hist-' || g, 'History ' || g, s.status, t.at,
            CASE WHEN s.acked THEN $2::bigint END,
            CASE WHEN s.acked THEN t.at + random() * interval '3 hours' END,
            CASE WHEN g % 7 = 0 THEN $1::timestamptz + interval '1 hour' END,
            CASE WHEN s.status = 'resolved' THEN t.at + random() * interval '30 hours' END,
            CASE WHEN s.status = 'resolved' THEN (CASE WHEN g % 3 = 0 THEN 'manual' ELSE 'alerts' END) END,
            CASE WHEN s.status = 'resolved' AND g % 2 = 1 THEN $1::timestamptz END
       FROM generate_series(1, 600) AS g
       CROSS JOIN LATERAL (SELECT $1::timestamptz - random() * interval '700 days' AS at) t
       CROSS JOIN LATERAL (SELECT CASE WHEN g > 560 THEN (CASE WHEN g % 2 = 0 THEN 'acknowledged' ELSE 'triggered' END)
                                       ELSE 'resolved' END AS status,
                                  g % 2 = 0 AS acked) s`,
    [now, adminId],
  );
  await db.query(
    `INSERT INTO alerts (fingerprint, group_key, name, status, labels, annotations, starts_at, received_at,
                         last_seen_at, resolution_source, incident_id)
     SELECT 'fp-' || g, i.group_key,
            (ARRAY['DiskFull', 'HighLatency', 'NodeDown', 'TargetDown', 'Watchdog', '', 'Ünïcode',
                   'a', 'B', 'b', 'CPUThrottling', 'KubePodCrashLooping'])[1 + g % 12],
            CASE WHEN i.status = 'resolved' OR g % 5 = 0 THEN 'resolved' ELSE 'firing' END,
            '{}', '{}', i.triggered_at, i.triggered_at,
            -- Around the staleness limit: some firing alerts are stale.
            $1::timestamptz - random() * interval '12 hours',
            CASE WHEN i.status = 'resolved' OR g % 5 = 0 THEN 'alertmanager' END, i.id
       FROM generate_series(1, 3000) AS g
       JOIN incidents i ON i.group_key = 'hist-' || (1 + g % 600)`,
    [now],
  );
  // Occurrences: most at random instants of the last two years, the others
  // on purpose where bucketing could go wrong.
  await db.query(
    `INSERT INTO incident_alerts (incident_id, alert_id, occurrence_starts_at, added_at)
     SELECT i.id, a.id,
            CASE WHEN $2 AND a.id % 31 = 0 THEN timestamptz '1890-06-01 00:00:00+00' + (a.id % 97) * interval '7 minutes 13 seconds'
                 WHEN a.id % 37 = 0 THEN timestamptz '1999-12-31 23:00:00+00' + (a.id % 11) * interval '11 minutes'
                 WHEN a.id % 41 = 0 THEN (ARRAY[timestamptz '2008-03-09 03:31:00+00',  -- St John's, 00:01 NST -> NDT
                                               timestamptz '2008-03-09 03:44:59.999999+00',
                                               timestamptz '2026-03-29 01:00:00+00',  -- Berlin to summer time
                                               timestamptz '2026-03-29 00:59:59.999999+00',
                                               timestamptz '2026-04-05 02:45:00+00',  -- Chatham back to +12:45
                                               timestamptz '2026-10-04 01:30:00+00'])[CASE WHEN $2 THEN 1 + a.id % 6 ELSE 3 + a.id % 4 END]
                 WHEN a.id % 43 = 0 THEN (CASE WHEN a.id % 2 = 0 THEN timestamptz 'infinity' ELSE timestamptz '-infinity' END)
                 WHEN a.id % 5 = 0 THEN date_bin('15 minutes', $1::timestamptz - random() * interval '700 days',
                                                 timestamptz '2000-01-01 00:00:00+00')
                 ELSE $1::timestamptz - random() * interval '700 days' END,
            i.triggered_at
       FROM alerts a JOIN incidents i ON i.id = a.incident_id`,
    [now, options.odd],
  );
  // Some alerts also took part in a second incident (flapping).
  await db.query(
    `INSERT INTO incident_alerts (incident_id, alert_id, occurrence_starts_at, added_at)
     SELECT i.id, a.id, i.triggered_at, i.triggered_at
       FROM alerts a JOIN incidents i ON i.group_key = 'hist-' || (1 + (a.id * 7) % 600)
      WHERE a.id % 4 = 0
     ON CONFLICT DO NOTHING`,
  );
}

forEachDatabase('statistics answer as the queries they replaced', (database) => {
  const clock = new ManualClock('2026-11-20T10:00:00Z');
  let servers: Map<string, TestApp>;
  let admin: TestUser;
  const fold = () => servers.get('UTC')!.app.services.statistics.foldDeltas();

  before(async () => {
    servers = await serversByZone(database(), clock);
    admin = await servers.get('UTC')!.createUser('stats-admin', 'admin');
  });
  after(async () => {
    for (const server of servers.values()) await server.close();
  });

  test('an installation upgrading with history gets rollups that answer the same in every zone', async () => {
    await dropRollups(database());
    await fillHistory(database(), admin.id, clock.now());
    assert.deepEqual(await migrate(database()), ['0800_statistics_rollups.sql']);
    await assertSameAnswersInEveryZone(database(), servers, admin, clock, 'after the upgrade');
    // The data set reaches what could go wrong: quarters the rollup cannot
    // place by their bounds in some zone, and occurrences at infinity.
    const odd = await database().query<{ count: number }>(
      `SELECT count(*)::int AS count FROM incident_alerts WHERE NOT isfinite(occurrence_starts_at)
          OR occurrence_starts_at < '1900-01-01'`,
    );
    assert.ok(odd.rows[0]!.count > 10, 'the data set has odd occurrences');
  });

  test('after bulk changes of every kind, folded or not, the answers stay the same', async () => {
    const db = database();
    const steps: [string, string][] = [
      [
        'occurrences moved in time',
        `UPDATE incident_alerts SET occurrence_starts_at = occurrence_starts_at + interval '7 minutes' WHERE alert_id % 3 = 0`,
      ],
      [
        'links upserted',
        `INSERT INTO incident_alerts (incident_id, alert_id, occurrence_starts_at, added_at)
                          SELECT a.incident_id, a.id, a.starts_at - interval '1 day', a.starts_at FROM alerts a WHERE a.id % 6 = 1
                          ON CONFLICT (incident_id, alert_id) DO UPDATE SET occurrence_starts_at = EXCLUDED.occurrence_starts_at`,
      ],
      [
        'alerts renamed',
        `UPDATE alerts SET name = CASE WHEN id % 2 = 0 THEN 'Renamed' ELSE upper(name) END WHERE id % 17 = 0`,
      ],
      [
        'acknowledgements taken back',
        `UPDATE incidents SET status = 'triggered', acknowledged_at = NULL, acknowledged_by = NULL WHERE status = 'acknowledged' AND id % 3 = 0`,
      ],
      [
        'incidents resolved',
        `UPDATE incidents SET status = 'resolved', resolved_at = triggered_at + interval '1 hour 0.000123 seconds' WHERE status <> 'resolved' AND id % 4 = 0`,
      ],
      [
        'snoozes, archives and severities (not counted)',
        `UPDATE incidents SET snoozed_until = NULL, archived_at = NULL, severity = 'critical' WHERE id % 5 = 0`,
      ],
      [
        'retention-like delete of old incidents',
        `DELETE FROM incidents WHERE status = 'resolved' AND resolved_at < now() - interval '400 days'`,
      ],
      ['alerts deleted with their links', `DELETE FROM alerts WHERE id % 53 = 0`],
      [
        'alerts no incident refers to deleted',
        `DELETE FROM alerts a WHERE NOT EXISTS (SELECT 1 FROM incident_alerts ia WHERE ia.alert_id = a.id)`,
      ],
      ['links deleted one by one', `DELETE FROM incident_alerts WHERE alert_id % 29 = 0`],
    ];
    for (const [index, [what, sql]] of steps.entries()) {
      await db.query(sql);
      await assertSameAnswersInEveryZone(db, servers, admin, clock, what);
      if (index % 2 === 1) {
        assert.ok(((await fold()) ?? 0) > 0, 'the fold moved something');
        await assertSameAnswersInEveryZone(db, servers, admin, clock, `${what}, folded`);
      }
    }
    await fold();
    const left = await db.query<{ count: number }>(
      `SELECT ((SELECT count(*) FROM stats_occurrence_deltas) + (SELECT count(*) FROM stats_total_deltas))::int AS count`,
    );
    assert.equal(left.rows[0]!.count, 0, 'a fold leaves no deltas behind');
    const empty = await db.query<{ count: number }>(
      `SELECT ((SELECT count(*) FROM stats_occurrences_by_quarter WHERE occurrences <= 0)
             + (SELECT count(*) FROM stats_occurrences_by_name WHERE occurrences <= 0))::int AS count`,
    );
    assert.equal(empty.rows[0]!.count, 0, 'names and quarters with nothing left are gone');
  });

  test('time passing makes firing alerts stale in the counts, as before', async () => {
    clock.advance(3 * HOUR);
    await assertSameAnswersInEveryZone(database(), servers, admin, clock, 'three hours later');
    clock.advance(DAY);
    await assertSameAnswersInEveryZone(database(), servers, admin, clock, 'a day later');
  });

  test('two folds at once count nothing twice', async () => {
    const db = database();
    await db.query(
      `UPDATE incident_alerts SET occurrence_starts_at = occurrence_starts_at - interval '1 hour' WHERE alert_id % 2 = 0`,
    );
    const results = await Promise.all([fold(), fold(), fold()]);
    assert.ok(results.some((folded) => folded !== undefined && folded > 0));
    await assertSameAnswersInEveryZone(db, servers, admin, clock, 'after concurrent folds');
  });

  test('truncating the history empties the statistics', async () => {
    const db = database();
    await db.exec('TRUNCATE incidents, alerts CASCADE');
    await assertSameAnswersInEveryZone(db, servers, admin, clock, 'after TRUNCATE');
  });

  test('with no quarter split between two local hours, servers keep the placed rollup until a fold moves it', async () => {
    // Without local mean times or changes at odd minutes, the by-hour and by-day
    // answers come from the rollup placed once per generation plus the deltas.
    const db = database();
    await fillHistory(db, admin.id, clock.now(), { odd: false });
    await assertSameAnswersInEveryZone(db, servers, admin, clock, 'refilled');
    for (const [what, sql] of [
      [
        'more occurrences',
        `INSERT INTO incident_alerts (incident_id, alert_id, occurrence_starts_at, added_at)
                            SELECT i.id, a.id, i.triggered_at + interval '1 hour', i.triggered_at
                              FROM alerts a JOIN incidents i ON i.group_key = 'hist-' || (1 + (a.id * 11) % 600)
                             WHERE a.id % 5 = 0 ON CONFLICT DO NOTHING`,
      ],
      [
        'occurrences moved',
        `UPDATE incident_alerts SET occurrence_starts_at = occurrence_starts_at - interval '20 minutes' WHERE alert_id % 7 = 0`,
      ],
      ['incidents deleted', `DELETE FROM incidents WHERE id % 9 = 0`],
    ]) {
      await db.query(sql!);
      await assertSameAnswersInEveryZone(db, servers, admin, clock, `${what}, not folded`);
      await fold();
      await assertSameAnswersInEveryZone(db, servers, admin, clock, `${what}, folded`);
    }
  });
});

forEachDatabase('statistics through the intake, people and retention answer as before', (database) => {
  const clock = new ManualClock('2026-07-27T10:00:00Z');
  let servers: Map<string, TestApp>;
  let server: TestApp;
  let member: TestUser;
  let alertmanager: TestUser;

  before(async () => {
    servers = await serversByZone(database(), clock);
    server = servers.get('Asia/Kathmandu')!;
    member = await server.createUser('stats-member');
    alertmanager = await server.createUser('stats-alertmanager', 'admin');
  });
  after(async () => {
    for (const each of servers.values()) await each.close();
  });

  const deliver = async (payload: object): Promise<number> => {
    const response = await server.request({
      method: 'POST',
      url: '/api/webhook/alertmanager',
      payload,
      as: alertmanager,
    });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.incident_id;
  };
  const act = async (method: 'POST' | 'DELETE', url: string, payload?: object) => {
    const response = await server.request({ method, url, as: member, ...(payload ? { payload } : {}) });
    assert.ok(response.status < 300, `${method} ${url}: ${response.status} ${JSON.stringify(response.body)}`);
  };
  const check = (when: string) => assertSameAnswersInEveryZone(database(), servers, member, clock, when);

  test('notifications, re-fires, actions, staleness and retention keep the answers the same', async () => {
    // Two groups firing the same alertname in the same quarter hour, across
    // hours that are half and quarter hours apart in Kolkata and Kathmandu.
    const disks = [0, 1, 2, 3, 4, 5].map((n) => ({
      name: 'DiskFull',
      labels: { host: `db-${n}` },
      severity: n % 2 === 0 ? 'warning' : 'critical',
      startsAt: new Date(Date.parse('2026-07-27T04:10:00Z') + n * 17 * MINUTE),
    }));
    const east = await deliver(
      notification({ groupKey: 'disk-east', alerts: disks.slice(0, 3).map((d) => firingAlert(d)) }),
    );
    const west = await deliver(
      notification({ groupKey: 'disk-west', alerts: disks.slice(3).map((d) => firingAlert(d)) }),
    );
    const latency = { name: 'HighLatency', startsAt: '2026-07-26T18:14:59.999Z' };
    const slow = await deliver(notification({ groupKey: 'latency', alerts: [firingAlert(latency)] }));
    await check('first notifications');

    // A repeat counts nothing; a re-fire inside the open incident moves its occurrence in time.
    await deliver(
      notification({ groupKey: 'disk-east', alerts: disks.slice(0, 3).map((d) => firingAlert(d)) }),
    );
    await deliver(
      notification({
        groupKey: 'disk-east',
        alerts: [firingAlert({ ...disks[0]!, startsAt: '2026-07-27T05:45:00Z' })],
      }),
    );
    await check('repeat and re-fire');

    clock.advance(4 * MINUTE + 321);
    await act('POST', `/api/incidents/${east}/acknowledge`);
    clock.advance(MINUTE);
    await act('DELETE', `/api/incidents/${east}/acknowledge`);
    clock.advance(MINUTE);
    await act('POST', `/api/incidents/${east}/acknowledge`);
    await act('POST', `/api/incidents/${west}/snooze`, { duration: '30m' });
    await servers.get('UTC')!.app.services.statistics.foldDeltas();
    await check('acknowledged, taken back, acknowledged again, snoozed; folded');

    clock.advance(7 * MINUTE);
    await deliver(notification({ groupKey: 'latency', alerts: [resolvedAlert(latency)] }));
    await act('POST', `/api/incidents/${west}/resolve`);
    await act('POST', `/api/incidents/${slow}/archive`);
    await check('resolved by alerts and by hand, archived');

    // Flapping: the same alert opens a new incident of its group.
    clock.advance(2 * HOUR);
    const again = await deliver(
      notification({ groupKey: 'latency', alerts: [firingAlert({ ...latency, startsAt: clock.now() })] }),
    );
    assert.notEqual(again, slow);
    await check('the alert fired again');

    // Nothing refreshes the disk alerts: they go stale, then the sweep marks them.
    clock.advance(7 * HOUR);
    await check('stale, not swept yet');
    await server.app.services.alertExpiry.sweep();
    await check('swept');

    // Retention (TERDUT_RETENTION default 180 days) takes the old resolved incidents and their alerts.
    clock.advance(200 * DAY);
    const pruned = await server.app.services.retention.prune();
    assert.ok(pruned.incidents >= 2 && pruned.alerts >= 1, JSON.stringify(pruned));
    await check('after retention');
    await servers.get('UTC')!.app.services.statistics.foldDeltas();
    await check('after retention, folded');
  });
});
