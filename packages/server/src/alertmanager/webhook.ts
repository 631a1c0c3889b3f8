/**
 * Alertmanager's webhook payload, version 4
 * (https://prometheus.io/docs/alerting/latest/configuration/#webhook_config).
 * One schema validates the request, types the service and documents the
 * OpenAPI operation. Unknown keys (`notification_reason`, `routeLabels`, and
 * whatever later Alertmanagers add) are allowed and ignored.
 */
import { Type, type Static } from 'typebox';

const StringMap = Type.Record(Type.String(), Type.String());

export const WebhookAlert = Type.Object(
  {
    status: Type.Union([Type.Literal('firing'), Type.Literal('resolved')]),
    labels: StringMap,
    annotations: Type.Optional(StringMap),
    startsAt: Type.String({ description: 'RFC 3339' }),
    endsAt: Type.Optional(
      Type.String({ description: 'RFC 3339; 0001-01-01T00:00:00Z means the alert has not ended' }),
    ),
    generatorURL: Type.Optional(Type.String()),
    fingerprint: Type.String({ minLength: 1, description: 'Alertmanager fingerprint of the label set' }),
  },
  { additionalProperties: true },
);

export const WebhookPayload = Type.Object(
  {
    version: Type.String({ description: 'must be "4"' }),
    groupKey: Type.String({ minLength: 1 }),
    truncatedAlerts: Type.Optional(Type.Integer({ minimum: 0 })),
    status: Type.Union([Type.Literal('firing'), Type.Literal('resolved')]),
    receiver: Type.String(),
    groupLabels: Type.Optional(StringMap),
    commonLabels: Type.Optional(StringMap),
    commonAnnotations: Type.Optional(StringMap),
    externalURL: Type.Optional(Type.String()),
    alerts: Type.Array(WebhookAlert, { maxItems: 100_000 }),
  },
  { additionalProperties: true },
);

export type WebhookAlert = Static<typeof WebhookAlert>;
export type WebhookPayload = Static<typeof WebhookPayload>;

/** The webhook version this server understands. */
export const SUPPORTED_WEBHOOK_VERSION = '4';

/** Go's zero time, which Alertmanager sends as `endsAt` of an alert that has not ended. */
export const GO_ZERO_TIME = '0001-01-01T00:00:00Z';
