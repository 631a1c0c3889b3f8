/**
 * The pure schedule computation: who is on call at an instant, and the
 * timeline of who is on call over a window, for one schedule given as data.
 * No database, no clock: instants are epoch milliseconds, and every wall-clock
 * question goes through Temporal (temporal-polyfill), never through offset
 * arithmetic of our own.
 *
 * Rules (README "On-call schedules"):
 * - A rotation's shift boundary k is the handoff time on the date
 *   `start_date + k × length` (days, weeks) in the schedule's zone, so it stays
 *   at that wall-clock time across daylight-saving changes and a one-day shift
 *   lasts 23 or 25 hours at a transition. An hours rotation counts real hours
 *   from its first handoff, so a 12-hour shift is always 12 hours.
 * - A handoff time that does not exist (spring forward) moves forward by the
 *   length of the gap (02:30 on the Berlin spring-forward day is 03:30 CEST);
 *   one that occurs twice (fall back) is the first. That is what PagerDuty,
 *   Opsgenie and Google Calendar do, and how RFC 5545 3.3.5 reads such a
 *   local time (the offset in force before the gap), so a calendar that
 *   reads a handoff as a local time agrees with us (`handoffInstant`).
 * - A restricted rotation covers an instant only when its local weekday is
 *   listed and its local time of day lies in [from, to) (a window with
 *   from > to wraps past midnight).
 * - Effective on-call = the newest override covering the instant, else the
 *   highest layer whose rotation has someone, else nobody.
 */
import { Temporal } from 'temporal-polyfill';

export type ShiftUnit = 'hours' | 'days' | 'weeks';

export interface RotationRestriction {
  /** ISO weekdays (1 = Monday … 7 = Sunday); absent = every day. */
  weekdays?: readonly number[];
  /** Local time of day `HH:MM` the coverage starts; with `to`. */
  from?: string;
  /** Local time of day `HH:MM` the coverage ends (exclusive); before `from` wraps midnight. */
  to?: string;
}

export interface RotationSpec {
  id: number;
  name: string;
  /** Higher layers win where they have someone. */
  layer: number;
  /** User ids in order; null stands for a deleted person, whose shifts fall through to lower layers. */
  participants: readonly (number | null)[];
  shiftLength: number;
  shiftUnit: ShiftUnit;
  /** `YYYY-MM-DD` in the schedule's zone: the first shift starts that day at `handoffTime`. */
  startDate: string;
  /** `HH:MM` in the schedule's zone. */
  handoffTime: string;
  /** `YYYY-MM-DD` in the schedule's zone: the last shift ends that day at `handoffTime`; absent: never. */
  endDate?: string;
  restriction?: RotationRestriction;
}

export interface OverrideSpec {
  id: number;
  userId: number;
  /** Epoch ms, inclusive. */
  start: number;
  /** Epoch ms, exclusive. */
  end: number;
}

export interface ScheduleSpec {
  timeZone: string;
  rotations: readonly RotationSpec[];
  overrides: readonly OverrideSpec[];
}

export type OnCallSource =
  | { kind: 'override'; overrideId: number }
  | { kind: 'rotation'; rotationId: number; shift: number }
  | { kind: 'none' };

export interface OnCall {
  userId: number | null;
  source: OnCallSource;
}

/** One stretch of the timeline with one person (or nobody) from one source. */
export interface Segment extends OnCall {
  start: number;
  end: number;
}

/** One stretch with one person (or nobody), whatever the sources: what a calendar shows. */
export interface PersonInterval {
  userId: number | null;
  start: number;
  end: number;
}

/** A change of who is on call at `at` (either side may be nobody). */
export interface Handoff {
  at: number;
  fromUserId: number | null;
  toUserId: number | null;
}

const DAY_MS = 86_400_000;

/**
 * The instant of a handoff at wall-clock `dateTime` in `timeZone`: the time
 * itself when it exists, the first of two when it is ambiguous (fall back),
 * and when it does not exist (spring forward) the time read with the offset
 * before the gap, i.e. moved forward by the gap's length (Temporal's
 * "compatible", RFC 5545 3.3.5, and what PagerDuty, Opsgenie and Google
 * Calendar do).
 *
 * @example handoffInstant(Temporal.PlainDateTime.from('2026-03-29T02:30'), 'Europe/Berlin')
 *   // 2026-03-29T01:30:00Z (03:30 CEST)
 */
export function handoffInstant(dateTime: Temporal.PlainDateTime, timeZone: string): number {
  return dateTime.toZonedDateTime(timeZone, { disambiguation: 'compatible' }).epochMilliseconds;
}

