import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Temporal } from 'temporal-polyfill';
import {
  handoffs,
  onCallAt,
  personIntervals,
  shiftBoundary,
  timeline,
  type OverrideSpec,
  type RotationSpec,
  type ScheduleSpec,
  type ShiftUnit,
} from './schedule-timeline.ts';

const HOUR = 3_600_000;
const ms = (iso: string) => Date.parse(iso);
const iso = (at: number) => new Date(at).toISOString();

let nextId = 1;
function rotation(
  fields: Partial<RotationSpec> & Pick<RotationSpec, 'startDate' | 'handoffTime'>,
): RotationSpec {
  const id = nextId++;
  return {
    id,
    name: `rotation ${id}`,
    layer: 1,
    participants: [1, 2, 3],
    shiftLength: 1,
    shiftUnit: 'days',
    ...fields,
  };
}

/** Instants of the first `count` boundaries, as ISO strings. */
function boundaries(spec: RotationSpec, zone: string, count: number): string[] {
  return Array.from({ length: count }, (_, k) => iso(shiftBoundary(spec, zone, k)));
}

describe('Europe/Berlin', () => {
  const zone = 'Europe/Berlin';

  test('a weekly handoff on Monday 09:00 stays at 09:00 local across both changes', () => {
    const weekly = rotation({ startDate: '2026-03-23', handoffTime: '09:00', shiftUnit: 'weeks' });
    // CET (+1) before 29 March, CEST (+2) after: 08:00Z then 07:00Z.
    assert.deepEqual(boundaries(weekly, zone, 2), ['2026-03-23T08:00:00.000Z', '2026-03-30T07:00:00.000Z']);
    const autumn = rotation({ startDate: '2026-10-19', handoffTime: '09:00', shiftUnit: 'weeks' });
    assert.deepEqual(boundaries(autumn, zone, 2), ['2026-10-19T07:00:00.000Z', '2026-10-26T08:00:00.000Z']);
  });

  test('a one-day shift is a calendar day: 23 hours in spring, 25 in autumn', () => {
    const daily = rotation({ startDate: '2026-03-28', handoffTime: '09:00' });
    const [a, b, c] = [0, 1, 2].map((k) => shiftBoundary(daily, zone, k));
    assert.equal(b! - a!, 23 * HOUR);
    assert.equal(c! - b!, 24 * HOUR);
    const autumn = rotation({ startDate: '2026-10-24', handoffTime: '09:00' });
    assert.equal(shiftBoundary(autumn, zone, 1) - shiftBoundary(autumn, zone, 0), 25 * HOUR);
  });

  test('a 12-hour shift is 12 real hours, so its wall-clock handoff moves at the change', () => {
    const halves = rotation({
      startDate: '2026-03-28',
      handoffTime: '21:00',
      shiftUnit: 'hours',
      shiftLength: 12,
    });
    assert.deepEqual(boundaries(halves, zone, 3), [
      '2026-03-28T20:00:00.000Z',
      '2026-03-29T08:00:00.000Z', // 10:00 CEST
      '2026-03-29T20:00:00.000Z',
    ]);
  });

  test('a handoff at 02:30 on the spring-forward day moves forward by the skipped hour, to 03:30', () => {
    // As PagerDuty, Opsgenie and Google Calendar do, and RFC 5545 3.3.5 reads a
    // nonexistent local time: with the offset in force before the gap.
    const daily = rotation({ startDate: '2026-03-28', handoffTime: '02:30' });
    assert.deepEqual(boundaries(daily, zone, 3), [
      '2026-03-28T01:30:00.000Z',
      '2026-03-29T01:30:00.000Z', // 03:30 CEST: 02:30 CET, had the clock not jumped
      '2026-03-30T00:30:00.000Z',
    ]);
  });

  test('a rotation that starts or ends at a skipped 02:30 starts or ends at 03:30', () => {
    const starting = rotation({ startDate: '2026-03-29', handoffTime: '02:30', participants: [10] });
    assert.equal(iso(shiftBoundary(starting, zone, 0)), '2026-03-29T01:30:00.000Z');
    const spec: ScheduleSpec = {
      timeZone: zone,
      rotations: [
        rotation({
          startDate: '2026-03-20',
          handoffTime: '02:30',
          participants: [10],
          endDate: '2026-03-29',
        }),
      ],
      overrides: [],
    };
    assert.equal(onCallAt(spec, ms('2026-03-29T01:29:59Z')).userId, 10);
    assert.equal(onCallAt(spec, ms('2026-03-29T01:30:00Z')).userId, null);
  });

  test('a handoff at 02:30 on the fall-back day happens at the first 02:30', () => {
    const daily = rotation({ startDate: '2026-10-25', handoffTime: '02:30' });
    assert.equal(iso(shiftBoundary(daily, zone, 0)), '2026-10-25T00:30:00.000Z'); // 02:30 CEST
  });

  test('a rotation that ends on the spring-forward day ends at its handoff time there, lower layers take over', () => {
    const spec: ScheduleSpec = {
      timeZone: zone,
      rotations: [
        rotation({
          startDate: '2026-03-20',
          handoffTime: '09:00',
          participants: [10],
          layer: 2,
          endDate: '2026-03-29',
        }),
        rotation({ startDate: '2026-03-01', handoffTime: '09:00', participants: [20], layer: 1 }),
      ],
      overrides: [],
    };
    // 09:00 CEST on 29 March is 07:00Z (08:00Z the day before, in CET).
    assert.equal(onCallAt(spec, ms('2026-03-29T06:59:59Z')).userId, 10);
    assert.equal(onCallAt(spec, ms('2026-03-29T07:00:00Z')).userId, 20);
    assert.equal(onCallAt(spec, ms('2026-04-20T07:00:00Z')).userId, 20, 'and it stays ended');
    assert.deepEqual(
      timeline(spec, ms('2026-03-28T00:00:00Z'), ms('2026-03-30T00:00:00Z')).map((s) => [
        s.userId,
        iso(s.start),
      ]),
      [
        [10, '2026-03-28T00:00:00.000Z'],
        [10, '2026-03-28T08:00:00.000Z'], // the next daily shift, 09:00 CET
        [20, '2026-03-29T07:00:00.000Z'],
      ],
    );
  });

  test('who is on call follows the boundaries, before, at and after the change', () => {
    const spec: ScheduleSpec = {
      timeZone: zone,
      rotations: [rotation({ startDate: '2026-03-28', handoffTime: '02:30', participants: [10, 20] })],
      overrides: [],
    };
    assert.equal(onCallAt(spec, ms('2026-03-28T01:29:59Z')).userId, null);
    assert.equal(onCallAt(spec, ms('2026-03-28T01:30:00Z')).userId, 10);
    assert.equal(onCallAt(spec, ms('2026-03-29T01:29:59Z')).userId, 10);
    assert.equal(onCallAt(spec, ms('2026-03-29T01:30:00Z')).userId, 20);
  });
});

