/**
 * An alert that flaps for months belongs to thousands of past incidents.
 * What a notification reads of that history must not grow with it: the
 * intake asks only whether the alert's current occurrence belongs to an
 * incident (migration 1050). At 20,000 past incidents reading them all
 * made each of the alert's notifications 11 times dearer
 * (bench/README.md, "A flapping alert's history"). Nor may it grow when the
 * history arrives under plans a connection kept from its first calls: a
 * join of links and alerts, kept so, read every link for every alert.
 */
import assert from 'node:assert/strict';
import { newGroupCall, rowsReadDuring, testOnOneConnectionOfEach } from '@terdut/test-support';
import type { Database, Queryable } from '../db/database.ts';
import { lockGroupForNotification, openIfNewGroups } from './alert-groups.ts';
import { currentOccurrenceLinks, type IncidentAlertLink } from './incident-alerts.ts';
import { lockAlertsByFingerprint, updateAlertState } from './alerts.ts';

const now = new Date('2026-12-06T10:00:00Z');
const staleBefore = new Date(now.getTime() - 3_600_000);
const PAST_INCIDENTS = 2_000;
/**
 * Links a read may count for two alerts with one current link each: a
 * bitmap scan counts each row it reads twice in the statistics, and a
 * handful is what matters against the history's 4,000.
 */
const FEW_LINKS = 8;

/**
 * `count` resolved incidents of the group before `before`, each with an
 * older occurrence of every alert of the group as a member, as `count`
 * flaps would have left them.
 */
async function addPastFlaps(db: Queryable, groupKey: string, count: number, before: Date): Promise<void> {
  await db.query(
    `WITH added AS (
       INSERT INTO incidents (group_key, title, status, triggered_at, resolved_at, resolution_source)
       SELECT $1, 'Past flap', 'resolved', $2::timestamptz - n * interval '20 minutes',
              $2::timestamptz - n * interval '20 minutes' + interval '5 minutes', 'alerts'
         FROM generate_series(1, $3::int) AS n
       RETURNING id, triggered_at
     )
     INSERT INTO incident_alerts (incident_id, alert_id, occurrence_starts_at, added_at)
     SELECT added.id, a.id, added.triggered_at, added.triggered_at
       FROM added, alerts a WHERE a.group_key = $1`,
    [groupKey, before, count],
  );
}

/** A link as the test compares it (Dates as numbers). */
const comparable = (links: IncidentAlertLink[]) =>
  links.map((link) => ({ ...link, occurrence_starts_at: link.occurrence_starts_at.getTime() }));

async function checkHistoryIsNotRead(db: Database): Promise<void> {
  const groupKey = 'flapping';
  const call = await newGroupCall(db, groupKey, ['flap-a', 'flap-b'], now);
  const [opened] = await openIfNewGroups(db, [call]);
  assert.ok(typeof opened === 'object', `the group opened its incident (${JSON.stringify(opened)})`);
  const fingerprints = call.alerts.map((alert) => alert.fingerprint).sort();
  const stored = (
    await db.query<{ id: number; starts_at: Date }>(
      'SELECT id, starts_at FROM alerts WHERE group_key = $1 ORDER BY fingerprint',
      [groupKey],
    )
  ).rows;
  const ids = stored.map((row) => row.id);
  // The connection's first calls, while the tables hold a few rows: more
  // than five, so that the statements whose plans are kept settle on them
  // (analysed first: ANALYZE would make the connection plan again). Then
  // the history arrives at once, with no ANALYZE after.
  await db.exec('ANALYZE incidents; ANALYZE incident_alerts');
  for (let index = 0; index < 8; index++) {
    await db.transaction((tx) => lockGroupForNotification(tx, groupKey, fingerprints, staleBefore));
    await currentOccurrenceLinks(db, groupKey, stored);
  }
  await addPastFlaps(db, groupKey, PAST_INCIDENTS, call.alerts[0]!.starts_at);
  // What both reads must answer: each alert's current occurrence, in the open incident.
  const current = ids.map((id) => ({
    incident_id: opened.opened,
    alert_id: id,
    occurrence_starts_at: call.alerts[0]!.starts_at.getTime(),
  }));

  for (const analysed of [false, true]) {
    if (analysed) await db.exec('ANALYZE incidents; ANALYZE incident_alerts');
    const state = analysed ? 'analysed' : 'not yet analysed';
    let locked: IncidentAlertLink[] = [];
    const readByBegin = await rowsReadDuring(db, 'incident_alerts', async (tx) => {
      locked = (await lockGroupForNotification(tx, groupKey, fingerprints, staleBefore)).links;
    });
    assert.deepEqual(
      comparable(locked).sort((a, b) => a.alert_id - b.alert_id),
      current,
      `the full intake's first call (${state})`,
    );
    assert.ok(readByBegin <= FEW_LINKS, `the full intake's first call read ${readByBegin} links (${state})`);

    let read: IncidentAlertLink[] = [];
    const readByStep = await rowsReadDuring(db, 'incident_alerts', async (tx) => {
      read = await currentOccurrenceLinks(tx, groupKey, stored);
    });
    assert.deepEqual(
      comparable(read).sort((a, b) => a.alert_id - b.alert_id),
      current,
      `currentOccurrenceLinks (${state})`,
    );
    assert.ok(readByStep <= FEW_LINKS, `currentOccurrenceLinks read ${readByStep} links (${state})`);
  }
}

testOnOneConnectionOfEach(
  "a notification reads only its alerts' current occurrences' links, not their years of flapping",
  checkHistoryIsNotRead,
);

