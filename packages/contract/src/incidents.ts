/** Alerts, incidents and their timelines. */
import { Type, type Static } from 'typebox';
import { LabelMap, Limit, Timestamp, Id } from './common.ts';

export const AlertStatusSchema = Type.Union([Type.Literal('firing'), Type.Literal('resolved')]);
export type AlertStatus = Static<typeof AlertStatusSchema>;

/** `Alert` of api-contract.md; optional fields are omitted when absent, never null. */
export const AlertSchema = Type.Object(
  {
    id: Type.Integer(),
    fingerprint: Type.String(),
    name: Type.String({ description: 'the alertname label' }),
    status: AlertStatusSchema,
    labels: LabelMap,
    annotations: LabelMap,
    starts_at: Timestamp,
    ends_at: Type.Optional(Timestamp),
    generator_url: Type.String(),
    received_at: Type.String({
      format: 'date-time',
      description:
        'when a notification last carried this alert ("last seen"): every Alertmanager notification that ' +
        'lists the alert, firing or resolved, moves it forward',
    }),
    archived_at: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'set while the newest incident of the alert is archived',
      }),
    ),
    incident_id: Type.Optional(Type.Integer({ description: 'the newest incident this alert belongs to' })),
    resolution_source: Type.Optional(
      Type.Union([Type.Literal('alertmanager'), Type.Literal('expiry')], {
        description:
          'alertmanager: a resolved notification; expiry: not refreshed for TERDUT_ALERT_STALE_AFTER',
      }),
    ),
  },
  { title: 'Alert', additionalProperties: false },
);
export type Alert = Static<typeof AlertSchema>;

export const AlertListQuery = Type.Object({
  status: Type.Optional(AlertStatusSchema),
  archived: Type.Optional(
    Type.Boolean({ description: 'true: only archived alerts; otherwise only those not archived' }),
  ),
  limit: Type.Optional(Limit(100)),
});
export type AlertListQuery = Static<typeof AlertListQuery>;

export const IncidentStatusSchema = Type.Union([
  Type.Literal('triggered'),
  Type.Literal('acknowledged'),
  Type.Literal('resolved'),
]);
export type IncidentStatus = Static<typeof IncidentStatusSchema>;

/** `Incident` of api-contract.md; optional fields are omitted when absent, never null. */
export const IncidentSchema = Type.Object(
  {
    id: Type.Integer(),
    group_key: Type.String(),
    title: Type.String(),
    group_labels: LabelMap,
    status: IncidentStatusSchema,
    severity: Type.Optional(Type.String({ description: 'high-water mark of its alerts, never lowered' })),
    triggered_at: Timestamp,
    acknowledged_by_id: Type.Optional(Type.Integer()),
    acknowledged_by: Type.Optional(Type.String({ description: 'username' })),
    acknowledged_at: Type.Optional(Timestamp),
    assigned_to_id: Type.Optional(Type.Integer()),
    assigned_to: Type.Optional(Type.String({ description: 'username' })),
    snoozed_until: Type.Optional(
      Type.String({ format: 'date-time', description: 'snoozed while in the future' }),
    ),
    resolved_at: Type.Optional(Timestamp),
    resolution_source: Type.Optional(Type.Union([Type.Literal('alerts'), Type.Literal('manual')])),
    archived_at: Type.Optional(Timestamp),
    alert_count: Type.Integer({
      minimum: 0,
      description:
        'how many alerts joined this incident, firing or resolved, also those that fired again into a ' +
        "newer incident since (an alert's incident_id names only its newest)",
    }),
    alerts: Type.Optional(
      Type.Array(AlertSchema, {
        description:
          'only on GET /api/incidents/{id}; each alert as it was in this incident: one that fired again ' +
          'since (its incident_id names a newer incident) is resolved here, with the starts_at of the ' +
          "occurrence that joined this incident and that occurrence's ends_at, annotations and " +
          'resolution_source (ends_at and resolution_source omitted when unknown)',
      }),
    ),
  },
  { title: 'Incident', additionalProperties: false },
);
export type Incident = Static<typeof IncidentSchema>;

/** The event types the server writes today; clients render unknown ones generically. */
export const INCIDENT_EVENT_TYPES = [
  'triggered',
  'alert_added',
  'alert_resolved',
  'acknowledged',
  'unacknowledged',
  'assigned',
  'snoozed',
  'unsnoozed',
  'resolved',
  'note',
] as const;
export type IncidentEventType = (typeof INCIDENT_EVENT_TYPES)[number];

/** `IncidentEvent`: a timeline entry. No username means the server acted; on `assigned` the user is the assignee. */
export const IncidentEventSchema = Type.Object(
  {
    id: Type.Integer(),
    incident_id: Type.Integer(),
    type: Type.String({
      description: `${INCIDENT_EVENT_TYPES.join(', ')}; more may come, render unknown types generically`,
    }),
    user_id: Type.Optional(Type.Integer()),
    username: Type.Optional(Type.String()),
    alert_id: Type.Optional(Type.Integer()),
    detail: Type.Optional(
      Type.String({
        description:
          'note: the text; snoozed: the RFC 3339 time the snooze ends; assigned: who assigned; ' +
          'resolved: how; others: a short human-readable remark',
      }),
    ),
    created_at: Timestamp,
  },
  { title: 'IncidentEvent', additionalProperties: false },
);
export type IncidentEvent = Static<typeof IncidentEventSchema>;

export const IncidentListQuery = Type.Object({
  status: Type.Optional(IncidentStatusSchema),
  archived: Type.Optional(
    Type.Boolean({ description: 'true: archived incidents instead of the default set' }),
  ),
  snoozed: Type.Optional(
    Type.Boolean({
      description: 'true: incidents a snooze holds now (not resolved) instead of the default set',
    }),
  ),
  limit: Type.Optional(Limit(100)),
});
export type IncidentListQuery = Static<typeof IncidentListQuery>;

export const AssignBody = Type.Object({ user_id: Id });
export type AssignBody = Static<typeof AssignBody>;

/** Longest snooze: a week. */
export const MAX_SNOOZE_SECONDS = 7 * 24 * 3600;
export const SnoozeBody = Type.Object({
  duration: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'Go-style duration: 30m, 2h, 1h30m; more than 0 and at most 168h',
  }),
});
export type SnoozeBody = Static<typeof SnoozeBody>;

export const MAX_NOTE_LENGTH = 20_000;
export const NoteBody = Type.Object({
  content: Type.String({ minLength: 1, maxLength: MAX_NOTE_LENGTH, description: 'not only whitespace' }),
});
export type NoteBody = Static<typeof NoteBody>;