/**
 * The first instant at which the wall clock in `timeZone` reads `dateTime` or
 * later: the time itself when it exists, the first of two when it is
 * ambiguous, the end of the gap when it does not exist. Where a restriction
 * window (a local time of day, not an instant) switches on or off.
 *
 * @example wallClockInstant(Temporal.PlainDateTime.from('2026-03-29T02:30'), 'Europe/Berlin')
 *   // 2026-03-29T01:00:00Z (03:00 CEST)
 */
export function wallClockInstant(dateTime: Temporal.PlainDateTime, timeZone: string): number {
  const earlier = dateTime.toZonedDateTime(timeZone, { disambiguation: 'earlier' });
  if (earlier.toPlainDateTime().equals(dateTime)) return earlier.epochMilliseconds;
  // In a gap "earlier" lands before it; the wall clock first reaches
  // dateTime when it jumps over the gap.
  const transition = earlier.getTimeZoneTransition('next');
  if (!transition) throw new Error(`no transition after ${earlier.toString()}`);
  return transition.epochMilliseconds;
}

/**
 * The canonical IANA name of zone `name` (`europe/berlin` → `Europe/Berlin`),
 * or undefined when it is not a named zone (offsets such as `+01:00` are not:
 * they have no daylight-saving rules to follow).
 */
export function canonicalTimeZone(name: string): string | undefined {
  if (name.length === 0 || /^[+-]/.test(name)) return undefined;
  try {
    return Temporal.Now.zonedDateTimeISO(name).timeZoneId;
  } catch {
    return undefined;
  }
}

/** `HH:MM` (00:00–23:59) as minutes after midnight, or undefined. */
export function parseTimeOfDay(text: string): number | undefined {
  const match = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(text);
  return match ? Number(match[1]) * 60 + Number(match[2]) : undefined;
}

function plainTime(text: string): Temporal.PlainTime {
  return Temporal.PlainTime.from(text);
}

/**
 * The rotation's first handoff as wall-clock time, and its instant and the
 * instant it ends (Infinity: never) in the zone last asked for: every
 * on-call question asks for them, a timeline thousands of times.
 */
const firstHandoffs = new WeakMap<
  RotationSpec,
  { start: Temporal.PlainDateTime; timeZone: string; instant: number; end: number }
>();

function firstHandoff(rotation: RotationSpec, timeZone: string) {
  let cached = firstHandoffs.get(rotation);
  if (!cached || cached.timeZone !== timeZone) {
    const handoff = plainTime(rotation.handoffTime);
    const start = Temporal.PlainDate.from(rotation.startDate).toPlainDateTime(handoff);
    const end =
      rotation.endDate === undefined
        ? Infinity
        : handoffInstant(Temporal.PlainDate.from(rotation.endDate).toPlainDateTime(handoff), timeZone);
    cached = { start, timeZone, instant: handoffInstant(start, timeZone), end };
    firstHandoffs.set(rotation, cached);
  }
  return cached;
}

/** The instant the rotation ends (its end date at its handoff time, in the zone), or Infinity. */
function rotationEnd(rotation: RotationSpec, timeZone: string): number {
  return firstHandoff(rotation, timeZone).end;
}

/** Instant of boundary `k` (k ≥ 0) of `rotation`: the start of shift k. */
export function shiftBoundary(rotation: RotationSpec, timeZone: string, k: number): number {
  const first = firstHandoff(rotation, timeZone);
  if (rotation.shiftUnit === 'hours') return first.instant + k * rotation.shiftLength * 3_600_000;
  if (k === 0) return first.instant;
  const days = k * rotation.shiftLength * (rotation.shiftUnit === 'weeks' ? 7 : 1);
  return handoffInstant(first.start.add({ days }), timeZone);
}

/** Nominal shift length in ms, exact for hours, within an hour or two per shift otherwise. */
function nominalLength(rotation: RotationSpec): number {
  if (rotation.shiftUnit === 'hours') return rotation.shiftLength * 3_600_000;
  return rotation.shiftLength * (rotation.shiftUnit === 'weeks' ? 7 : 1) * DAY_MS;
}

/** The shift `at` falls in (0-based), or -1 before the rotation's first handoff. */
export function shiftIndexAt(rotation: RotationSpec, timeZone: string, at: number): number {
  const first = shiftBoundary(rotation, timeZone, 0);
  if (at < first) return -1;
  let k = Math.floor((at - first) / nominalLength(rotation));
  if (rotation.shiftUnit === 'hours') return k;
  // Days and weeks drift from the nominal length by the DST hours crossed;
  // a step or two corrects the estimate.
  while (k > 0 && shiftBoundary(rotation, timeZone, k) > at) k--;
  while (shiftBoundary(rotation, timeZone, k + 1) <= at) k++;
  return k;
}

