/**
 * Instants as the API takes them: RFC 3339 date-times with a zone
 * (`2026-03-29T02:30:00+02:00`, `2026-12-03T22:00:00Z`), read strictly.
 *
 * `Date.parse` is not enough at the edge: it rolls an impossible date over
 * into the next month (`2026-02-30T01:00:00Z` is 2 March), takes `24:00`
 * as the next day, and reads a time without a zone in the server machine's
 * own zone, so the same request meant different instants on different hosts.
 */

import { isRealDate } from './calendar-date.ts';
import { badRequest } from './errors.ts';

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

export interface InstantSyntax {
  /** RFC 3339 requires the seconds; some fields also take `HH:MM` (default: required). */
  seconds?: 'required' | 'optional';
}

/**
 * The instant `text` names, or undefined when it is not an RFC 3339
 * date-time with a zone on a real calendar date and clock time.
 *
 * @example parseInstant('2026-03-29T02:30:00+02:00')?.toISOString() // '2026-03-29T00:30:00.000Z'
 * @example parseInstant('2026-02-30T01:00:00Z') // undefined
 * @example parseInstant('2026-12-03T22:00:00') // undefined (no zone)
 */
export function parseInstant(text: string, syntax: InstantSyntax = {}): Date | undefined {
  const match = DATE_TIME.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute] = match.slice(1, 6).map(Number) as [
    number,
    number,
    number,
    number,
    number,
  ];
  if (match[6] === undefined && syntax.seconds !== 'optional') return undefined;
  const second = Number(match[6] ?? 0);
  const millisecond = match[7] === undefined ? 0 : Number(match[7].slice(0, 3).padEnd(3, '0'));
  if (!isRealDate(year, month, day)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (match[8] === undefined) {
    const [offsetHours, offsetRest] = [Number(match[10]), Number(match[11])];
    if (offsetHours > 23 || offsetRest > 59) return undefined;
    offsetMinutes = (match[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetRest);
  }
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0-99 to 1900-1999.
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute, second, millisecond);
  return new Date(utc.getTime() - offsetMinutes * 60_000);
}

/**
 * A query string's instant text as it was meant: the `+` of a zone offset
 * typed unencoded (`?at=2026-12-07T10:00:00+01:00`, as curl sends it)
 * arrives as a space, which is what `+` means in a query string.
 *
 * @example instantTextFromQuery('2026-12-07T10:00:00 01:00') // '2026-12-07T10:00:00+01:00'
 */
export function instantTextFromQuery(text: string): string {
  return text.replace(/(\d) (\d{2}:\d{2})$/, '$1+$2');
}

/**
 * The instant in request field `field` (seconds optional), or 400 naming the
 * field: what every field of the API that takes an instant answers.
 *
 * @example instantField('starts_at', '2026-12-03T22:00Z') // 2026-12-03T22:00:00.000Z
 */
export function instantField(field: string, text: string): Date {
  const at = parseInstant(text, { seconds: 'optional' });
  if (at === undefined) {
    throw badRequest(
      `field "${field}" must be an RFC 3339 time with a zone such as 2026-12-03T22:00:00Z, got "${text.slice(0, 40)}"`,
    );
  }
  return at;
}
