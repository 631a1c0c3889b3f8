/**
 * iCalendar (RFC 5545) text for the schedule feeds. Events carry local times
 * with a TZID, and each zone used gets a VTIMEZONE built from the zone's real
 * transitions over the feed's window (read through Temporal), so a calendar
 * shows a Monday 09:00 handoff at 09:00 on both sides of a DST change even if
 * its own zone database differs.
 */
import { createHash } from 'node:crypto';
import { Temporal } from 'temporal-polyfill';

export interface CalendarEvent {
  uid: string;
  /** Epoch ms. */
  start: number;
  end: number;
  timeZone: string;
  summary: string;
  description: string;
}

export interface CalendarInput {
  name: string;
  /** The calendar's own zone (X-WR-TIMEZONE). */
  timeZone: string;
  events: readonly CalendarEvent[];
  /** DTSTAMP of every event. */
  now: number;
  /** The window the events come from; the VTIMEZONEs cover it. */
  from: number;
  to: number;
}

/** The whole `.ics` text, CRLF line ends, lines folded at 75 octets. */
export function renderCalendar(input: CalendarInput): string {
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//terdut//on-call schedule//EN',
    'CALSCALE:GREGORIAN',
    'METHOD:PUBLISH',
    `X-WR-CALNAME:${escapeText(input.name)}`,
    `X-WR-TIMEZONE:${input.timeZone}`,
    // Calendar apps poll; an hour keeps overrides reasonably fresh.
    'REFRESH-INTERVAL;VALUE=DURATION:PT1H',
    'X-PUBLISHED-TTL:PT1H',
  ];
  const zones = new Set(input.events.map((event) => event.timeZone));
  for (const zone of zones) lines.push(...timeZoneComponent(zone, input.from, input.to));
  for (const event of input.events) {
    lines.push(
      'BEGIN:VEVENT',
      `UID:${event.uid}`,
      `DTSTAMP:${utcStamp(input.now)}`,
      zonedProperty('DTSTART', event.start, event.timeZone),
      zonedProperty('DTEND', event.end, event.timeZone),
      `SUMMARY:${escapeText(event.summary)}`,
      `DESCRIPTION:${escapeText(event.description)}`,
      'TRANSP:TRANSPARENT',
      'END:VEVENT',
    );
  }
  lines.push('END:VCALENDAR');
  return lines.map(fold).join('\r\n') + '\r\n';
}

/**
 * The feed's entity tag (an HTTP ETag, quoted): a digest of its text without
 * the DTSTAMP lines, which say when the text was made (now, on every read:
 * METHOD:PUBLISH) rather than what it says. Two reads that list the same
 * shifts get the same tag, so a calendar that polls with If-None-Match gets
 * 304 and nothing to parse.
 */
export function calendarEntityTag(text: string): string {
  const content = text.replace(/^DTSTAMP:[^\r\n]*\r\n/gm, '');
  return `"${createHash('sha256').update(content).digest('base64url').slice(0, 27)}"`;
}

/**
 * `NAME;TZID=zone:local` for the instant's wall time, or `NAME:…Z` when that
 * wall time occurs twice (fall back). RFC 5545 3.3.5 says a TZID time means
 * the first occurrence, but calendar programs differ (ical.js takes the
 * second), so an ambiguous time is written as the instant it is.
 */
function zonedProperty(name: string, at: number, timeZone: string): string {
  const local = Temporal.Instant.fromEpochMilliseconds(at).toZonedDateTimeISO(timeZone).toPlainDateTime();
  const first = local.toZonedDateTime(timeZone, { disambiguation: 'earlier' }).epochMilliseconds;
  const last = local.toZonedDateTime(timeZone, { disambiguation: 'later' }).epochMilliseconds;
  if (first !== last) return `${name}:${utcStamp(at)}`;
  return `${name};TZID=${timeZone}:${wallStamp(local)}`;
}

/**
 * VTIMEZONE with the observance in force at `from` and one per transition up
 * to `to`. The first observance starts at the zone's last transition before
 * `from` (or 1970 when it has none), not at `from` itself: `from` moves with
 * the clock, and a VTIMEZONE that changed on every read would change the
 * feed's ETag, so a polling calendar would never get its 304.
 */
