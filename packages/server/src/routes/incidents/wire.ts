import { Type, type Static } from 'typebox';
import type { IncidentRow } from '../../repositories/incidents.ts';
import type { IncidentEventRow } from '../../repositories/incident-events.ts';
import type { AlertRow } from '../../repositories/alerts.ts';
import { AlertSchema, serialiseAlert } from '../alerts/wire.ts';

const Time = Type.String({ format: 'date-time' });

/** `Incident` of api-contract.md; optional fields are omitted when absent, never null. */
export const IncidentSchema = Type.Object(
  {
    id: Type.Integer(),
    group_key: Type.String(),
    title: Type.String(),
    group_labels: Type.Record(Type.String(), Type.String()),
    status: Type.Union([Type.Literal('triggered'), Type.Literal('acknowledged'), Type.Literal('resolved')]),
    severity: Type.Optional(Type.String({ description: 'high-water mark of its alerts, never lowered' })),
    triggered_at: Time,
    acknowledged_by_id: Type.Optional(Type.Integer()),
    acknowledged_by: Type.Optional(Type.String({ description: 'username' })),
    acknowledged_at: Type.Optional(Time),
    assigned_to_id: Type.Optional(Type.Integer()),
    assigned_to: Type.Optional(Type.String({ description: 'username' })),
    snoozed_until: Type.Optional(
      Type.String({ format: 'date-time', description: 'snoozed while in the future' }),
    ),
    resolved_at: Type.Optional(Time),
    resolution_source: Type.Optional(Type.Union([Type.Literal('alerts'), Type.Literal('manual')])),
    archived_at: Type.Optional(Time),
    alerts: Type.Optional(Type.Array(AlertSchema, { description: 'only on GET /api/incidents/{id}' })),
  },
  { additionalProperties: false },
);
export type IncidentWire = Static<typeof IncidentSchema>;

/** `IncidentEvent`: a timeline entry. No username means the server acted; on `assigned` the user is the assignee. */
export const IncidentEventSchema = Type.Object(
  {
    id: Type.Integer(),
    incident_id: Type.Integer(),
    type: Type.String({
      description:
        'triggered, alert_added, alert_resolved, acknowledged, unacknowledged, assigned, snoozed, unsnoozed, resolved, note',
    }),
    user_id: Type.Optional(Type.Integer()),
    username: Type.Optional(Type.String()),
    alert_id: Type.Optional(Type.Integer()),
    detail: Type.Optional(Type.String()),
    created_at: Time,
  },
  { additionalProperties: false },
);
export type IncidentEventWire = Static<typeof IncidentEventSchema>;

/** Incident row → wire object; `alerts` only when given (the detail view). */
export function serialiseIncident(row: IncidentRow, alerts?: AlertRow[]): IncidentWire {
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
    alerts: alerts?.map(serialiseAlert),
  });
}

/** Event row → wire object. */
export function serialiseEvent(row: IncidentEventRow): IncidentEventWire {
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