async function checkOccurrenceInTwoIncidents(db: Database): Promise<void> {
  // An occurrence that fired through a manual resolve joined the group's
  // next incident too: both links answer, newest incident first.
  const groupKey = 'through-a-resolve';
  const call = await newGroupCall(db, groupKey, ['steady'], now);
  const [opened] = await openIfNewGroups(db, [call]);
  assert.ok(typeof opened === 'object');
  await addPastFlaps(db, groupKey, 3, call.alerts[0]!.starts_at);
  const readAlert = async () =>
    (
      await db.query<{ id: number; starts_at: Date }>(
        'SELECT id, starts_at FROM alerts WHERE group_key = $1',
        [groupKey],
      )
    ).rows[0]!;
  const alert = await readAlert();
  await db.query(
    `UPDATE incidents SET status = 'resolved', resolved_at = $2, resolution_source = 'manual' WHERE id = $1`,
    [opened.opened, now],
  );
  const next = await db.query<{ id: number }>(
    `INSERT INTO incidents (group_key, title, triggered_at) VALUES ($1, 'Next', $2) RETURNING id`,
    [groupKey, now],
  );
  await db.query(
    `INSERT INTO incident_alerts (incident_id, alert_id, occurrence_starts_at, added_at) VALUES ($1, $2, $3, $4)`,
    [next.rows[0]!.id, alert.id, alert.starts_at, now],
  );
  const both = [next.rows[0]!.id, opened.opened];
  const fingerprints = call.alerts.map((carried) => carried.fingerprint);
  const begin = async () =>
    (await db.transaction((tx) => lockGroupForNotification(tx, groupKey, fingerprints, staleBefore))).links;
  assert.deepEqual(
    (await currentOccurrenceLinks(db, groupKey, [alert])).map((link) => link.incident_id),
    both,
  );
  assert.deepEqual(
    (await begin()).map((link) => link.incident_id),
    both,
  );
  // A start stored with microseconds (the server's Dates keep milliseconds) still finds its links.
  await db.query(`UPDATE alerts SET starts_at = starts_at + interval '500 microseconds' WHERE id = $1`, [
    alert.id,
  ]);
  assert.deepEqual(
    (await currentOccurrenceLinks(db, groupKey, [await readAlert()])).map((link) => link.incident_id),
    both,
  );
  assert.deepEqual(
    (await begin()).map((link) => link.incident_id),
    both,
  );
}

testOnOneConnectionOfEach(
  'an occurrence that belongs to two incidents of its group has both links, newest incident first',
  checkOccurrenceInTwoIncidents,
);

async function checkOccurrenceEndIsRecordedOnItsLinksAlone(db: Database): Promise<void> {
  // An alert that fires again records, on its old occurrence's links, how
  // it ended there (migration 1090): those links alone are read, found by
  // (alert_id, occurrence_starts_at), not every link of the alert's past.
  const groupKey = 'flapping-again';
  const call = await newGroupCall(db, groupKey, ['flap'], now);
  const [opened] = await openIfNewGroups(db, [call]);
  assert.ok(typeof opened === 'object', `the group opened its incident (${JSON.stringify(opened)})`);
  const fingerprint = call.alerts[0]!.fingerprint;
  // Statistics of a few links per alert, then the history at once.
  await db.exec('ANALYZE incidents; ANALYZE incident_alerts; ANALYZE alerts');
  await addPastFlaps(db, groupKey, PAST_INCIDENTS, call.alerts[0]!.starts_at);

  for (const analysed of [false, true]) {
    if (analysed) await db.exec('ANALYZE incidents; ANALYZE incident_alerts; ANALYZE alerts');
    const state = analysed ? 'analysed' : 'not yet analysed';
    const [stored] = await lockAlertsByFingerprint(db, [fingerprint]);
    const next = new Date(stored!.starts_at.getTime() + 60_000);
    const read = await rowsReadDuring(db, 'incident_alerts', async (tx) => {
      await updateAlertState(tx, stored!, { ...stored!, starts_at: next }, now, 'new');
    });
    assert.ok(read <= FEW_LINKS, `firing again read ${read} links (${state})`);
    const recorded = await db.query<{ occurrence_starts_at: Date; occurrence_ends_at: Date }>(
      `SELECT occurrence_starts_at, occurrence_ends_at FROM incident_alerts
        WHERE alert_id = $1 AND occurrence_ends_at IS NOT NULL ORDER BY occurrence_starts_at`,
      [stored!.id],
    );
    assert.deepEqual(
      recorded.rows.at(-1),
      { occurrence_starts_at: stored!.starts_at, occurrence_ends_at: next },
      `the occurrence that ended, ended when the next began (${state})`,
    );
    assert.equal(recorded.rows.length, analysed ? 2 : 1, `its past flaps are left as they were (${state})`);
    // The new occurrence joins an incident, as the intake would link it.
    await db.query(
      `WITH i AS (INSERT INTO incidents (group_key, title, triggered_at) VALUES ($1, 'Again', $2) RETURNING id)
       INSERT INTO incident_alerts (incident_id, alert_id, occurrence_starts_at, added_at)
       SELECT i.id, $3, $4, $2 FROM i`,
      [`${groupKey}-${state}`, now, stored!.id, next],
    );
  }
}

testOnOneConnectionOfEach(
  "an alert that fires again records its old occurrence's end on that occurrence's links, not on its years of flapping",
  checkOccurrenceEndIsRecordedOnItsLinksAlone,
);
