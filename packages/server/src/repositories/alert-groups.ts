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
  /**
   * Links of the carried alerts' current occurrences to incidents of the
   * group, newest incident first (as currentOccurrenceLinks reads them).
   */
  links: IncidentAlertLink[];
}

/**
 * Takes the group's lock (every writer of the group waits, on every
 * replica, until we commit), then locks and reads in the same round trip
 * what lockIncidentGroup, lockOpenIncidentOfGroup, lockAlertsByFingerprint,
 * lockStaleAlertsOfGroup and currentOccurrenceLinks would, one after the other.
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

/** One new group's first notification, as openIfNewGroups takes it. */
export interface NewGroupCall {
  groupKey: string;
  alerts: AlertState[];
  incident: NewGroupIncident;
  now: Date;
  staleBefore: Date;
}

/**
 * `opened`: the new incident's id; `not new`: nothing changed, run the full
 * intake; `routing changed`: nothing changed, route again.
 */
export type NewGroupOutcome = { opened: number } | 'not new' | 'routing changed';

/**
 * New groups' first notifications (every alert firing and never stored,
 * each fingerprint once) applied in one statement, in its own transaction:
 * for each, the alerts, the incident, its escalation, the links and the
 * events, as the full intake would write them (migration 0960,
 * terdut_intake_open, run for each call by terdut_intake_open_gathered,
 * migration 1040). One outcome per call, in the calls' order. A carried
 * alert another transaction stored first fails the whole statement (a
 * unique violation), which rolls every call back; the caller then tries
 * them one by one (gathered-calls.ts).
 *
 * Several calls take their groups' locks in the order of the locks' keys,
 * so two such statements never wait for each other's group locks in a
 * circle. One alert in two groups (two Alertmanager routes to this
 * webhook) can still make two of them wait for each other, one on the
 * other's group lock, the other on the alert's uncommitted key: PostgreSQL
 * ends one of them after deadlock_timeout (1 s), and its calls run again
 * one by one.
 */
export async function openIfNewGroups(db: Queryable, calls: NewGroupCall[]): Promise<NewGroupOutcome[]> {
  // One statement for one call or several: a lone call through it was as
  // fast as a statement with the function's thirteen parameters
  // (the intake call in a loop from 4 connections, as bench:intake-floor
  // runs it: groups of 1 and of 100 alerts, two rounds each, within the noise).
  const parameter = calls.map(({ groupKey, alerts, incident, now, staleBefore }) => ({
    group_key: groupKey,
    fingerprints: alerts.map((alert) => alert.fingerprint),
    alerts: alerts.map(alertRecord),
    title: incident.title,
    group_labels: incident.group_labels,
    severity: incident.severity,
    severity_rank: incident.severity_rank,
    routing_version: incident.routing.version,
    policy_id: incident.routing.policyId,
    policy: incident.routing.policy,
    routing_labels: incident.routing.labels,
    now: now.toISOString(),
    stale_before: staleBefore.toISOString(),
  }));
  // The calls run, and take their group locks, in the order of the locks'
  // keys (migration 1040; the function keeps its plan).
  const result = await db.query<{ n: string; incident_id: number | null; routing_current: boolean }>(
    'SELECT n, incident_id, routing_current FROM terdut_intake_open_gathered($1::jsonb)',
    [JSON.stringify(parameter)],
  );
  const outcomes: NewGroupOutcome[] = [];
  for (const row of result.rows) {
    outcomes[Number(row.n) - 1] = !row.routing_current
      ? 'routing changed'
      : row.incident_id === null
        ? 'not new'
        : { opened: Number(row.incident_id) };
  }
  return outcomes;
}