describe('America/New_York', () => {
  const zone = 'America/New_York';

  test('a daily handoff at 02:30 is at 03:30 EDT on 8 March and at the first 01:30 on 1 November', () => {
    const spring = rotation({ startDate: '2026-03-07', handoffTime: '02:30' });
    assert.deepEqual(boundaries(spring, zone, 3), [
      '2026-03-07T07:30:00.000Z',
      '2026-03-08T07:30:00.000Z', // 03:30 EDT: 02:30 does not exist, it moves forward by the hour
      '2026-03-09T06:30:00.000Z',
    ]);
    const autumn = rotation({ startDate: '2026-11-01', handoffTime: '01:30' });
    assert.equal(iso(shiftBoundary(autumn, zone, 0)), '2026-11-01T05:30:00.000Z'); // 01:30 EDT
  });

  test('an evening restriction (18:00–08:00) stays at those local hours across the change', () => {
    const spec: ScheduleSpec = {
      timeZone: zone,
      rotations: [
        rotation({
          startDate: '2026-03-01',
          handoffTime: '08:00',
          participants: [7],
          restriction: { from: '18:00', to: '08:00' },
        }),
      ],
      overrides: [],
    };
    const segments = timeline(spec, ms('2026-03-07T13:00:00Z'), ms('2026-03-09T00:00:00Z'));
    // Midnight and the 08:00 handoff fall inside one covered stretch: one shift, one segment.
    assert.deepEqual(
      segments.filter((s) => s.userId === 7).map((s) => [iso(s.start), iso(s.end)]),
      [
        ['2026-03-07T23:00:00.000Z', '2026-03-08T12:00:00.000Z'], // 18:00 EST → 08:00 EDT
        ['2026-03-08T22:00:00.000Z', '2026-03-09T00:00:00.000Z'], // from 18:00 EDT
      ],
    );
  });
});

