import type { Queryable } from '../db/database.ts';
import type { AlertRow } from './alerts.ts';

/** One alert's membership in one incident. */
export interface IncidentAlertLink {
  incident_id: number;
  alert_id: number;
  /** starts_at of the alert's occurrence that joined. */
  occurrence_starts_at: Date;
}

/**
 * The links of these alerts' current occurrences to incidents of
 * `groupKey`, newest incident first: all the intake and the staleness
 * sweep ask of links is whether the occurrence an alert has now (its
 * starts_at, as `alerts` gives it) already belongs to an incident, and
 * which. Its older occurrences, however many it had, are not read. The
 * lookup is terdut_current_occurrence_links (migration 1050), which
 * terdut_intake_begin reads the links with too.
 */
export async function currentOccurrenceLinks(
  db: Queryable,
  groupKey: string,
  alerts: readonly Pick<AlertRow, 'id' | 'starts_at'>[],
): Promise<IncidentAlertLink[]> {
  if (alerts.length === 0) return [];
  const result = await db.query<IncidentAlertLink>(
    `SELECT incident_id, alert_id, occurrence_starts_at
       FROM terdut_current_occurrence_links($1, $2::bigint[], $3::timestamptz[])
      ORDER BY incident_id DESC`,
    [groupKey, alerts.map((alert) => alert.id), alerts.map((alert) => alert.starts_at)],
  );
  return result.rows;
}

/**
 * Adds alerts to an incident, or records that a new occurrence of a member
 * joined (the link then names it, and what was recorded of the one it
 * replaces there is cleared: migration 1090), and points the alerts at it
 * (their newest incident), in one statement. An alert is archived with its
 * newest incident, so one joining an open incident is archived no longer (it
 * fired through a manual resolve and the incident was archived, or it was
 * presumed resolved and revives).
 */
export async function linkAlerts(
  tx: Queryable,
  incidentId: number,
  links: { alert_id: number; occurrence_starts_at: Date }[],
  now: Date,
): Promise<void> {
  if (links.length === 0) return;
  await tx.query(
    // The alerts are found by an id array (their primary key), not by a
    // join with the links: a join was planned as a scan of every alert.
    `WITH pointed AS (UPDATE alerts SET incident_id = $1, archived_at = NULL WHERE id = ANY($4::bigint[]))
     INSERT INTO incident_alerts (incident_id, alert_id, occurrence_starts_at, added_at)
     SELECT $1, alert_id, occurrence_starts_at, $3
       FROM jsonb_to_recordset($2::jsonb) AS x(alert_id bigint, occurrence_starts_at timestamptz)
     ON CONFLICT (incident_id, alert_id) DO UPDATE
       SET occurrence_starts_at = EXCLUDED.occurrence_starts_at, occurrence_ends_at = NULL,
           occurrence_annotations = NULL, occurrence_resolution_source = NULL`,
    [
      incidentId,
      JSON.stringify(
        links.map((link) => ({
          alert_id: link.alert_id,
          occurrence_starts_at: link.occurrence_starts_at.toISOString(),
        })),
      ),
      now,
      links.map((link) => link.alert_id),
    ],
  );
}

/**
 * Whether any of the incident's alerts is still firing (none: the incident
 * resolves itself). Each of the incident's links looks its alert up by key,
 * and the search stops at the first firing one: written as a join, the
 * planner could instead read every firing alert of every incident and
 * match them with this incident's links, which it chose once its
 * statistics said incidents have hundreds of alerts each (a 1-alert
 * incident's resolve then took 6-19 ms; bench/README.md, "Resolves and
 * kept plans").
 */
export async function hasFiringAlerts(
  db: Queryable,
  incidentId: number,
  /** Also count as firing an incident whose group's notification left alerts out after this. */
  leftOutAfter: Date | null = null,
): Promise<boolean> {
  const result = await db.query<{ firing: boolean }>(
    `SELECT EXISTS (
       SELECT 1 FROM incident_alerts ia
        WHERE ia.incident_id = $1
          AND (SELECT a.status FROM alerts a WHERE a.id = ia.alert_id) = 'firing'
     ) OR EXISTS (
       SELECT 1 FROM incidents i WHERE i.id = $1 AND i.alerts_left_out_at > $2::timestamptz
     ) AS firing`,
    [incidentId, leftOutAfter],
  );
  return result.rows[0]?.firing ?? false;
}
