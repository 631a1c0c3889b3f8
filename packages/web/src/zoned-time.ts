/**
 * Wall times in a named zone (the server's or a schedule's), never the
 * browser's: what an admin types in a `datetime-local` input is read on that
 * zone's clock, the way the server reads a rotation's handoff time.
 */

const DAY_MS = 24 * 60 * 60 * 1000;

/** Milliseconds `zone` is ahead of UTC at `instant` (to the second). */
export function zoneOffsetMs(instant: number, zone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(instant));
  const get = (type: string) => Number(parts.find((part) => part.type === type)?.value);
  const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return wall - Math.floor(instant / 1000) * 1000;
}

/**
 * `YYYY-MM-DDTHH:MM` on `zone`'s wall clock as an RFC 3339 instant, read as
 * the server reads handoff times (RFC 5545 3.3.5; Temporal's "compatible"): a
 * time the autumn change repeats is the first of the two; one the spring
 * change skips is read with the offset before the gap, so it moves forward by
 * the gap (02:30 in Berlin on the change day is 03:30 CEST). The same typed
 * time then means the same instant in an override, a maintenance window and a
 * rotation. A value of another shape is returned as it is, for the server to
 * refuse with its reason.
 */
export function wallTimeToIso(wall: string, zone: string): string {
  // A datetime-local value: seconds only when the input's step asks for them.
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(wall);
  if (!match) return wall;
  const [year, month, day, hour, minute, second] = match.slice(1).map((part) => Number(part ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const asUtc = Date.UTC(year, month - 1, day, hour, minute, second);
  // The offsets a day either side: equal, or the two sides of the one change near this time.
  const before = zoneOffsetMs(asUtc - DAY_MS, zone);
  const after = zoneOffsetMs(asUtc + DAY_MS, zone);
  const readings = [asUtc - before, asUtc - after].filter(
    (instant) => instant + zoneOffsetMs(instant, zone) === asUtc,
  );
  const instant = readings.length > 0 ? Math.min(...readings) : asUtc - before;
  return new Date(instant).toISOString();
}

/**
 * Whether the wall-clock time of `instant` in `zone` occurs twice (the hour
 * an autumn change repeats), so that the time alone does not say which.
 *
 * @example wallTimeOccursTwice(Date.parse('2026-10-25T00:30:00Z'), 'Europe/Berlin') // true (02:30 CEST)
 */
export function wallTimeOccursTwice(instant: number, zone: string): boolean {
  const at = Math.floor(instant / 1000) * 1000;
  const wall = at + zoneOffsetMs(at, zone);
  // A change near this time has its offsets a day either side.
  const offsets = new Set([zoneOffsetMs(at - DAY_MS, zone), zoneOffsetMs(at + DAY_MS, zone)]);
  const readings = [...offsets].filter((offset) => {
    const candidate = wall - offset;
    return candidate + zoneOffsetMs(candidate, zone) === wall;
  });
  return readings.length > 1;
}

/**
 * The zone's short name at `instant` as people there write it (the server's
 * handoff notices use the same): British English knows Europe's (CEST),
 * American English America's (EDT); otherwise the offset (GMT-3).
 */
export function zoneAbbreviation(instant: number, zone: string): string {
  let offset = '';
  for (const locale of ['en-GB', 'en-US']) {
    const name =
      new Intl.DateTimeFormat(locale, { timeZone: zone, timeZoneName: 'short' })
        .formatToParts(new Date(instant))
        .find((part) => part.type === 'timeZoneName')?.value ?? '';
    if (name !== '' && !/^(GMT|UTC)([+-]|$)/.test(name)) return name;
    offset ||= name;
  }
  return offset;
}