describe('Australia/Lord_Howe (30-minute shift)', () => {
  const zone = 'Australia/Lord_Howe';

  test('a one-day shift lasts 23.5 hours in October and 24.5 in April', () => {
    const october = rotation({ startDate: '2026-10-03', handoffTime: '09:00' });
    assert.equal(shiftBoundary(october, zone, 1) - shiftBoundary(october, zone, 0), 23.5 * HOUR);
    const april = rotation({ startDate: '2026-04-04', handoffTime: '09:00' });
    assert.equal(shiftBoundary(april, zone, 1) - shiftBoundary(april, zone, 0), 24.5 * HOUR);
  });

  test('02:15 on 4 October does not exist and happens at 02:45; 01:45 on 5 April happens the first time', () => {
    const october = rotation({ startDate: '2026-10-04', handoffTime: '02:15' });
    assert.equal(iso(shiftBoundary(october, zone, 0)), '2026-10-03T15:45:00.000Z'); // 02:45 +11
    const april = rotation({ startDate: '2026-04-05', handoffTime: '01:45' });
    assert.equal(iso(shiftBoundary(april, zone, 0)), '2026-04-04T14:45:00.000Z'); // 01:45 +11
  });
});

describe('a zone without daylight-saving time (Asia/Tokyo)', () => {
  test('every one-day shift is 24 hours and the handoff is at the same UTC time all year', () => {
    const daily = rotation({ startDate: '2026-03-01', handoffTime: '09:00' });
    for (const k of [0, 30, 200, 240]) {
      assert.equal(
        shiftBoundary(daily, 'Asia/Tokyo', k + 1) - shiftBoundary(daily, 'Asia/Tokyo', k),
        24 * HOUR,
      );
      assert.equal(new Date(shiftBoundary(daily, 'Asia/Tokyo', k)).getUTCHours(), 0);
    }
  });
});

