/**
 * Statistics over alerts and incidents, computed in SQL (the same on
 * PostgreSQL and PGlite) from rollups that triggers keep in the same
 * transaction as the rows they summarise (migration 0800 says how and why),
 * so a request reads a few thousand summary rows, not the retained history.
 *
 * What counts: every row still stored, archived ones included. Archiving
 * takes an incident out of the work queue; it does not mean it did not
 * happen. The window is what retention (TERDUT_RETENTION) keeps.
 *
 * An alert *occurrence* is one alert taking part in one incident
 * (`incident_alerts`), timed by when that occurrence started firing
 * (`occurrence_starts_at`, Prometheus' startsAt). Alert rows themselves are
 * reused across occurrences of a fingerprint, so counting rows would make an
 * alert that fires fifty times a day look like one that fired once.
 *
 * Every rollup is read together with its `*_deltas` table (what the triggers
 * appended since the last fold), in one statement and so one snapshot: the
 * answer is exact whether or not the fold has run.
 */
import type { Queryable } from '../db/database.ts';

export interface AlertCountsRow {
  total: number;
  firing: number;
  resolved: number;
}

/**
 * Alert rows by state. A firing alert last seen before `staleBefore` counts as
 * resolved even if the staleness sweep has not marked it yet: that is what the
 * server says about it everywhere else (resolution_source `expiry`). Which
 * alerts are firing depends on the moment asked, so those are counted live
 * (the partial index `alerts_stale_candidates` holds only firing alerts);
 * the total comes from the rollup.
 */
export async function countAlerts(db: Queryable, staleBefore: Date): Promise<AlertCountsRow> {
  const result = await db.query<AlertCountsRow>(
    `SELECT t.total::int AS total, f.firing::int AS firing, (t.total - f.firing)::int AS resolved
       FROM (SELECT coalesce(sum(alerts), 0) AS total
               FROM (SELECT alerts FROM stats_totals UNION ALL SELECT alerts FROM stats_total_deltas) s) t,
            (SELECT count(*) AS firing FROM alerts WHERE status = 'firing' AND last_seen_at >= $1) f`,
    [staleBefore],
  );
  return result.rows[0]!;
}

/** Alert names by number of occurrences, most first; ties by name. */
export async function topAlertNames(
  db: Queryable,
  limit: number,
): Promise<{ name: string; count: number }[]> {
  const result = await db.query<{ name: string; count: number }>(
    `SELECT name, sum(occurrences)::int AS count
       FROM (SELECT name, occurrences FROM stats_occurrences_by_name
             UNION ALL SELECT name, occurrences FROM stats_occurrence_deltas) o
      GROUP BY name
     HAVING sum(occurrences) > 0
      ORDER BY count DESC, name
      LIMIT $1`,
    [limit],
  );
  return result.rows;
}

/**
 * Occurrences by the weekday (0 = Sunday) and hour of day (0-23) they
 * started on in `timeZone`; only the pairs that have any.
 *
 * The rollup counts by quarter hour (UTC). A quarter whose first and last
 * instant fall in the same local hour, 15 minutes apart on the local clock,
 * lies wholly in that hour and weekday: true for every quarter in zones
 * whose offsets are whole quarter hours (all of them today). For any other
 * quarter (a local mean time before a zone's first standard time, a
 * transition at an odd minute) its rows are counted one by one, so the
 * answer stays exact; the scan runs only when such a quarter has
 * occurrences (a one-time filter).
 */
export async function occurrencesByLocalHour(
  db: Queryable,
  timeZone: string,
): Promise<{ day: number; hour: number; count: number }[]> {
  const result = await db.query<{ day: number; hour: number; count: number }>(
    `WITH quarters AS (
       SELECT quarter, sum(occurrences) AS occurrences
         FROM (SELECT quarter, occurrences FROM stats_occurrences_by_quarter
               UNION ALL SELECT quarter, occurrences FROM stats_occurrence_deltas) q
        -- extract(hour ...) of an infinite instant is NULL: such occurrences count by name only.
        WHERE isfinite(quarter)
        GROUP BY quarter
       HAVING sum(occurrences) <> 0
     ), local AS (
       SELECT quarter, occurrences, first_local,
              last_local - first_local = interval '14:59.999999'
                AND date_trunc('hour', first_local) = date_trunc('hour', last_local) AS whole
         FROM (SELECT quarter, occurrences, quarter AT TIME ZONE $1 AS first_local,
                      (quarter + interval '14:59.999999') AT TIME ZONE $1 AS last_local
                 FROM quarters) bounds
     ), split AS (
       SELECT quarter FROM local WHERE NOT whole
     )
     SELECT day, hour, sum(count)::int AS count
       FROM (SELECT extract(dow FROM first_local)::int AS day, extract(hour FROM first_local)::int AS hour,
                    sum(occurrences) AS count
               FROM local WHERE whole GROUP BY 1, 2
             UNION ALL
             SELECT extract(dow FROM ia.occurrence_starts_at AT TIME ZONE $1)::int,
                    extract(hour FROM ia.occurrence_starts_at AT TIME ZONE $1)::int, count(*)
               FROM incident_alerts ia
              WHERE EXISTS (SELECT 1 FROM split)
                AND stats_quarter(ia.occurrence_starts_at) IN (SELECT quarter FROM split)
              GROUP BY 1, 2) c
      GROUP BY day, hour
      ORDER BY day, hour`,
    [timeZone],
  );
  return result.rows;
}

