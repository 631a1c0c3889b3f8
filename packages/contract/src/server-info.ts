/** What the web app reads once (server-info) and live (the event stream's `change` payload). */
import { Type, type Static } from 'typebox';

/** `GET /api/server-info` (public): what the web app needs to know once, so it never guesses. */
export const ServerInfoSchema = Type.Object({
  version: Type.String(),
  /** TERDUT_TIMEZONE: calendar days (schedule) and statistics hours are in this zone. */
  time_zone: Type.String(),
  /** Whether "Sign in with SSO" (/auth/oidc/login) is available. */
  oidc: Type.Boolean(),
  /** false until the first admin exists (bootstrap-protocol.md). */
  bootstrapped: Type.Boolean(),
});
export type ServerInfo = Static<typeof ServerInfoSchema>;

export const ChangeTopicSchema = Type.Union([
  Type.Literal('incidents'),
  Type.Literal('alerts'),
  Type.Literal('schedule'),
]);
export type ChangeTopic = Static<typeof ChangeTopicSchema>;

/**
 * The data of a `change` event of `GET /api/events` (server-sent events): what
 * changed, as the web app needs it to decide what to refetch.
 */
export const ChangeSchema = Type.Object(
  {
    /** `incidents` (an incident, its alerts, timeline or notes), `alerts`, or `schedule`. */
    topic: ChangeTopicSchema,
    /** The incident concerned, when one is. */
    incident_id: Type.Optional(Type.Integer()),
  },
  { title: 'Change' },
);
export type Change = Static<typeof ChangeSchema>;
