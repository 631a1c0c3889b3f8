/**
 * Statistics over alerts and incidents, computed in SQL (the same on
 * PostgreSQL and PGlite) so that a large history never travels to the server.
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
 * server says about it everywhere else (resolution_source `expiry`).
 */
export async function countAlerts(db: Queryable, staleBefore: Date): Promise<AlertCountsRow> {
  const result = await db.query<AlertCountsRow>(
    `SELECT count(*)::int AS total,
            count(*) FILTER (WHERE status = 'firing' AND last_seen_at >= $1)::int AS firing,
            count(*) FILTER (WHERE NOT (status = 'firing' AND last_seen_at >= $1))::int AS resolved
       FROM alerts`,
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
    `SELECT a.name, count(*)::int AS count
       FROM incident_alerts ia JOIN alerts a ON a.id = ia.alert_id
      GROUP BY a.name
      ORDER BY count DESC, a.name
      LIMIT $1`,
    [limit],
  );
  return result.rows;
}

/** Occurrences by the hour of day they started in `timeZone`: 24 rows, 0-23, empty hours as 0. */
export async function occurrencesByHour(
  db: Queryable,
  timeZone: string,
): Promise<{ hour: number; count: number }[]> {
  const result = await db.query<{ hour: number; count: number }>(
    `SELECT h.hour, coalesce(c.count, 0)::int AS count
       FROM generate_series(0, 23) AS h(hour)
       LEFT JOIN (SELECT extract(hour FROM ia.occurrence_starts_at AT TIME ZONE $1)::int AS hour, count(*) AS count
                    FROM incident_alerts ia GROUP BY 1) c ON c.hour = h.hour
      ORDER BY h.hour`,
    [timeZone],
  );
  return result.rows;
}

/** Occurrences by the weekday they started in `timeZone`: 7 rows, 0 = Sunday, empty days as 0. */
export async function occurrencesByWeekday(
  db: Queryable,
  timeZone: string,
): Promise<{ day: number; count: number }[]> {
  const result = await db.query<{ day: number; count: number }>(
    `SELECT d.day, coalesce(c.count, 0)::int AS count
       FROM generate_series(0, 6) AS d(day)
       LEFT JOIN (SELECT extract(dow FROM ia.occurrence_starts_at AT TIME ZONE $1)::int AS day, count(*) AS count
                    FROM incident_alerts ia GROUP BY 1) c ON c.day = d.day
      ORDER BY d.day`,
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
 * measured from `triggered_at`, in seconds to the millisecond.
 */
export async function incidentStats(db: Queryable): Promise<IncidentStatsRow> {
  const result = await db.query<IncidentStatsRow>(
    `SELECT count(*)::int AS total,
            count(*) FILTER (WHERE status = 'triggered')::int AS triggered,
            count(*) FILTER (WHERE status = 'acknowledged')::int AS acknowledged,
            count(*) FILTER (WHERE status = 'resolved')::int AS resolved,
            round(avg(extract(epoch FROM acknowledged_at - triggered_at))
                  FILTER (WHERE acknowledged_at IS NOT NULL), 3)::float8 AS mtta_seconds,
            round(avg(extract(epoch FROM resolved_at - triggered_at))
                  FILTER (WHERE status = 'resolved'), 3)::float8 AS mttr_seconds
       FROM incidents`,
  );
  return result.rows[0]!;
}