export interface IncidentStatsRow {
  total: number;
  triggered: number;
  acknowledged: number;
  resolved: number;
  /** null when no incident has been acknowledged: no data is not zero. */
  mtta_seconds: number | null;
  /** null when no incident has been resolved. */
  mttr_seconds: number | null;
}

/**
 * Incidents by status, with mean time to acknowledge (over incidents that
 * carry an acknowledgement) and to resolve (over resolved incidents), both
 * measured from `triggered_at`, in seconds to the millisecond. The rollup
 * keeps the exact numeric sums avg() would add up; dividing them by the
 * counts is what avg() does.
 */
export async function incidentStats(db: Queryable): Promise<IncidentStatsRow> {
  const result = await db.query<IncidentStatsRow>(
    `SELECT coalesce(sum(incidents), 0)::int AS total,
            coalesce(sum(triggered), 0)::int AS triggered,
            coalesce(sum(acknowledged), 0)::int AS acknowledged,
            coalesce(sum(resolved), 0)::int AS resolved,
            CASE WHEN sum(acknowledgements) > 0
                 THEN round(sum(acknowledge_seconds) / sum(acknowledgements), 3)::float8 END AS mtta_seconds,
            CASE WHEN sum(resolved) > 0
                 THEN round(sum(resolve_seconds) / sum(resolved), 3)::float8 END AS mttr_seconds
       FROM (SELECT incidents, triggered, acknowledged, resolved, acknowledgements, acknowledge_seconds, resolve_seconds
               FROM stats_totals
             UNION ALL
             SELECT incidents, triggered, acknowledged, resolved, acknowledgements, acknowledge_seconds, resolve_seconds
               FROM stats_total_deltas) t`,
  );
  return result.rows[0]!;
}

/**
 * Moves the deltas the triggers appended into the rollups, in one
 * transaction: a reader sees them on one side or the other, never both.
 * Runs on one replica at a time (the others skip), and never waits for the
 * intake, which only appends. Returns how many delta rows it folded, or
 * undefined when another replica was folding.
 */
export async function foldStatisticsDeltas(tx: Queryable): Promise<number | undefined> {
  const locked = await tx.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [
    STATISTICS_FOLD_LOCK_KEY,
  ]);
  if (locked.rows[0]?.locked !== true) return undefined;
  const occurrences = await tx.query<{ folded: number }>(
    `WITH moved AS (
       DELETE FROM stats_occurrence_deltas RETURNING quarter, name, occurrences
     ), by_name AS (
       INSERT INTO stats_occurrences_by_name AS r (name, occurrences)
       SELECT name, sum(occurrences) FROM moved GROUP BY name ORDER BY name
       ON CONFLICT (name) DO UPDATE SET occurrences = r.occurrences + EXCLUDED.occurrences
     ), by_quarter AS (
       INSERT INTO stats_occurrences_by_quarter AS r (quarter, occurrences)
       SELECT quarter, sum(occurrences) FROM moved GROUP BY quarter ORDER BY quarter
       ON CONFLICT (quarter) DO UPDATE SET occurrences = r.occurrences + EXCLUDED.occurrences
     )
     SELECT count(*)::int AS folded FROM moved`,
  );
  const folded = occurrences.rows[0]!.folded;
  if (folded > 0) {
    // Retention takes history away: names and quarters with nothing left go.
    await tx.query('DELETE FROM stats_occurrences_by_name WHERE occurrences = 0');
    await tx.query('DELETE FROM stats_occurrences_by_quarter WHERE occurrences = 0');
  }
  const totals = await tx.query<{ folded: number }>(
    `WITH moved AS (
       DELETE FROM stats_total_deltas RETURNING *
     ), sums AS (
       SELECT count(*) AS folded, coalesce(sum(alerts), 0) AS alerts, coalesce(sum(incidents), 0) AS incidents,
              coalesce(sum(triggered), 0) AS triggered, coalesce(sum(acknowledged), 0) AS acknowledged,
              coalesce(sum(resolved), 0) AS resolved, coalesce(sum(acknowledgements), 0) AS acknowledgements,
              coalesce(sum(acknowledge_seconds), 0) AS acknowledge_seconds,
              coalesce(sum(resolve_seconds), 0) AS resolve_seconds
         FROM moved
     ), updated AS (
       UPDATE stats_totals t
          SET alerts = t.alerts + s.alerts, incidents = t.incidents + s.incidents,
              triggered = t.triggered + s.triggered, acknowledged = t.acknowledged + s.acknowledged,
              resolved = t.resolved + s.resolved, acknowledgements = t.acknowledgements + s.acknowledgements,
              acknowledge_seconds = t.acknowledge_seconds + s.acknowledge_seconds,
              resolve_seconds = t.resolve_seconds + s.resolve_seconds
         FROM sums s WHERE s.folded > 0
     )
     SELECT folded::int FROM sums`,
  );
  return folded + totals.rows[0]!.folded;
}

// Any constant works; it only has to be the same for every replica.
const STATISTICS_FOLD_LOCK_KEY = 7_362_800;
