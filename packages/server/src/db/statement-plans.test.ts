/**
 * A statement's plan fits the tables as they are when it runs, not as they
 * were when its connection first ran it. Statements are prepared once per
 * connection; a generic plan kept from a connection's first calls, made
 * while the tables were small, scanned whole tables for good once they had
 * grown (the paging pass' lock took 8.5 ms per call). And a statement
 * whose rows are found by key must stay so when the statistics are stale
 * and say otherwise (a resolve read every firing alert: 6-19 ms). And
 * what a statement makes PostgreSQL do beyond it (a foreign key's action)
 * finds its rows by key too (retention read every event for each alert it
 * deleted: 14 ms per alert at 250,000 events).
 */
import assert from 'node:assert/strict';
import {
  newGroupCall,
  rowsReadDuring,
  testOnOneConnectionOfEach,
  wholeTableScansDuring,
} from '@terdut/test-support';
import { openIfNewGroups } from '../repositories/alert-groups.ts';
import { lockIncidentsAndEscalationsUnlessHeld } from '../repositories/escalations.ts';
import { deleteUnreferencedAlerts } from '../repositories/alerts.ts';
import { hasFiringAlerts } from '../repositories/incident-alerts.ts';
import type { Database, Queryable } from './database.ts';

const now = new Date('2026-12-06T10:00:00Z');

/** Opens a new group's incident (with its escalation) and returns its id. */
async function openIncident(db: Queryable, groupKey: string): Promise<number> {
  const [opened] = await openIfNewGroups(db, [await newGroupCall(db, groupKey, [`${groupKey}-a`], now)]);
  assert.ok(typeof opened === 'object', `${groupKey} opened its incident (${JSON.stringify(opened)})`);
  return opened.opened;
}

/** `count` resolved incidents, each with its finished escalation, at once and without ANALYZE. */
async function addHistoryOfIncidents(db: Queryable, count: number): Promise<void> {
  await db.query(
    `WITH added AS (
       INSERT INTO incidents (group_key, title, status, triggered_at, resolved_at, resolution_source)
       SELECT 'history-' || n, 'History', 'resolved', $1, $1, 'alerts' FROM generate_series(1, $2::int) AS n
       RETURNING id
     )
     INSERT INTO escalations (incident_id, policy, state, updated_at)
     SELECT id, '{}', 'finished', $1 FROM added`,
    [now, count],
  );
}

async function checkPagingLockSurvivesGrowth(db: Database): Promise<void> {
  // The connection's first calls, while incidents and escalations hold a
  // few rows (analysed: ANALYZE would make the connection plan again).
  const ids = [await openIncident(db, 'lock-a'), await openIncident(db, 'lock-b')];
  await db.exec('ANALYZE incidents; ANALYZE escalations');
  for (let call = 0; call < 8; call++) {
    const locked = await db.transaction((tx) => lockIncidentsAndEscalationsUnlessHeld(tx, ids));
    assert.deepEqual(
      locked.map((pair) => pair.incident.id),
      ids,
    );
  }
  await addHistoryOfIncidents(db, 20_000);
  for (const table of ['incidents', 'escalations']) {
    const scans = await wholeTableScansDuring(db, table, async (tx) => {
      const locked = await lockIncidentsAndEscalationsUnlessHeld(tx, ids);
      assert.equal(locked.length, 2, 'both incidents locked with their escalations');
    });
    assert.equal(scans, 0, `the paging lock scanned the whole of ${table} after it grew`);
  }
}

testOnOneConnectionOfEach(
  "the paging pass' lock finds its incidents and escalations by key after the tables grew under its first calls",
  checkPagingLockSurvivesGrowth,
);

/**
 * `incidents` incidents of `alertsEach` alerts in `status`, one link each,
 * at once; returns the incidents' ids in order.
 */
