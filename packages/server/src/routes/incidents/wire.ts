import type { Incident, IncidentEvent } from '@terdut/contract';
import type { CountedIncidentRow } from '../../repositories/incidents.ts';
import type { IncidentEventRow } from '../../repositories/incident-events.ts';

// Absent fields are left undefined, which the routes' response schemas
// (fast-json-stringify), like JSON.stringify, omit from the JSON rather
// than send as null. One object literal per row, without copying it again to
// drop them: a page of 1,000 alerts is serialised on every refresh.

/** Incident row → wire object, without alerts (the detail view adds them: incidentWithAlertsJson). */
export function serializeIncident(row: CountedIncidentRow): Incident {
  return {
    id: row.id,
    group_key: row.group_key,
    title: row.title,
    group_labels: row.group_labels,
    status: row.status,
    severity: row.severity ?? undefined,
    triggered_at: row.triggered_at.toISOString(),
    acknowledged_by_id: row.acknowledged_by ?? undefined,
    acknowledged_by: row.acknowledged_by_username ?? undefined,
    acknowledged_at: time(row.acknowledged_at),
    assigned_to_id: row.assigned_to ?? undefined,
    assigned_to: row.assigned_to_username ?? undefined,
    snoozed_until: time(row.snoozed_until),
    resolved_at: time(row.resolved_at),
    resolution_source: row.resolution_source ?? undefined,
    archived_at: time(row.archived_at),
    alert_count: row.alert_count,
  };
}

/**
 * The incident page's body, as UTF-8 JSON: the incident as serializeIncident
 * makes it, with its alerts as the JSON PostgreSQL wrote
 * (repositories/alerts.ts alertsOfIncidentJsonParts). Sent as it is, so the
 * route's response schema (IncidentSchema, the contract) documents this body
 * but does not serialise it; the routes' tests check that both agree.
 *
 * Written part by part into one buffer, never joined into one string: a
 * string of half a megabyte lives in V8's old generation from birth, so
 * each refresh would bring the next full collection closer. A buffer's
 * bytes are outside V8's heap.
 */
export function incidentWithAlertsJson(row: CountedIncidentRow, alertsJsonParts: readonly string[]): Buffer {
  const incident = JSON.stringify(serializeIncident(row));
  const head = `${incident.slice(0, -1)},"alerts":[`;
  const tail = ']}';
  let length = Buffer.byteLength(head) + Buffer.byteLength(tail) + Math.max(alertsJsonParts.length - 1, 0);
  for (const part of alertsJsonParts) length += Buffer.byteLength(part);
  const body = Buffer.allocUnsafe(length);
  let offset = body.write(head);
  alertsJsonParts.forEach((part, index) => {
    if (index > 0) offset += body.write(',', offset);
    offset += body.write(part, offset);
  });
  body.write(tail, offset);
  return body;
}

function time(value: Date | null): string | undefined {
  return value === null ? undefined : value.toISOString();
}

/** Event row → wire object. */
export function serializeEvent(row: IncidentEventRow): IncidentEvent {
  return {
    id: row.id,
    incident_id: row.incident_id,
    type: row.type,
    user_id: row.user_id ?? undefined,
    username: row.username ?? undefined,
    alert_id: row.alert_id ?? undefined,
    detail: row.detail ?? undefined,
    created_at: row.created_at.toISOString(),
  };
}