/** Whether the rotation's restriction (if any) lets it cover `at`. */
export function restrictionCovers(rotation: RotationSpec, timeZone: string, at: number): boolean {
  const restriction = rotation.restriction;
  if (!restriction) return true;
  const local = Temporal.Instant.fromEpochMilliseconds(at).toZonedDateTimeISO(timeZone);
  if (restriction.weekdays && !restriction.weekdays.includes(local.dayOfWeek)) return false;
  if (restriction.from === undefined || restriction.to === undefined) return true;
  const from = parseTimeOfDay(restriction.from)! * 60_000;
  const to = parseTimeOfDay(restriction.to)! * 60_000;
  const time = ((local.hour * 60 + local.minute) * 60 + local.second) * 1000 + local.millisecond;
  return from < to ? time >= from && time < to : time >= from || time < to;
}

/** Who `rotation` has at `at`: a user id, null (a deleted person), or undefined (not covering). */
export function rotationAt(
  rotation: RotationSpec,
  timeZone: string,
  at: number,
): { userId: number | null; shift: number } | undefined {
  if (rotation.participants.length === 0) return undefined;
  if (at >= rotationEnd(rotation, timeZone)) return undefined;
  const shift = shiftIndexAt(rotation, timeZone, at);
  if (shift < 0 || !restrictionCovers(rotation, timeZone, at)) return undefined;
  return { userId: rotation.participants[shift % rotation.participants.length] ?? null, shift };
}

/** Highest layer first; among equal layers the newer rotation. */
function byPrecedence(rotations: readonly RotationSpec[]): RotationSpec[] {
  return [...rotations].sort((a, b) => b.layer - a.layer || b.id - a.id);
}

/**
 * Who is on call at `at`: the newest override covering it, else the highest
 * layer with someone, else nobody.
 */
export function onCallAt(spec: ScheduleSpec, at: number): OnCall {
  let override: OverrideSpec | undefined;
  for (const candidate of spec.overrides) {
    if (candidate.start <= at && at < candidate.end && (!override || candidate.id > override.id)) {
      override = candidate;
    }
  }
  if (override) return { userId: override.userId, source: { kind: 'override', overrideId: override.id } };
  for (const rotation of byPrecedence(spec.rotations)) {
    const held = rotationAt(rotation, spec.timeZone, at);
    if (held && held.userId !== null) {
      return {
        userId: held.userId,
        source: { kind: 'rotation', rotationId: rotation.id, shift: held.shift },
      };
    }
  }
  return { userId: null, source: { kind: 'none' } };
}

/** Shift boundaries of `rotation` strictly inside (from, to), its end included. */
function boundariesInside(rotation: RotationSpec, timeZone: string, from: number, to: number): number[] {
  const points: number[] = [];
  const end = rotationEnd(rotation, timeZone);
  if (end > from && end < to) points.push(end);
  const last = Math.min(to, end);
  let k = Math.max(0, shiftIndexAt(rotation, timeZone, from) + 1);
  for (;;) {
    const at = shiftBoundary(rotation, timeZone, k);
    if (at >= last) break;
    if (at > from) points.push(at);
    k++;
  }
  return points;
}

/**
 * Every instant in (from, to) where a restriction can switch on or off: the
 * possible instants of local midnight and of the window's ends on each local
 * date, and every zone transition (where the wall clock jumps). Between two
 * such points the local weekday and time of day move continuously without
 * crossing a threshold, so the restriction's answer is constant.
 */
function restrictionPointsInside(
  rotation: RotationSpec,
  timeZone: string,
  from: number,
  to: number,
): number[] {
  const restriction = rotation.restriction;
  if (!restriction) return [];
  const points: number[] = [];
  const startZoned = Temporal.Instant.fromEpochMilliseconds(from).toZonedDateTimeISO(timeZone);
  const lastDate = Temporal.Instant.fromEpochMilliseconds(to).toZonedDateTimeISO(timeZone).toPlainDate();
  const times = [Temporal.PlainTime.from('00:00')];
  if (restriction.from !== undefined) times.push(plainTime(restriction.from));
  if (restriction.to !== undefined) times.push(plainTime(restriction.to));
  for (
    let date = startZoned.toPlainDate().subtract({ days: 1 });
    Temporal.PlainDate.compare(date, lastDate) <= 0;
    date = date.add({ days: 1 })
  ) {
    for (const time of times) {
      const dateTime = date.toPlainDateTime(time);
      for (const disambiguation of ['earlier', 'later'] as const) {
        points.push(dateTime.toZonedDateTime(timeZone, { disambiguation }).epochMilliseconds);
      }
      points.push(wallClockInstant(dateTime, timeZone));
    }
  }
  for (
    let zoned = startZoned.getTimeZoneTransition('next');
    zoned;
    zoned = zoned.getTimeZoneTransition('next')
  ) {
    if (zoned.epochMilliseconds >= to) break;
    points.push(zoned.epochMilliseconds);
  }
  return points.filter((at) => at > from && at < to);
}

