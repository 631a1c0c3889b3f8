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
 * (the partial index `alerts_firing_group` holds only firing alerts);
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

/** Which occurrence counts to place: the folded rollup, the deltas not folded yet, or both. */
export type OccurrenceSource = 'folded' | 'unfolded' | 'all';

const OCCURRENCE_SOURCES: Record<OccurrenceSource, string> = {
  folded: 'SELECT quarter, occurrences FROM stats_occurrences_by_quarter',
  unfolded: 'SELECT quarter, occurrences FROM stats_occurrence_deltas WHERE quarter IS NOT NULL',
  all: `SELECT quarter, occurrences FROM stats_occurrences_by_quarter
        UNION ALL
        SELECT quarter, occurrences FROM stats_occurrence_deltas WHERE quarter IS NOT NULL`,
};

export interface LocalHourCounts {
  /**
   * `stats_totals.occurrence_generation` in the same snapshot: the folded
   * rollup does not change until it moves, so counts of the folded source
   * can be kept and added to the unfolded ones read later at the same
   * generation.
   */
  generation: number;
  /**
   * Quarters of the source that lie in two local hours in this zone, counted
   * from incident_alerts row by row: that count is of every row in the
   * quarter, folded or not, so it adds up only with source `all`.
   */
  splitQuarters: number;
  /** Occurrences by weekday (0 = Sunday) and hour of day; only the pairs that have any. */
  counts: { day: number; hour: number; count: number }[];
}

/**
 * Occurrences by the weekday (0 = Sunday) and hour of day (0-23) they
 * started on in `timeZone`, from `source`.
 *
 * The rollup counts by quarter hour (UTC), and the zone is applied here, in
 * three tiers so that the answer is exact and the zone's rules are looked up
 * a few hundred times, not once per quarter:
 * - a UTC day whose first and last instant have the same offset, a whole
 *   number of quarter hours (every day in every zone today, except those of
 *   a summer-time change), places its quarters by arithmetic;
 * - in the other days each quarter is looked up: one whose first and last
 *   instant fall in the same local hour, 15 minutes apart on the local
 *   clock, lies wholly in that hour;
 * - the quarters left (a local mean time like +05:53:28 before a zone's
 *   first standard time, a change at an odd minute) are counted row by row
 *   from incident_alerts, a scan that runs only when there are such
 *   quarters (a one-time filter).
 * Every zone has had at most one offset change in a day, which is what the
 * first tier relies on. Occurrences at ±infinity have no hour (extract gives
 * NULL): they count by name only, as before.
 */
export async function occurrencesByLocalHour(
  db: Queryable,
  timeZone: string,
  sourceName: OccurrenceSource,
): Promise<LocalHourCounts> {
  // Quarters are numbered from 1970-01-01 00:00 UTC (a Thursday, weekday 4);
  // (n % m + m) % m is the remainder that floors for quarters before 1970 too.
  // The source is read three times (days, the looked-up quarters, the rest):
  // seq scans of ~17,000 narrow rows are cheaper than materialising them.
  // Rollup and deltas are not summed per quarter first: counting is additive.
  const source = OCCURRENCE_SOURCES[sourceName];
  const result = await db.query<{
    day: number;
    hour: number;
    count: number;
    generation: number;
    split: number;
  }>(
    `WITH days AS MATERIALIZED (
       -- Materialised: the zone is looked up twice per day, not pushed down to every quarter.
       SELECT utc_day,
              CASE WHEN first_offset = last_offset AND first_offset % 900 = 0
                   THEN (first_offset / 900)::integer END AS offset_quarters
         FROM (SELECT utc_day,
                      round(date_part('epoch', to_timestamp(utc_day * 86400.0) AT TIME ZONE $1))::bigint
                        - utc_day * 86400::bigint AS first_offset,
                      round(date_part('epoch', (to_timestamp(utc_day * 86400.0) + interval '23:59:59.999999') AT TIME ZONE $1)
                            - date_part('epoch', to_timestamp(utc_day * 86400.0) + interval '23:59:59.999999'))::bigint
                        AS last_offset
                 FROM (SELECT DISTINCT (quarter - (quarter % 96 + 96) % 96) / 96 AS utc_day
                         FROM (${source}) q) d) o
     ), looked_up AS MATERIALIZED (
       SELECT quarter, occurrences, first_local,
              last_local - first_local = interval '14:59.999999'
                AND date_part('hour', first_local) = date_part('hour', last_local) AS whole
         FROM (SELECT q.quarter, q.occurrences, to_timestamp(q.quarter * 900.0) AT TIME ZONE $1 AS first_local,
                      (to_timestamp(q.quarter * 900.0) + interval '14:59.999999') AT TIME ZONE $1 AS last_local
                 FROM (${source}) q
                 JOIN days d ON d.utc_day = (q.quarter - (q.quarter % 96 + 96) % 96) / 96
                WHERE d.offset_quarters IS NULL) l
     ), split AS (
       SELECT DISTINCT quarter FROM looked_up WHERE NOT whole
     )
     -- One row even when there is nothing to count: the generation is always wanted.
     SELECT (SELECT occurrence_generation FROM stats_totals) AS generation, (SELECT count(*) FROM split)::int AS split,
            h.day, h.hour, h.count
       FROM (VALUES (1)) AS one (n)
       LEFT JOIN (
     SELECT day::int AS day, hour::int AS hour, sum(count)::int AS count
       FROM (SELECT ((local_day + 4) % 7 + 7) % 7 AS day, local_quarter_of_day / 4 AS hour, sum(occurrences) AS count
               FROM (SELECT (local_quarter - (local_quarter % 96 + 96) % 96) / 96 AS local_day,
                            (local_quarter % 96 + 96) % 96 AS local_quarter_of_day, occurrences
                       FROM (SELECT q.quarter + d.offset_quarters AS local_quarter, q.occurrences
                               FROM (${source}) q
                               JOIN days d ON d.utc_day = (q.quarter - (q.quarter % 96 + 96) % 96) / 96
                              WHERE d.offset_quarters IS NOT NULL) p) l
              GROUP BY 1, 2
             UNION ALL
             SELECT date_part('dow', first_local), date_part('hour', first_local), sum(occurrences)
               FROM looked_up WHERE whole GROUP BY 1, 2
             UNION ALL
             SELECT extract(dow FROM ia.occurrence_starts_at AT TIME ZONE $1),
                    extract(hour FROM ia.occurrence_starts_at AT TIME ZONE $1), count(*)
               FROM incident_alerts ia
              WHERE EXISTS (SELECT 1 FROM split)
                AND stats_quarter(ia.occurrence_starts_at) IN (SELECT quarter FROM split)
              GROUP BY 1, 2) c
      GROUP BY 1, 2
     HAVING sum(count) <> 0) h ON true
      ORDER BY h.day, h.hour`,
    [timeZone],
  );
  return {
    generation: result.rows[0]!.generation,
    splitQuarters: result.rows[0]!.split,
    counts: result.rows
      .filter((row) => row.day !== null)
      .map((row) => ({ day: row.day, hour: row.hour, count: row.count })),
  };
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
       SELECT quarter, sum(occurrences) FROM moved WHERE quarter IS NOT NULL GROUP BY quarter ORDER BY quarter
       ON CONFLICT (quarter) DO UPDATE SET occurrences = r.occurrences + EXCLUDED.occurrences
     ), next_generation AS (
       UPDATE stats_totals SET occurrence_generation = occurrence_generation + 1 WHERE EXISTS (SELECT 1 FROM moved)
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
