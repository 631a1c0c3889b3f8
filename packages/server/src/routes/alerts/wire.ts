import { Type, type Static } from 'typebox';
import type { AlertRow } from '../../repositories/alerts.ts';

const StringMap = Type.Record(Type.String(), Type.String());

/** `Alert` of api-contract.md; optional fields are omitted when absent, never null. */
export const AlertSchema = Type.Object(
  {
    id: Type.Integer(),
    fingerprint: Type.String(),
    name: Type.String({ description: 'the alertname label' }),
    status: Type.Union([Type.Literal('firing'), Type.Literal('resolved')]),
    labels: StringMap,
    annotations: StringMap,
    starts_at: Type.String({ format: 'date-time' }),
    ends_at: Type.Optional(Type.String({ format: 'date-time' })),
    generator_url: Type.String(),
    received_at: Type.String({
      format: 'date-time',
      description: 'when the current occurrence was first received',
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
  { additionalProperties: false },
);
export type AlertWire = Static<typeof AlertSchema>;

/** Alert row → wire object. */
export function serialiseAlert(row: AlertRow): AlertWire {
  return {
    id: row.id,
    fingerprint: row.fingerprint,
    name: row.name,
    status: row.status,
    labels: row.labels,
    annotations: row.annotations,
    starts_at: row.starts_at.toISOString(),
    ...(row.ends_at !== null ? { ends_at: row.ends_at.toISOString() } : {}),
    generator_url: row.generator_url,
    received_at: row.received_at.toISOString(),
    ...(row.archived_at !== null ? { archived_at: row.archived_at.toISOString() } : {}),
    ...(row.incident_id !== null ? { incident_id: row.incident_id } : {}),
    ...(row.resolution_source !== null ? { resolution_source: row.resolution_source } : {}),
  };
}