describe('layers and overrides', () => {
  const zone = 'Europe/Berlin';
  const weekly = rotation({
    startDate: '2026-03-02',
    handoffTime: '09:00',
    shiftUnit: 'weeks',
    participants: [1, 2],
  });
  const weekend = rotation({
    startDate: '2026-03-02',
    handoffTime: '00:00',
    layer: 2,
    participants: [3],
    restriction: { weekdays: [6, 7] },
  });
  const override: OverrideSpec = {
    id: 5,
    userId: 9,
    start: ms('2026-03-04T10:00:00Z'),
    end: ms('2026-03-04T12:00:00Z'),
  };
  const spec: ScheduleSpec = { timeZone: zone, rotations: [weekly, weekend], overrides: [override] };

  test('an override wins over every layer, a higher layer where it has someone, else the lower', () => {
    assert.equal(onCallAt(spec, ms('2026-03-04T11:00:00Z')).userId, 9);
    assert.deepEqual(onCallAt(spec, ms('2026-03-04T11:00:00Z')).source, { kind: 'override', overrideId: 5 });
    assert.equal(onCallAt(spec, ms('2026-03-04T12:00:00Z')).userId, 1);
    assert.equal(onCallAt(spec, ms('2026-03-07T12:00:00Z')).userId, 3); // Saturday
    assert.equal(onCallAt(spec, ms('2026-03-09T12:00:00Z')).userId, 2); // Monday, second week
  });

  test('of two overlapping overrides the newer wins', () => {
    const newer: OverrideSpec = {
      id: 6,
      userId: 8,
      start: ms('2026-03-04T11:00:00Z'),
      end: ms('2026-03-04T13:00:00Z'),
    };
    const both = { ...spec, overrides: [newer, override] };
    assert.equal(onCallAt(both, ms('2026-03-04T10:30:00Z')).userId, 9);
    assert.equal(onCallAt(both, ms('2026-03-04T11:30:00Z')).userId, 8);
  });

  test('a deleted participant leaves the shift to the lower layer', () => {
    const top = rotation({ startDate: '2026-03-02', handoffTime: '09:00', layer: 5, participants: [null] });
    assert.equal(onCallAt({ ...spec, rotations: [weekly, top] }, ms('2026-03-04T09:00:00Z')).userId, 1);
  });

  test('of two rotations on one layer the later wins; a new layer on top from a later date keeps the past', () => {
    const week = { handoffTime: '09:00', shiftUnit: 'weeks' } as const;
    const reordered = rotation({ ...week, startDate: '2026-03-02', participants: [2, 1] });
    assert.equal(onCallAt({ ...spec, rotations: [weekly, reordered] }, ms('2026-03-04T12:00:00Z')).userId, 2);
    // From Monday 16 March on, 3 then 1 then 2; the weeks before stay as they were.
    const next = rotation({ ...week, layer: 3, startDate: '2026-03-16', participants: [3, 1, 2] });
    const before = timeline(spec, ms('2026-03-01T00:00:00Z'), ms('2026-03-16T08:00:00Z'));
    const changed = { ...spec, rotations: [weekly, weekend, next] };
    assert.deepEqual(timeline(changed, ms('2026-03-01T00:00:00Z'), ms('2026-03-16T08:00:00Z')), before);
    assert.equal(onCallAt(changed, ms('2026-03-16T08:00:00Z')).userId, 3);
    assert.equal(onCallAt(changed, ms('2026-03-23T08:00:00Z')).userId, 1);
  });

  test('weeknights 22:00 to 06:00 as the README says: two rotations alike but for their restrictions', () => {
    const night = {
      startDate: '2026-03-02',
      handoffTime: '09:00',
      shiftUnit: 'weeks',
      participants: [1, 2],
    } as const;
    const evenings = rotation({
      ...night,
      restriction: { weekdays: [1, 2, 3, 4, 5], from: '22:00', to: '00:00' },
    });
    const mornings = rotation({
      ...night,
      restriction: { weekdays: [2, 3, 4, 5, 6], from: '00:00', to: '06:00' },
    });
    const nights: ScheduleSpec = { timeZone: zone, rotations: [evenings, mornings], overrides: [] };
    // Berlin is UTC+1 in March: Monday 9 March 22:00 local is 21:00Z.
    assert.deepEqual(
      personIntervals(timeline(nights, ms('2026-03-08T12:00:00Z'), ms('2026-03-15T12:00:00Z')))
        .filter((interval) => interval.userId !== null)
        .map((interval) => [iso(interval.start), iso(interval.end)]),
      ['09', '10', '11', '12', '13'].map((day) => [
        `2026-03-${day}T21:00:00.000Z`,
        `2026-03-${String(Number(day) + 1)}T05:00:00.000Z`,
      ]),
    );
    // One window restricted to weekdays 1–5 would cover Monday morning and miss Saturday's.
    const one = rotation({
      ...night,
      restriction: { weekdays: [1, 2, 3, 4, 5], from: '22:00', to: '06:00' },
    });
    const single: ScheduleSpec = { timeZone: zone, rotations: [one], overrides: [] };
    assert.notEqual(onCallAt(single, ms('2026-03-09T02:00:00Z')).userId, null);
    assert.equal(onCallAt(single, ms('2026-03-14T02:00:00Z')).userId, null);
  });

  test('handoffs list each change of person, nobody included', () => {
    const changes = handoffs(spec, ms('2026-03-04T00:00:00Z'), ms('2026-03-05T00:00:00Z'));
    assert.deepEqual(
      changes.map((h) => [iso(h.at), h.fromUserId, h.toUserId]),
      [
        ['2026-03-04T10:00:00.000Z', 1, 9],
        ['2026-03-04T12:00:00.000Z', 9, 1],
      ],
    );
    assert.deepEqual(
      handoffs(spec, ms('2026-03-01T00:00:00Z'), ms('2026-03-02T12:00:00Z')).map((h) => [
        h.fromUserId,
        h.toUserId,
      ]),
      [[null, 1]],
    );
  });
});