async function addIncidentsWithAlerts(
  db: Queryable,
  prefix: string,
  incidents: number,
  alertsEach: number,
  status: 'firing' | 'resolved',
): Promise<number[]> {
  const result = await db.query<{ id: number }>(
    `WITH opened AS (
       INSERT INTO incidents (group_key, title, triggered_at)
       SELECT $1 || n, 'Many', $2 FROM generate_series(1, $3::int) AS n
       RETURNING id, group_key
     ), fired AS (
       INSERT INTO alerts (fingerprint, group_key, name, status, labels, annotations, starts_at,
                           received_at, last_seen_at)
       SELECT opened.group_key || '-' || k, opened.group_key, 'Many', $5, '{}', '{}', $2, $2, $2
         FROM opened, generate_series(1, $4::int) AS k
       RETURNING id, group_key, starts_at
     ), linked AS (
       INSERT INTO incident_alerts (incident_id, alert_id, occurrence_starts_at, added_at)
       SELECT opened.id, fired.id, fired.starts_at, $2 FROM fired JOIN opened USING (group_key)
     )
     SELECT id FROM opened ORDER BY id`,
    [prefix, now, incidents, alertsEach, status],
  );
  return result.rows.map((row) => row.id);
}

async function checkFiringCheckReadsOnlyItsAlerts(db: Database): Promise<void> {
  // Statistics that say every incident has a hundred alerts and that hardly
  // any alert is firing (a quiet history)...
  const [quiet] = await addIncidentsWithAlerts(db, 'quiet-', 200, 100, 'resolved');
  await db.exec('ANALYZE incidents; ANALYZE alerts; ANALYZE incident_alerts');
  for (let call = 0; call < 8; call++) assert.equal(await hasFiringAlerts(db, quiet!), false);
  // ...then a storm: 20,000 incidents of one firing alert each, not yet analysed.
  const singles = await addIncidentsWithAlerts(db, 'single-', 20_000, 1, 'firing');
  const single = singles[singles.length - 1]!;
  let firing: boolean | undefined;
  const read = await rowsReadDuring(db, 'alerts', async (tx) => {
    firing = await hasFiringAlerts(tx, single);
  });
  assert.equal(firing, true);
  assert.ok(read <= 1, `a 1-alert incident's firing check read ${read} alerts`);

  await db.query(`UPDATE alerts SET status = 'resolved', ends_at = $2 WHERE group_key = $1`, [
    `single-${singles.length}`,
    now,
  ]);
  assert.equal(await hasFiringAlerts(db, single), false, 'its one alert resolved: nothing firing');
}

testOnOneConnectionOfEach(
  "an incident's firing check reads only its own alerts when the statistics say incidents are large",
  checkFiringCheckReadsOnlyItsAlerts,
);

/** Each link's alert-added event, as the intake records it. */
async function addAlertAddedEvents(db: Queryable, groupKeyPrefix: string): Promise<void> {
  await db.query(
    `INSERT INTO incident_events (incident_id, type, alert_id, detail, created_at)
     SELECT ia.incident_id, 'alert_added', ia.alert_id, 'Many', ia.added_at
       FROM incident_alerts ia JOIN incidents i ON i.id = ia.incident_id
      WHERE i.group_key LIKE $1 || '%'`,
    [groupKeyPrefix],
  );
}

async function checkPruningFindsEventsByAlert(db: Database): Promise<void> {
  // 20,000 events of incidents that stay...
  await addIncidentsWithAlerts(db, 'kept-', 2_000, 10, 'resolved');
  await addAlertAddedEvents(db, 'kept-');
  // ...and 20 incidents past retention, deleted with their links and
  // events, which leaves their alerts to retention.
  await addIncidentsWithAlerts(db, 'pruned-', 20, 1, 'resolved');
  await addAlertAddedEvents(db, 'pruned-');
  await db.query(`DELETE FROM incidents WHERE group_key LIKE 'pruned-%'`);
  await db.exec('ANALYZE incidents; ANALYZE alerts; ANALYZE incident_alerts; ANALYZE incident_events');

  let pruned = 0;
  const scans = await wholeTableScansDuring(db, 'incident_events', async (tx) => {
    pruned = await deleteUnreferencedAlerts(tx, new Date(now.getTime() + 1000), 1000);
  });
  assert.equal(pruned, 20, 'the alerts no incident refers to are pruned, the others kept');
  assert.equal(scans, 0, `pruning 20 alerts read every event ${scans} times`);
}

testOnOneConnectionOfEach(
  "retention prunes an alert without reading every incident's events",
  checkPruningFindsEventsByAlert,
);
