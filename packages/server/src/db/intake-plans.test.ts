/**
 * The intake calls (migrations 0960, 1000) keep their statements' plans for
 * the life of a connection. A plan made while `alerts` was small would
 * scan the whole table on every new group and every repeat from then on (7
 * ms per call while a benchmark filled it). Whatever the table's size when
 * the plans were made, a new group's first notification and an unchanged
 * repeat must find the alerts they read by index.
 */
import assert from 'node:assert/strict';
import { newGroupCall, testOnOneConnectionOfEach, wholeTableScansDuring } from '@terdut/test-support';
import { lockGroupForNotification, openIfNewGroups, touchIfRepeat } from '../repositories/alert-groups.ts';
import type { Database, Queryable } from './database.ts';

const now = new Date('2026-12-06T10:00:00Z');
const staleBefore = new Date(now.getTime() - 3_600_000);

/** A new group opened and then repeated unchanged; both calls must take the shortcut. */
async function openAndRepeat(db: Queryable, groupKey: string): Promise<void> {
  const call = await newGroupCall(db, groupKey, [`${groupKey}-a`, `${groupKey}-b`], now);
  const [opened] = await openIfNewGroups(db, [call]);
  assert.ok(typeof opened === 'object', `${groupKey} opened its incident (${JSON.stringify(opened)})`);
  const repeated = await touchIfRepeat(db, groupKey, call.alerts, now, staleBefore);
  assert.equal(repeated, opened.opened, `${groupKey} repeated unchanged`);
}

/** Whole-table scans of `alerts` while a group opens and repeats. */
function scansOfAlertsWhileOpeningAndRepeating(db: Database, groupKey: string): Promise<number> {
  return wholeTableScansDuring(db, 'alerts', (tx) => openAndRepeat(tx, groupKey));
}

/**
 * A connection's first calls of `call`, while the tables hold a few rows:
 * more than five, so the functions' statements settle on the plans they
 * keep (`analysed` first: ANALYZE would make the connection plan again).
 * Then the history grows by 20,000 alerts at once, with no ANALYZE after.
 */
async function planOnSmallTablesThenGrow(
  db: Database,
  groupKeyPrefix: string,
  analysed: string[],
  call: (db: Queryable, groupKey: string) => Promise<void>,
): Promise<void> {
  await call(db, `${groupKeyPrefix}-first`);
  await db.exec(analysed.map((table) => `ANALYZE ${table}`).join('; '));
  for (let index = 0; index < 8; index++) await call(db, `${groupKeyPrefix}-small-${index}`);
  await db.query(
    `INSERT INTO alerts (fingerprint, group_key, name, status, labels, annotations, starts_at,
                         received_at, last_seen_at)
     SELECT 'history-' || n, 'history-' || (n % 500), 'History', 'firing', '{}', '{}', $1, $1, $1
       FROM generate_series(1, 20000) AS n`,
    [now],
  );
}

async function checkPlansSurviveGrowth(db: Database): Promise<void> {
  await planOnSmallTablesThenGrow(db, 'plans', ['alerts'], openAndRepeat);
  assert.equal(await scansOfAlertsWhileOpeningAndRepeating(db, 'plans-after-growth'), 0);
  // Analysed, as autovacuum and the embedded maintenance would.
  await db.exec('ANALYZE alerts');
  assert.equal(await scansOfAlertsWhileOpeningAndRepeating(db, 'plans-after-analyze'), 0);
}

testOnOneConnectionOfEach(
  'a new group and a repeat find their alerts by index whatever the size of alerts when the plans were made',
  checkPlansSurviveGrowth,
);

/** A group opened, then locked and read as the full intake begins (terdut_intake_begin, migrations 0900, 1030). */
async function openAndBegin(db: Queryable, groupKey: string): Promise<void> {
  const call = await newGroupCall(db, groupKey, [`${groupKey}-a`, `${groupKey}-b`], now);
  const [opened] = await openIfNewGroups(db, [call]);
  assert.ok(typeof opened === 'object', `${groupKey} opened its incident (${JSON.stringify(opened)})`);
  const fingerprints = call.alerts.map((alert) => alert.fingerprint);
  const locked = await lockGroupForNotification(db, groupKey, fingerprints, staleBefore);
  assert.equal(locked.incident?.id, opened.opened, `${groupKey}'s open incident read`);
  assert.deepEqual(locked.alerts.map((alert) => alert.fingerprint).sort(), [...fingerprints].sort());
  assert.equal(locked.links.length, 2, `${groupKey}'s links read`);
}

async function checkBeginPlansSurviveGrowth(db: Database): Promise<void> {
  await planOnSmallTablesThenGrow(db, 'begin', ['alerts', 'incidents', 'incident_alerts'], openAndBegin);
  for (const table of ['alerts', 'incidents', 'incident_alerts']) {
    const scans = await wholeTableScansDuring(db, table, (tx) =>
      openAndBegin(tx, `begin-after-growth-${table}`),
    );
    assert.equal(scans, 0, `the full intake's first call scanned the whole of ${table} after alerts grew`);
  }
}

testOnOneConnectionOfEach(
  "the full intake's first call finds its rows by index whatever the size of alerts when its plans were made",
  checkBeginPlansSurviveGrowth,
);