// ---------------------------------------------------------------------------
// Property test: the timeline and onCallAt agree with a brute-force reference
// that walks the wall clock minute by minute. The reference shares no code
// with the module: it reads each minute's local wall time once (the offset
// from Temporal) and decides everything with plain number comparisons.

/** mulberry32: a small seeded PRNG, so a failing case reproduces from its seed. */
function prng(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MINUTE = 60_000;
/** Wall-clock minutes (as if UTC) of each minute from `walkStart`, per zone. */
const wallCache = new Map<string, Int32Array>();
const WALK_START = ms('2026-01-01T00:00:00Z');
const WALK_MINUTES = 365 * 24 * 60;
function wallMinutes(zone: string): Int32Array {
  let walls = wallCache.get(zone);
  if (walls) return walls;
  walls = new Int32Array(WALK_MINUTES);
  // The offset changes only at transitions; read it every 30 minutes (all
  // transitions of these zones fall on a half hour) to keep this quick.
  let offset = 0;
  for (let i = 0; i < WALK_MINUTES; i++) {
    if (i % 30 === 0) {
      offset =
        Temporal.Instant.fromEpochMilliseconds(WALK_START + i * MINUTE).toZonedDateTimeISO(zone)
          .offsetNanoseconds / 60e9;
    }
    walls[i] = (WALK_START / MINUTE + i + offset) | 0;
  }
  wallCache.set(zone, walls);
  return walls;
}

const wallOf = (date: string, time: string) => Date.parse(`${date}T${time}:00Z`) / MINUTE;
const addWallDays = (date: string, days: number) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

/** The highest wall-clock minute read up to each minute: where the wall clock first reaches a time. */
const maxCache = new Map<string, Int32Array>();
function runningMaxima(zone: string): Int32Array {
  let maxima = maxCache.get(zone);
  if (maxima) return maxima;
  const walls = wallMinutes(zone);
  maxima = new Int32Array(walls.length);
  let max = -Infinity;
  for (let i = 0; i < walls.length; i++) maxima[i] = max = Math.max(max, walls[i]!);
  maxCache.set(zone, maxima);
  return maxima;
}

/**
 * The minute index of the walk at which a handoff at wall-clock minute
 * `target` happens: the first minute whose wall clock reads it (the first of
 * two at a fall back); when the clock jumps over it (spring forward), as many
 * minutes after the jump as `target` lies after the last minute read before
 * it, i.e. moved forward by the gap.
 */
function handoffMinute(zone: string, target: number): number {
  const walls = wallMinutes(zone);
  const maxima = runningMaxima(zone);
  let [low, high] = [0, maxima.length];
  while (low < high) {
    const middle = (low + high) >> 1;
    if (maxima[middle]! >= target) high = middle;
    else low = middle + 1;
  }
  if (low === 0 || low === maxima.length || walls[low] === target) return low;
  return low - 1 + (target - walls[low - 1]!);
}

/** Walk minutes of boundaries 0, 1, 2, … (days and weeks), or of boundary 0 (hours). */
const targetCache = new WeakMap<RotationSpec, number[]>();
function targets(zone: string, r: RotationSpec): number[] {
  let list = targetCache.get(r);
  if (list) return list;
  const step = r.shiftUnit === 'weeks' ? 7 * r.shiftLength : r.shiftLength;
  list = (
    r.shiftUnit === 'hours'
      ? [wallOf(r.startDate, r.handoffTime)]
      : Array.from({ length: 400 }, (_, k) => wallOf(addWallDays(r.startDate, k * step), r.handoffTime))
  ).map((target) => handoffMinute(zone, target));
  targetCache.set(r, list);
  return list;
}

/** Who the reference has at minute index `i` of the walk. */
function referenceAt(spec: ScheduleSpec, i: number): number | null {
  const walls = wallMinutes(spec.timeZone);
  const at = WALK_START + i * MINUTE;
  let best: OverrideSpec | undefined;
  for (const o of spec.overrides) if (o.start <= at && at < o.end && (!best || o.id > best.id)) best = o;
  if (best) return best.userId;
  for (const r of [...spec.rotations].sort((a, b) => b.layer - a.layer || b.id - a.id)) {
    // Ended from its end date's handoff on.
    if (r.endDate !== undefined && i >= handoffMinute(spec.timeZone, wallOf(r.endDate, r.handoffTime)))
      continue;
    // Boundary k has passed from its handoff minute on.
    const list = targets(spec.timeZone, r);
    let k = -1;
    if (r.shiftUnit === 'hours') {
      // Real hours from the first handoff.
      if (i >= list[0]!) k = Math.floor((i - list[0]!) / (60 * r.shiftLength));
    } else {
      while (k + 1 < list.length && list[k + 1]! <= i) k++;
    }
    if (k < 0) continue;
    const wall = walls[i]!;
    // 1970-01-01 was a Thursday (ISO weekday 4).
    const weekday = ((Math.floor(wall / 1440) + 3) % 7) + 1;
    const minuteOfDay = ((wall % 1440) + 1440) % 1440;
    const restriction = r.restriction;
    if (restriction?.weekdays && !restriction.weekdays.includes(weekday)) continue;
    if (restriction?.from !== undefined && restriction.to !== undefined) {
      const from = wallOf('1970-01-01', restriction.from);
      const to = wallOf('1970-01-01', restriction.to);
      const inside =
        from < to ? minuteOfDay >= from && minuteOfDay < to : minuteOfDay >= from || minuteOfDay < to;
      if (!inside) continue;
    }
    const user = r.participants[k % r.participants.length] ?? null;
    if (user !== null) return user;
  }
  return null;
}

const ZONES = ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata'];
const TRANSITION_DAYS: Record<string, string[]> = {
  'Europe/Berlin': ['2026-03-29', '2026-10-25'],
  'America/New_York': ['2026-03-08', '2026-11-01'],
  'Australia/Lord_Howe': ['2026-04-05', '2026-10-04'],
  'Asia/Kolkata': ['2026-06-01'],
};

function randomSpec(random: () => number, zone: string, windowStart: number): ScheduleSpec {
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const time = () =>
    `${String(Math.floor(random() * 24)).padStart(2, '0')}:${pick(['00', '15', '30', '45', '07'])}`;
  const windowDate = new Date(windowStart).toISOString().slice(0, 10);
  const rotations: RotationSpec[] = [];
  const count = 1 + Math.floor(random() * 3);
  for (let r = 0; r < count; r++) {
    const unit = pick<ShiftUnit>(['hours', 'days', 'weeks']);
    const restricted = random() < 0.4;
    const startDate = addWallDays(windowDate, -Math.floor(random() * 20));
    // Some rotations end, most of those inside the window (on a change day too).
    const endDate = random() < 0.35 ? addWallDays(windowDate, Math.floor(random() * 6) - 1) : undefined;
    const from = time();
    let to = time();
    if (to === from) to = from === '00:00' ? '12:00' : '00:00';
    rotations.push({
      id: r + 1,
      name: `r${r + 1}`,
      layer: Math.floor(random() * 3),
      participants: Array.from({ length: 1 + Math.floor(random() * 3) }, () =>
        random() < 0.1 ? null : 1 + Math.floor(random() * 5),
      ),
      shiftUnit: unit,
      shiftLength:
        unit === 'hours' ? pick([1, 5, 8, 12, 24, 36]) : unit === 'days' ? pick([1, 1, 2, 3]) : pick([1, 2]),
      startDate,
      handoffTime: pick(['02:30', '02:00', '01:30', '01:45', '02:15', '09:00', '00:00', time()]),
      ...(endDate !== undefined && endDate > startDate ? { endDate } : {}),
      ...(restricted
        ? {
            restriction: {
              ...(random() < 0.6 ? { weekdays: [1, 2, 3, 4, 5, 6, 7].filter(() => random() < 0.6) } : {}),
              ...(random() < 0.7 ? { from, to } : {}),
            },
          }
        : {}),
    });
  }
  const overrides: OverrideSpec[] = [];
  for (let o = 0; o < Math.floor(random() * 4); o++) {
    const start = windowStart + Math.floor(random() * 4 * 24 * 60) * MINUTE - 6 * HOUR;
    overrides.push({
      id: o + 1,
      userId: 6 + o,
      start,
      end: start + (1 + Math.floor(random() * 40 * 60)) * MINUTE,
    });
  }
  return { timeZone: zone, rotations, overrides };
}

test('property: the timeline and onCallAt equal a minute-by-minute reference (seeded, 60 cases)', () => {
  const seed = Number(process.env.SCHEDULE_PROPERTY_SEED ?? 20261203);
  const random = prng(seed);
  for (let c = 0; c < 60; c++) {
    const zone = ZONES[c % ZONES.length]!;
    const day = TRANSITION_DAYS[zone]![Math.floor(random() * TRANSITION_DAYS[zone]!.length)]!;
    const windowStart = ms(`${day}T00:00:00Z`) - Math.floor(random() * 48) * HOUR - 24 * HOUR;
    const windowEnd = windowStart + 4 * 24 * HOUR;
    const spec = randomSpec(random, zone, windowStart);
    const label = `seed ${seed}, case ${c}, ${zone}, ${JSON.stringify(spec)}`;

    const segments = timeline(spec, windowStart, windowEnd);
    assert.equal(segments[0]!.start, windowStart, label);
    assert.equal(segments.at(-1)!.end, windowEnd, label);
    let s = 0;
    for (let i = (windowStart - WALK_START) / MINUTE; i < (windowEnd - WALK_START) / MINUTE; i++) {
      const at = WALK_START + i * MINUTE;
      while (segments[s]!.end <= at) s++;
      const expected = referenceAt(spec, i);
      if (segments[s]!.userId !== expected) {
        assert.fail(
          `${label}: at ${iso(at)} the timeline has ${segments[s]!.userId}, the reference ${expected}`,
        );
      }
    }
    // onCallAt at random instants, not only on whole minutes.
    for (let n = 0; n < 20; n++) {
      const at = windowStart + Math.floor(random() * (windowEnd - windowStart));
      const i = Math.floor((at - WALK_START) / MINUTE);
      assert.equal(onCallAt(spec, at).userId, referenceAt(spec, i), `${label}: onCallAt(${iso(at)})`);
    }
    // Person intervals tile the window without two neighbours of one person.
    const intervals = personIntervals(segments);
    for (let i = 1; i < intervals.length; i++) {
      assert.equal(intervals[i]!.start, intervals[i - 1]!.end, label);
      assert.notEqual(intervals[i]!.userId, intervals[i - 1]!.userId, label);
    }
  }
});
