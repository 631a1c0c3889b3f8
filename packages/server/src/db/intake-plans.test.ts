/**
 * The intake calls (migrations 0960, 1000, 1030, 1050) keep their
 * statements' plans for the life of a connection. A plan made while the
 * tables were small would read the whole history on every new group,
 * repeat and full intake from then on: by whole-table scans (7 ms per call
 * while a benchmark filled `alerts`), and, with those priced out, by
 * walking a whole index instead (the stale alerts by fingerprint, the
 * links of every incident). Whatever the tables' size when the plans were
 * made, each call must read only the rows of its own group.
 */
import assert from 'node:assert/strict';
import { newGroupCall, rowsReadDuring, testOnOneConnectionOfEach } from '@terdut/test-support';
import { lockGroupForNotification, openIfNewGroups, touchIfRepeat } from '../repositories/alert-groups.ts';
import type { Database, Queryable } from './database.ts';

const now = new Date('2026-12-06T10:00:00Z');
const staleBefore = new Date(now.getTime() - 3_600_000);
const HISTORY = 5_000;
/**
 * Rows of one table a call on a 2-alert group may read: its alerts, links
 * and incident, the foreign keys' checks, the statistics triggers' reads,
 * with bitmap scans counting each row twice. The history holds 5,000.
 */
const OWN_ROWS = 50;
const TABLES = ['alerts', 'incidents', 'incident_alerts'];
const ANALYZE_TABLES = TABLES.map((table) => `ANALYZE ${table}`).join('; ');

/** A new group opened and then repeated unchanged; both calls must take the shortcut. */
async function openAndRepeat(db: Queryable, groupKey: string): Promise<void> {
  const call = await newGroupCall(db, groupKey, [`${groupKey}-a`, `${groupKey}-b`], now);
  const [opened] = await openIfNewGroups(db, [call]);
  assert.ok(typeof opened === 'object', `${groupKey} opened its incident (${JSON.stringify(opened)})`);
  const repeated = await touchIfRepeat(db, groupKey, call.alerts, now, staleBefore);
  assert.equal(repeated, opened.opened, `${groupKey} repeated unchanged`);
}

/** A group opened, then locked and read as the full intake begins (terdut_intake_begin). */
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

/**
 * A connection's first calls of `call`, while the tables hold a few rows:
 * more than five, so the functions' statements settle on the plans they
 * keep (analysed first: ANALYZE would make the connection plan again).
 * Then a history of 5,000 incidents arrives at once, each with a firing
 * alert and its link, with no ANALYZE after.
 */
async function planOnSmallTablesThenGrow(
  db: Database,
  groupKeyPrefix: string,
  call: (db: Queryable, groupKey: string) => Promise<void>,
): Promise<void> {
  await call(db, `${groupKeyPrefix}-first`);
  await db.exec(ANALYZE_TABLES);
  for (let index = 0; index < 8; index++) await call(db, `${groupKeyPrefix}-small-${index}`);
  await db.query(
    `WITH opened AS (
       INSERT INTO incidents (group_key, title, status, triggered_at, resolved_at, resolution_source)
       SELECT 'history-' || n, 'History', 'resolved', $1, $1, 'alerts' FROM generate_series(1, $2::int) AS n
       RETURNING id, group_key
     ), fired AS (
       INSERT INTO alerts (fingerprint, group_key, name, status, labels, annotations, starts_at,
                           received_at, last_seen_at, incident_id)
       SELECT 'history-' || opened.id, opened.group_key, 'History', 'firing', '{}', '{}', $1, $1, $1, opened.id
         FROM opened
       RETURNING id, incident_id, starts_at
     )
     INSERT INTO incident_alerts (incident_id, alert_id, occurrence_starts_at, added_at)
     SELECT incident_id, id, starts_at, $1 FROM fired`,
    [now, HISTORY],
  );
}

/** Checks every table `call` reads, on a group of its own each time. */
async function checkReadsOwnRows(
  db: Database,
  what: string,
  groupKeyPrefix: string,
  call: (db: Queryable, groupKey: string) => Promise<void>,
): Promise<void> {
  await planOnSmallTablesThenGrow(db, groupKeyPrefix, call);
  for (const analysed of [false, true]) {
    // Analysed, as autovacuum and the embedded maintenance would.
    if (analysed) await db.exec(ANALYZE_TABLES);
    for (const table of TABLES) {
      const read = await rowsReadDuring(db, table, (tx) =>
        call(tx, `${groupKeyPrefix}-grown-${analysed}-${table}`),
      );
      assert.ok(
        read <= OWN_ROWS,
        `${what} read ${read} rows of ${table} after the history grew (${analysed ? 'analysed' : 'not yet analysed'})`,
      );
    }
  }
}

testOnOneConnectionOfEach(
  'a new group and a repeat read only their own rows whatever the size of the tables when the plans were made',
  (db) => checkReadsOwnRows(db, 'a new group and its repeat', 'plans', openAndRepeat),
);

testOnOneConnectionOfEach(
  "the full intake's first call reads only its group's rows whatever the size of the tables when its plans were made",
  (db) => checkReadsOwnRows(db, "the full intake's first call", 'begin', openAndBegin),
);