function sameSource(a: OnCallSource, b: OnCallSource): boolean {
  if (a.kind === 'override' && b.kind === 'override') return a.overrideId === b.overrideId;
  if (a.kind === 'rotation' && b.kind === 'rotation')
    return a.rotationId === b.rotationId && a.shift === b.shift;
  return a.kind === b.kind;
}

/**
 * The effective schedule over [from, to): consecutive segments that cover the
 * window exactly, each with one person (or nobody) from one source.
 */
export function timeline(spec: ScheduleSpec, from: number, to: number): Segment[] {
  if (!(from < to)) return [];
  const points = new Set<number>([from]);
  for (const rotation of spec.rotations) {
    for (const at of boundariesInside(rotation, spec.timeZone, from, to)) points.add(at);
    for (const at of restrictionPointsInside(rotation, spec.timeZone, from, to)) points.add(at);
  }
  for (const override of spec.overrides) {
    if (override.start > from && override.start < to) points.add(override.start);
    if (override.end > from && override.end < to) points.add(override.end);
  }
  const sorted = [...points].sort((a, b) => a - b);
  const segments: Segment[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const start = sorted[i]!;
    const end = sorted[i + 1] ?? to;
    const who = onCallAt(spec, start);
    const last = segments.at(-1);
    if (last && last.userId === who.userId && sameSource(last.source, who.source)) {
      last.end = end;
    } else {
      segments.push({ start, end, ...who });
    }
  }
  return segments;
}

/** Joins neighbouring segments of the same person (or of nobody), whatever their sources. */
export function personIntervals(segments: readonly Segment[]): PersonInterval[] {
  const intervals: PersonInterval[] = [];
  for (const segment of segments) {
    const last = intervals.at(-1);
    if (last && last.userId === segment.userId && last.end === segment.start) {
      last.end = segment.end;
    } else {
      intervals.push({ userId: segment.userId, start: segment.start, end: segment.end });
    }
  }
  return intervals;
}

/** The instants in (from, to) where who is on call changes. */
export function handoffs(spec: ScheduleSpec, from: number, to: number): Handoff[] {
  const intervals = personIntervals(timeline(spec, from, to));
  const result: Handoff[] = [];
  for (let i = 1; i < intervals.length; i++) {
    result.push({
      at: intervals[i]!.start,
      fromUserId: intervals[i - 1]!.userId,
      toUserId: intervals[i]!.userId,
    });
  }
  return result;
}

/** The instant local `date` starts in `timeZone` (midnight, or the end of a gap at midnight). */
export function startOfLocalDay(date: string, timeZone: string): number {
  return Temporal.PlainDate.from(date).toZonedDateTime({ timeZone }).epochMilliseconds;
}

/**
 * The instant `days` calendar days before `at` on `timeZone`'s wall clock:
 * 168 hours for a week, 169 across an autumn change, 167 across a spring one.
 *
 * @example localDaysBefore(Date.parse('2026-10-26T07:30:00Z'), 'Europe/Berlin', 7)
 *   // 2026-10-19T06:30:00Z (08:30 CEST, the same wall-clock time a week earlier)
 */
export function localDaysBefore(at: number, timeZone: string, days: number): number {
  return Temporal.Instant.fromEpochMilliseconds(at).toZonedDateTimeISO(timeZone).subtract({ days })
    .epochMilliseconds;
}

/**
 * Whether the wall-clock time of `at` in `timeZone` occurs twice (the hour an
 * autumn change repeats), so that a reader needs the offset to tell which.
 *
 * @example wallTimeOccursTwice(Date.parse('2026-10-25T00:30:00Z'), 'Europe/Berlin') // true (02:30 CEST)
 */
export function wallTimeOccursTwice(at: number, timeZone: string): boolean {
  const local = Temporal.Instant.fromEpochMilliseconds(at).toZonedDateTimeISO(timeZone).toPlainDateTime();
  const earlier = local.toZonedDateTime(timeZone, { disambiguation: 'earlier' });
  return !earlier.equals(local.toZonedDateTime(timeZone, { disambiguation: 'later' }));
}

/** The local date (`YYYY-MM-DD`) of `at` in `timeZone`. */
export function localDateOf(at: number, timeZone: string): string {
  return Temporal.Instant.fromEpochMilliseconds(at).toZonedDateTimeISO(timeZone).toPlainDate().toString();
}
