/**
 * Paging: contact methods, heartbeats, maintenance windows, acknowledging by
 * capability and the caller's paging readiness. (Escalation policies have
 * their own file.)
 */
import { Type, type Static } from 'typebox';
import { Id } from './common.ts';

export const ContactMethodKindSchema = Type.Union([
  Type.Literal('ntfy'),
  Type.Literal('webhook'),
  Type.Literal('email'),
]);
export type ContactMethodKind = Static<typeof ContactMethodKindSchema>;

/** `ContactMethodInput` (api-contract.md). */
export const ContactMethodInputSchema = Type.Object(
  {
    kind: ContactMethodKindSchema,
    name: Type.Optional(Type.String({ maxLength: 200 })),
    target: Type.String({
      maxLength: 2000,
      description: 'ntfy: the topic; webhook: the http(s) URL; email: the address',
    }),
    secret: Type.Optional(
      Type.String({
        maxLength: 200,
        description:
          'webhook: the HMAC key for X-Terdut-Signature (at least 16 characters); generated when absent',
      }),
    ),
    enabled: Type.Optional(Type.Boolean()),
  },
  { title: 'ContactMethodInput' },
);
export type ContactMethodInput = Static<typeof ContactMethodInputSchema>;

/** `ContactMethod` (api-contract.md). The webhook secret appears only in the answer to its creation. */
export const ContactMethodSchema = Type.Object(
  {
    id: Type.Integer(),
    user_id: Type.Integer(),
    kind: ContactMethodKindSchema,
    name: Type.String(),
    target: Type.String(),
    enabled: Type.Boolean(),
    created_at: Type.String({ format: 'date-time' }),
    secret: Type.Optional(Type.String({ description: 'only in the answer to POST, for webhook methods' })),
  },
  { title: 'ContactMethod', additionalProperties: false },
);
export type ContactMethod = Static<typeof ContactMethodSchema>;

export const ContactMethodEnabledSchema = Type.Object({ enabled: Type.Boolean() });
export type ContactMethodEnabled = Static<typeof ContactMethodEnabledSchema>;

/** `{id}/contact-methods/{method_id}` in a path. */
export const ContactMethodParams = Type.Object({ id: Id, method_id: Id });
export type ContactMethodParams = Static<typeof ContactMethodParams>;

export const ContactMethodTestSchema = Type.Object(
  {
    delivered: Type.Boolean(),
    answer: Type.String({ description: "the provider's answer, or why it could not be reached" }),
    message_id: Type.Optional(Type.String()),
  },
  { title: 'ContactMethodTest' },
);
export type ContactMethodTest = Static<typeof ContactMethodTestSchema>;

/** `HeartbeatInput` (api-contract.md). */
export const HeartbeatInputSchema = Type.Object(
  {
    name: Type.String({ maxLength: 200 }),
    interval: Type.String({
      description: 'Go-style duration, at least 30s: how often a sign of life is expected',
    }),
    grace: Type.Optional(Type.String({ description: 'extra wait before it counts as missed; default 1m' })),
    matchers: Type.Optional(
      Type.Array(Type.String({ maxLength: 1000 }), {
        maxItems: 50,
        description:
          'Alertmanager matchers; a firing alert that matches refreshes the heartbeat and opens no incident',
        examples: [['alertname="Watchdog"']],
      }),
    ),
  },
  { title: 'HeartbeatInput' },
);
export type HeartbeatInput = Static<typeof HeartbeatInputSchema>;

/** `Heartbeat` (api-contract.md). */
export const HeartbeatSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    interval: Type.String(),
    grace: Type.String(),
    matchers: Type.Array(Type.String()),
    last_seen_at: Type.String({ format: 'date-time' }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { title: 'Heartbeat', additionalProperties: false },
);
export type Heartbeat = Static<typeof HeartbeatSchema>;

/** `MaintenanceWindowInput` (api-contract.md). */
export const MaintenanceWindowInputSchema = Type.Object(
  {
    starts_at: Type.String({ description: 'RFC 3339 time', examples: ['2026-12-03T22:00:00Z'] }),
    ends_at: Type.String({ description: 'RFC 3339 time, after starts_at, at most 31 days later' }),
    matchers: Type.Optional(
      Type.Array(Type.String({ maxLength: 1000 }), {
        maxItems: 50,
        description: 'Alertmanager matchers on the incident labels; none: every incident',
      }),
    ),
    reason: Type.String({ maxLength: 1000 }),
  },
  { title: 'MaintenanceWindowInput' },
);
export type MaintenanceWindowInput = Static<typeof MaintenanceWindowInputSchema>;

/** `MaintenanceWindow` (api-contract.md). */
export const MaintenanceWindowSchema = Type.Object(
  {
    id: Type.Integer(),
    starts_at: Type.String({ format: 'date-time' }),
    ends_at: Type.String({ format: 'date-time' }),
    matchers: Type.Array(Type.String()),
    reason: Type.String(),
    created_by_id: Type.Optional(Type.Integer()),
    created_at: Type.String({ format: 'date-time' }),
  },
  { title: 'MaintenanceWindow', additionalProperties: false },
);
export type MaintenanceWindow = Static<typeof MaintenanceWindowSchema>;

export const CapabilityAcknowledgeSchema = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 2000, description: 'the capability from the page' }) },
  { title: 'CapabilityAcknowledgeInput' },
);
export type CapabilityAcknowledgeInput = Static<typeof CapabilityAcknowledgeSchema>;

export const CapabilityAcknowledgeResultSchema = Type.Object(
  {
    result: Type.Union([Type.Literal('acknowledged'), Type.Literal('already acknowledged')]),
    incident_id: Type.Integer(),
  },
  { title: 'CapabilityAcknowledgeResult' },
);
export type CapabilityAcknowledgeResult = Static<typeof CapabilityAcknowledgeResultSchema>;

export const PagingReadinessSchema = Type.Object(
  {
    on_call_now: Type.Boolean(),
    working_contact_methods: Type.Integer({
      description: "enabled methods terdut can use, the contract's ntfy_topic included",
    }),
    warning: Type.Optional(Type.String({ description: 'present when the caller cannot be paged; show it' })),
  },
  { title: 'PagingReadiness' },
);
export type PagingReadiness = Static<typeof PagingReadinessSchema>;
