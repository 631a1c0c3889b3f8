import type { Queryable } from '../db/database.ts';
import { alertContentDigest, type AlertState } from '../domain/alerts.ts';
import { alertRecord, type AlertRow } from './alerts.ts';
import type { IncidentRow } from './incidents.ts';
import type { IncidentAlertLink } from './incident-alerts.ts';
import type { PolicyDefinition } from './escalation-policies.ts';

/** What a notification works on, locked: see migration 0900 (terdut_intake_begin). */
export interface LockedGroup {
  /** The group's open incident, if any. */
  incident: IncidentRow | undefined;
  /** The stored alerts with the notification's fingerprints, in fingerprint order. */
  alerts: AlertRow[];
  /** The group's firing alerts last seen before `staleBefore`, in fingerprint order. */
  stale: AlertRow[];
  /** Links of the carried alerts to incidents of the group, newest incident first. */
  links: IncidentAlertLink[];
}

/**
 * Takes the group's lock (every writer of the group waits, on every
 * replica, until we commit), then locks and reads in the same round trip
 * what lockIncidentGroup, lockOpenIncidentOfGroup, lockAlertsByFingerprint,
 * lockStaleAlertsOfGroup and linksInGroup would, one after the other.
 */
export async function lockGroupForNotification(
  tx: Queryable,
  groupKey: string,
  fingerprints: string[],
  staleBefore: Date,
): Promise<LockedGroup> {
  const result = await tx.query<{ locked: LockedGroupJson }>(
    'SELECT terdut_intake_begin($1, $2::text[], $3) AS locked',
    [groupKey, fingerprints, staleBefore],
  );
  const locked = result.rows[0]!.locked;
  return {
    incident: locked.incident === null ? undefined : incidentFromJson(locked.incident),
    alerts: locked.alerts.map(alertFromJson),
    stale: locked.stale.map(alertFromJson),
    links: locked.links.map((link) => ({
      ...link,
      occurrence_starts_at: new Date(link.occurrence_starts_at),
    })),
  };
}

// JSON carries timestamps as text; the rows elsewhere carry Dates.
type Json<Row, DateKeys extends keyof Row> = Omit<Row, DateKeys> & {
  [Key in DateKeys]: null extends Row[Key] ? string | null : string;
};
type AlertJson = Json<AlertRow, 'starts_at' | 'ends_at' | 'received_at' | 'last_seen_at' | 'archived_at'>;
type IncidentJson = Json<
  IncidentRow,
  'triggered_at' | 'acknowledged_at' | 'snoozed_until' | 'resolved_at' | 'archived_at'
>;
interface LockedGroupJson {
  incident: IncidentJson | null;
  alerts: AlertJson[];
  stale: AlertJson[];
  links: Json<IncidentAlertLink, 'occurrence_starts_at'>[];
}

const dateOrNull = (text: string | null): Date | null => (text === null ? null : new Date(text));

function alertFromJson(row: AlertJson): AlertRow {
  return {
    ...row,
    starts_at: new Date(row.starts_at),
    ends_at: dateOrNull(row.ends_at),
    received_at: new Date(row.received_at),
    last_seen_at: new Date(row.last_seen_at),
    archived_at: dateOrNull(row.archived_at),
  };
}

function incidentFromJson(row: IncidentJson): IncidentRow {
  return {
    ...row,
    triggered_at: new Date(row.triggered_at),
    acknowledged_at: dateOrNull(row.acknowledged_at),
    snoozed_until: dateOrNull(row.snoozed_until),
    resolved_at: dateOrNull(row.resolved_at),
    archived_at: dateOrNull(row.archived_at),
  };
}

/**
 * A repeat (every carried alert firing, unchanged, and already a member of
 * the group's open incident) applied in one call, in its own transaction:
 * only "last seen" moves. The open incident's id, or undefined when it is not
 * provably a repeat; then nothing changed and the full intake must run
 * (migration 0950, terdut_intake_repeat).
 */
export async function touchIfRepeat(
  db: Queryable,
  groupKey: string,
  alerts: AlertState[],
  now: Date,
  staleBefore: Date,
): Promise<number | undefined> {
  // Sorted by fingerprint as the function compares them (COLLATE "C", byte
  // order). JavaScript's order is the same but for characters beyond
  // U+FFFF, where a difference only makes the call decline (never a wrong answer).
  const sorted = alerts.toSorted((a, b) =>
    a.fingerprint < b.fingerprint ? -1 : a.fingerprint > b.fingerprint ? 1 : 0,
  );
  const result = await db.query<{ incident_id: number | null }>(
    'SELECT terdut_intake_repeat($1, $2::text[], $3::timestamptz[], $4::timestamptz[], $5::text[], $6, $7) AS incident_id',
    [
      groupKey,
      sorted.map((alert) => alert.fingerprint),
      sorted.map((alert) => alert.starts_at.toISOString()),
      sorted.map((alert) => alert.ends_at?.toISOString() ?? null),
      sorted.map(alertContentDigest),
      now,
      staleBefore,
    ],
  );
  return result.rows[0]?.incident_id ?? undefined;
}

/** What openIfNewGroup needs beyond the alerts: the incident as the full intake would open it, and its routing. */
export interface NewGroupIncident {
  title: string;
  group_labels: Record<string, string>;
  /** The highest severity among the alerts' (null: none has one). */
  severity: string | null;
  severity_rank: number;
  /** The routing, and the policies' version it was computed from (RoutingCache). */
  routing: {
    version: number;
    policyId: number | null;
    policy: PolicyDefinition;
    labels: Record<string, string>;
  };
}

/**
 * A new group's first notification (every alert firing and never stored,
 * each fingerprint once) applied in one call, in its own transaction: the
 * alerts, the incident, its escalation, the links and the events, as the
 * full intake would write them (migration 0960, terdut_intake_open).
 * `opened`: the new incident's id; `not new`: nothing changed, run the
 * full intake; `routing changed`: nothing changed, route again.
 */
export async function openIfNewGroup(
  db: Queryable,
  groupKey: string,
  alerts: AlertState[],
  incident: NewGroupIncident,
  now: Date,
  staleBefore: Date,
): Promise<{ opened: number } | 'not new' | 'routing changed'> {
  const records = alerts.map(alertRecord);
  const result = await db.query<{ incident_id: number | null; routing_current: boolean }>(
    `SELECT incident_id, routing_current
       FROM terdut_intake_open($1, $2::text[], $3::jsonb, $4, $5::jsonb, $6, $7, $8, $9, $10::jsonb, $11::jsonb, $12, $13)`,
    [
      groupKey,
      alerts.map((alert) => alert.fingerprint),
      JSON.stringify(records),
      incident.title,
      JSON.stringify(incident.group_labels),
      incident.severity,
      incident.severity_rank,
      incident.routing.version,
      incident.routing.policyId,
      JSON.stringify(incident.routing.policy),
      JSON.stringify(incident.routing.labels),
      now,
      staleBefore,
    ],
  );
  const row = result.rows[0]!;
  if (!row.routing_current) return 'routing changed';
  return row.incident_id === null ? 'not new' : { opened: row.incident_id };
}
