import type { Incident, IncidentEvent } from '@terdut/contract';
import type { IncidentRow } from '../../repositories/incidents.ts';
import type { IncidentEventRow } from '../../repositories/incident-events.ts';
import type { AlertRow } from '../../repositories/alerts.ts';
import { serializeAlert } from '../alerts/wire.ts';

/** Incident row → wire object; `alerts` only when given (the detail view). */
export function serializeIncident(row: IncidentRow, alerts?: AlertRow[]): Incident {
  const time = (value: Date | null) => (value === null ? undefined : value.toISOString());
  return omitUndefined({
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
    alerts: alerts?.map(serializeAlert),
  });
}

/** Event row → wire object. */
export function serializeEvent(row: IncidentEventRow): IncidentEvent {
  return omitUndefined({
    id: row.id,
    incident_id: row.incident_id,
    type: row.type,
    user_id: row.user_id ?? undefined,
    username: row.username ?? undefined,
    alert_id: row.alert_id ?? undefined,
    detail: row.detail ?? undefined,
    created_at: row.created_at.toISOString(),
  });
}

/** Drops absent fields, so they are omitted from the JSON rather than sent as null. */
function omitUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as T;
}
