/**
 * Pieces every resource shares: the error body, timestamps, id parameters,
 * label maps. One home each, so a change here changes every operation.
 */
import { Type, type Static } from 'typebox';

/** Every 4xx/5xx body: `{"error": "<what went wrong and what to do>"}`. */
export const ErrorSchema = Type.Object(
  { error: Type.String({ description: 'what went wrong and, where it helps, what to do next' }) },
  { title: 'Error' },
);
export type ApiErrorBody = Static<typeof ErrorSchema>;

/** An RFC 3339 timestamp in UTC, e.g. `2026-12-03T08:00:00.000Z`. */
export const Timestamp = Type.String({ format: 'date-time' });

/** Labels or annotations: string to string. */
export const LabelMap = Type.Record(Type.String(), Type.String());

/**
 * An id of a row, in paths and bodies: 1 … 2^53−1. The database's columns are
 * 64-bit, but ids are sent as JSON numbers and issued one by one from 1, so no
 * row ever has an id a JSON number cannot carry. `x-terdut-id` marks it for
 * the server's check of path text (decimal digits only; see http/ids.ts).
 */
export const Id = Type.Integer({
  minimum: 1,
  maximum: Number.MAX_SAFE_INTEGER,
  description: 'an id: decimal digits, 1 to 9007199254740991',
  'x-terdut-id': true,
});

/** `{id}` in a path. */
export const IdParams = Type.Object({ id: Id });
export type IdParams = Static<typeof IdParams>;

/** `{id}/…/{key_id}` in a path (API keys of a user or service account). */
export const KeyIdParams = Type.Object({ id: Id, key_id: Id });
export type KeyIdParams = Static<typeof KeyIdParams>;

/** `{id}/notes/{event_id}` in a path. */
export const EventIdParams = Type.Object({ id: Id, event_id: Id });
export type EventIdParams = Static<typeof EventIdParams>;

/** The body of a 204 answer. */
export const NoContent = Type.Null({ description: 'no content' });

/** `?limit=` of a list, 1 to `maximum`. */
export const Limit = (defaultValue: number, maximum = 1000) =>
  Type.Integer({ minimum: 1, maximum, default: defaultValue });

/** Error answers by status, for a route's response map: `errors(400, 404)`. */
export function errors<const S extends readonly ErrorStatus[]>(
  ...statuses: S
): { [K in S[number]]: typeof ErrorSchema } {
  return Object.fromEntries(statuses.map((status) => [status, ErrorSchema])) as {
    [K in S[number]]: typeof ErrorSchema;
  };
}
export type ErrorStatus = 400 | 401 | 403 | 404 | 408 | 409 | 429 | 502 | 503;
