/**
 * Calendar dates (`YYYY-MM-DD`, no time, no zone) as the schedule stores them,
 * and "which date is it now" in the configured time zone.
 */

const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * True when `text` is a real date in `YYYY-MM-DD` form (so `2026-02-30` is not).
 *
 * @example isCalendarDate('2026-07-27') // true
 */
export function isCalendarDate(text: string): boolean {
  const match = DATE_PATTERN.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  return year >= 1 && isRealDate(year, month, day);
}

/**
 * True when `month` (1-12) of `year` has a day `day` (the proleptic
 * Gregorian calendar, year 0 included): what Date would otherwise roll over.
 *
 * @example isRealDate(2028, 2, 29) // true
 * @example isRealDate(2026, 2, 29) // false
 */
export function isRealDate(year: number, month: number, day: number): boolean {
  const date = utcMidnight(year, month, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/**
 * The calendar date that `instant` falls on in `timeZone` (an IANA name).
 *
 * @example localDate(new Date('2026-07-27T23:30:00Z'), 'Europe/Berlin') // '2026-07-28'
 */
export function localDate(instant: Date, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).formatToParts(instant);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year').padStart(4, '0')}-${part('month')}-${part('day')}`;
}

/**
 * `date` moved by `days` (negative goes back). `date` must be a calendar date.
 *
 * @example addDays('2026-12-31', 1) // '2027-01-01'
 */
export function addDays(date: string, days: number): string {
  const match = DATE_PATTERN.exec(date);
  if (!match) throw new Error(`not a calendar date: ${date}`);
  const moved = utcMidnight(Number(match[1]), Number(match[2]), Number(match[3]) + days);
  return moved.toISOString().slice(0, 10);
}

// Date.UTC maps years 0-99 to 1900-1999; setUTCFullYear does not.
function utcMidnight(year: number, month: number, day: number): Date {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date;
}
