/**
 * The statistics queries as they were before the rollups of migration 0800,
 * verbatim (scans of the whole history): the reference that the rollups are
 * held to (routes/stats/same-answers.test.ts) and the "before" of
 * `bench:queue`.
 */
import type { Queryable } from '../../packages/server/src/db/database.ts';

export const REFERENCE_STATISTICS_SQL = {
  alerts: `SELECT count(*)::int AS total,
            count(*) FILTER (WHERE status = 'firing' AND last_seen_at >= $1)::int AS firing,
            count(*) FILTER (WHERE NOT (status = 'firing' AND last_seen_at >= $1))::int AS resolved
       FROM alerts`,
  top: `SELECT a.name, count(*)::int AS count
       FROM incident_alerts ia JOIN alerts a ON a.id = ia.alert_id
      GROUP BY a.name
      ORDER BY count DESC, a.name
      LIMIT $1`,
  byHour: `SELECT h.hour, coalesce(c.count, 0)::int AS count
       FROM generate_series(0, 23) AS h(hour)
       LEFT JOIN (SELECT extract(hour FROM ia.occurrence_starts_at AT TIME ZONE $1)::int AS hour, count(*) AS count
                    FROM incident_alerts ia GROUP BY 1) c ON c.hour = h.hour
      ORDER BY h.hour`,
  byDay: `SELECT d.day, coalesce(c.count, 0)::int AS count
       FROM generate_series(0, 6) AS d(day)
       LEFT JOIN (SELECT extract(dow FROM ia.occurrence_starts_at AT TIME ZONE $1)::int AS day, count(*) AS count
                    FROM incident_alerts ia GROUP BY 1) c ON c.day = d.day
      ORDER BY d.day`,
  incidents: `SELECT count(*)::int AS total,
            count(*) FILTER (WHERE status = 'triggered')::int AS triggered,
            count(*) FILTER (WHERE status = 'acknowledged')::int AS acknowledged,
            count(*) FILTER (WHERE status = 'resolved')::int AS resolved,
            round(avg(extract(epoch FROM acknowledged_at - triggered_at))
                  FILTER (WHERE acknowledged_at IS NOT NULL), 3)::float8 AS mtta_seconds,
            round(avg(extract(epoch FROM resolved_at - triggered_at))
                  FILTER (WHERE status = 'resolved'), 3)::float8 AS mttr_seconds
       FROM incidents`,
} as const;

const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** The five statistics endpoints' answers as the replaced queries give them. */
export interface StatisticsAnswers {
  alerts: unknown;
  /** `/api/stats/alerts/top?limit=100` */
  top: unknown;
  /** `/api/stats/alerts/top?limit=3` */
  top3: unknown;
  byHour: unknown;
  byDay: unknown;
  incidents: unknown;
}

/** What the endpoints answered before the rollups, for `timeZone` and firing alerts seen since `staleBefore`. */
export async function referenceStatistics(
  db: Queryable,
  timeZone: string,
  staleBefore: Date,
): Promise<StatisticsAnswers> {
  const rows = async (sql: string, params: unknown[] = []) =>
    (await db.query<Record<string, unknown>>(sql, params)).rows;
  return {
    alerts: (await rows(REFERENCE_STATISTICS_SQL.alerts, [staleBefore]))[0],
    top: await rows(REFERENCE_STATISTICS_SQL.top, [100]),
    top3: await rows(REFERENCE_STATISTICS_SQL.top, [3]),
    byHour: await rows(REFERENCE_STATISTICS_SQL.byHour, [timeZone]),
    byDay: (await rows(REFERENCE_STATISTICS_SQL.byDay, [timeZone])).map((row) => ({
      day: row.day,
      day_name: DAY_NAMES[row.day as number],
      count: row.count,
    })),
    incidents: (await rows(REFERENCE_STATISTICS_SQL.incidents))[0],
  };
}