function timeZoneComponent(zone: string, from: number, to: number): string[] {
  const lines = ['BEGIN:VTIMEZONE', `TZID:${zone}`];
  const start = Temporal.Instant.fromEpochMilliseconds(from).toZonedDateTimeISO(zone);
  const transitions: Temporal.ZonedDateTime[] = [];
  for (let next = start.getTimeZoneTransition('next'); next; next = next.getTimeZoneTransition('next')) {
    if (next.epochMilliseconds > to) break;
    transitions.push(next);
  }
  const firstChange = transitions[0];
  const initialIsDaylight =
    firstChange !== undefined && firstChange.offsetNanoseconds < start.offsetNanoseconds;
  const began = start.getTimeZoneTransition('previous');
  const offsetBefore = began ? began.subtract({ nanoseconds: 1 }).offsetNanoseconds : start.offsetNanoseconds;
  lines.push(
    ...observance(
      initialIsDaylight ? 'DAYLIGHT' : 'STANDARD',
      began ? onsetOf(began, offsetBefore) : Temporal.PlainDateTime.from('1970-01-01T00:00:00'),
      offsetBefore,
      start.offsetNanoseconds,
    ),
  );
  let previousOffset = start.offsetNanoseconds;
  for (const transition of transitions) {
    const kind = transition.offsetNanoseconds > previousOffset ? 'DAYLIGHT' : 'STANDARD';
    lines.push(
      ...observance(kind, onsetOf(transition, previousOffset), previousOffset, transition.offsetNanoseconds),
    );
    previousOffset = transition.offsetNanoseconds;
  }
  lines.push('END:VTIMEZONE');
  return lines;
}

/** An observance's DTSTART: the onset as read on the clock before the change (in TZOFFSETFROM). */
function onsetOf(transition: Temporal.ZonedDateTime, offsetBefore: number): Temporal.PlainDateTime {
  return transition
    .toInstant()
    .toZonedDateTimeISO('UTC')
    .toPlainDateTime()
    .add({ nanoseconds: offsetBefore })
    .round({ smallestUnit: 'second', roundingMode: 'floor' });
}

function observance(kind: string, onset: Temporal.PlainDateTime, fromNs: number, toNs: number): string[] {
  return [
    `BEGIN:${kind}`,
    `DTSTART:${wallStamp(onset)}`,
    `TZOFFSETFROM:${offsetText(fromNs)}`,
    `TZOFFSETTO:${offsetText(toNs)}`,
    `END:${kind}`,
  ];
}

/** ±HHMM (±HHMMSS when there are seconds). */
function offsetText(nanoseconds: number): string {
  const sign = nanoseconds < 0 ? '-' : '+';
  const seconds = Math.abs(Math.round(nanoseconds / 1e9));
  const pad = (n: number) => String(n).padStart(2, '0');
  const text = `${sign}${pad(Math.floor(seconds / 3600))}${pad(Math.floor((seconds % 3600) / 60))}`;
  return seconds % 60 === 0 ? text : text + pad(seconds % 60);
}

function wallStamp(local: Temporal.PlainDateTime): string {
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return (
    `${pad(local.year, 4)}${pad(local.month)}${pad(local.day)}` +
    `T${pad(local.hour)}${pad(local.minute)}${pad(local.second)}`
  );
}

function utcStamp(at: number): string {
  return new Date(at)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

/**
 * TEXT escaping of RFC 5545 3.3.11. Names may hold any line break (a lone CR
 * as well) and other control characters, which TEXT does not allow: a raw CR
 * ends the content line for readers that split on any line break.
 */
function escapeText(text: string): string {
  return text
    .replace(/[\\;,]/g, (c) => `\\${c}`)
    .replace(/\r\n?|\n/g, '\\n')
    .replace(/(?!\t)\p{Cc}/gu, '');
}

/** Folds a content line at 75 octets (RFC 5545 3.1), never inside a UTF-8 character. */
function fold(line: string): string {
  if (Buffer.byteLength(line, 'utf8') <= 75) return line;
  const parts: string[] = [];
  let current = '';
  let bytes = 0;
  for (const char of line) {
    const size = Buffer.byteLength(char, 'utf8');
    // Continuation lines start with a space, which counts towards their 75.
    if (bytes + size > (parts.length === 0 ? 75 : 74)) {
      parts.push(current);
      current = '';
      bytes = 0;
    }
    current += char;
    bytes += size;
  }
  parts.push(current);
  return parts.join('\r\n ');
}
