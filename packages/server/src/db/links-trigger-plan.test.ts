/**
 * The statistics trigger on incident links (migrations 0800, 0960, 0980)
 * joins the new links with `alerts`. A connection keeps that statement's
 * plan from its first call; a plan made while `alerts` was small would scan
 * the whole table for every notification from then on, which is what made a
 * 1-alert notification cost 2.7 ms more. Whatever the table's size when the
 * plan was made, each link must find its alert by key.
 */
import assert from 'node:assert/strict';
import { testOnOneConnectionOfEach, wholeTableScansDuring } from '@terdut/test-support';
import type { Database, Queryable } from './database.ts';

/** Writes one incident with `alerts` new alerts and their links (the trigger fires once). */
async function linkNewAlerts(db: Queryable, tag: string, alerts: number): Promise<void> {
  await db.query(
    `WITH incident AS (
       INSERT INTO incidents (group_key, title, triggered_at) VALUES ($1, $1, now()) RETURNING id
     ), stored AS (
       INSERT INTO alerts (fingerprint, group_key, name, status, labels, annotations, starts_at,
                           received_at, last_seen_at, incident_id)
       SELECT $1 || '-' || n, $1, 'Plan' || (n % 7), 'firing', '{}', '{}', now(), now(), now(),
              (SELECT id FROM incident)
         FROM generate_series(1, $2::int) AS n
       RETURNING id, starts_at
     )
     INSERT INTO incident_alerts (incident_id, alert_id, occurrence_starts_at, added_at)
     SELECT (SELECT id FROM incident), id, starts_at, now() FROM stored`,
    [tag, alerts],
  );
}

/** Whole-table scans of `alerts` while linking `alerts` new alerts. */
function scansOfAlertsWhileLinking(db: Database, tag: string, alerts: number): Promise<number> {
  return wholeTableScansDuring(db, 'alerts', (tx) => linkNewAlerts(tx, tag, alerts));
}

async function checkPlanSurvivesGrowth(db: Database): Promise<void> {
  // The connection's first links, while alerts holds a handful of rows:
  // a scan of a table this small is what the planner should choose.
  await linkNewAlerts(db, 'small', 3);
  await db.exec('ANALYZE alerts');
  await scansOfAlertsWhileLinking(db, 'while-small', 1);
  // The history grows by 5,000 links at once on the plan made then: one
  // scan for all of them would do, one per link must not happen.
  const whileGrowing = await scansOfAlertsWhileLinking(db, 'history', 5_000);
  assert.ok(whileGrowing <= 1, `linking 5,000 alerts scanned alerts ${whileGrowing} times`);
  // Analysed, as autovacuum and the embedded maintenance would.
  await db.exec('ANALYZE alerts');
  assert.ok((await scansOfAlertsWhileLinking(db, 'after-growth', 1)) <= 1);
  const counted = await db.query<{ occurrences: number }>(
    `SELECT coalesce(sum(occurrences), 0)::int AS occurrences FROM stats_occurrence_deltas`,
  );
  assert.equal(counted.rows[0]!.occurrences, 3 + 1 + 5_000 + 1, 'every link is counted once');
}

testOnOneConnectionOfEach(
  'a link finds its alert by key whatever the size of alerts when the plan was made',
  checkPlanSurvivesGrowth,
);
