/**
 * `POST /api/webhook/alertmanager`: Alertmanager's webhook payload, version 4
 * (https://prometheus.io/docs/alerting/latest/configuration/#webhook_config),
 * and the answer. One schema validates the request, types the server's
 * adapter (alertmanager/parse.ts), the client's and the tests' payloads, and
 * documents the OpenAPI operation. Unknown keys (`notification_reason`,
 * `routeLabels`, and whatever later Alertmanagers add) are allowed and ignored.
 */
import { Type, type Static } from 'typebox';

/**
 * Limits on what one notification may carry, far above what Alertmanager
 * sends for real groups (its fingerprints are 16 hex digits, group keys a
 * route path plus the grouping labels, label names identifiers) and low
 * enough that every stored key fits its index and the largest accepted
 * notification is applied without stalling the server (README, "Webhook
 * limits"). Beyond them the answer is 400 naming the limit, which
 * Alertmanager does not retry.
 */
export const WEBHOOK_LIMITS = {
  alerts: 2_000,
  fingerprintLength: 64,
  /**
   * Bytes of UTF-8. Alertmanager writes the grouping labels into the key (every label under
   * `group_by: ['...']`), so it must take an alert's whole label limit and the route's matchers.
   * Keys beyond 2,000 bytes are stored by digest, since the key is indexed.
   */
  groupKeyBytes: 65_536,
  labelsPerAlert: 64,
  labelNameLength: 256,
  labelValueLength: 2_048,
  annotationsPerAlert: 64,
  annotationValueLength: 16_384,
  urlLength: 8_192,
  /** Characters of all label names and values of one alert together. */
  labelBytesPerAlert: 16_384,
} as const;

const Labels = Type.Record(Type.String(), Type.String({ maxLength: WEBHOOK_LIMITS.labelValueLength }), {
  maxProperties: WEBHOOK_LIMITS.labelsPerAlert,
  propertyNames: { maxLength: WEBHOOK_LIMITS.labelNameLength },
});
const Annotations = Type.Record(
  Type.String(),
  Type.String({ maxLength: WEBHOOK_LIMITS.annotationValueLength }),
  {
    maxProperties: WEBHOOK_LIMITS.annotationsPerAlert,
    propertyNames: { maxLength: WEBHOOK_LIMITS.labelNameLength },
  },
);

export const WebhookAlert = Type.Object(
  {
    status: Type.Union([Type.Literal('firing'), Type.Literal('resolved')]),
    labels: Labels,
    annotations: Type.Optional(Annotations),
    startsAt: Type.String({ description: 'RFC 3339' }),
    endsAt: Type.Optional(
      Type.String({ description: 'RFC 3339; 0001-01-01T00:00:00Z means the alert has not ended' }),
    ),
    generatorURL: Type.Optional(Type.String({ maxLength: WEBHOOK_LIMITS.urlLength })),
    fingerprint: Type.String({
      minLength: 1,
      maxLength: WEBHOOK_LIMITS.fingerprintLength,
      description: 'Alertmanager fingerprint of the label set',
    }),
  },
  { additionalProperties: true },
);

export const WebhookPayload = Type.Object(
  {
    version: Type.String({ description: 'must be "4"' }),
    groupKey: Type.String({
      minLength: 1,
      maxLength: WEBHOOK_LIMITS.groupKeyBytes,
      description: `at most ${WEBHOOK_LIMITS.groupKeyBytes} bytes of UTF-8`,
    }),
    // Go sends a uint64; a finite count is all terdut can hold (1e400 parses as Infinity).
    truncatedAlerts: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
    status: Type.Union([Type.Literal('firing'), Type.Literal('resolved')]),
    receiver: Type.String({ maxLength: WEBHOOK_LIMITS.labelValueLength }),
    groupLabels: Type.Optional(Labels),
    commonLabels: Type.Optional(Labels),
    commonAnnotations: Type.Optional(Annotations),
    externalURL: Type.Optional(Type.String({ maxLength: WEBHOOK_LIMITS.urlLength })),
    alerts: Type.Array(WebhookAlert, {
      maxItems: WEBHOOK_LIMITS.alerts,
      // Alertmanager does not retry a 400, and every later notification of so large a group is as
      // large: the answer says how to have it sent at all.
      errorMessage:
        `must be an array of at most ${WEBHOOK_LIMITS.alerts} alerts; set max_alerts: ${WEBHOOK_LIMITS.alerts} ` +
        "in Alertmanager's webhook_configs so that larger groups are sent truncated (truncatedAlerts)",
    }),
  },
  { additionalProperties: true },
);

export type WebhookAlert = Static<typeof WebhookAlert>;
export type WebhookPayload = Static<typeof WebhookPayload>;

/** The webhook version this server understands. */
export const SUPPORTED_WEBHOOK_VERSION = '4';

/** Go's zero time, which Alertmanager sends as `endsAt` of an alert that has not ended. */
export const GO_ZERO_TIME = '0001-01-01T00:00:00Z';

/** The answer: the notification is durably committed. */
export const WebhookAcceptedSchema = Type.Object({
  status: Type.Literal('accepted'),
  incident_id: Type.Optional(
    Type.Integer({ description: "the group's open incident after this notification" }),
  ),
});
export type WebhookAccepted = Static<typeof WebhookAcceptedSchema>;
