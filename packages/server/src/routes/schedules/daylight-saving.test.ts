/**
 * Schedules as their users live them around daylight-saving changes, through
 * the HTTP API on both databases: who is on call, the timeline, overrides
 * given in wall time, and the calendar feed as a real iCalendar parser
 * (ical.js, Thunderbird's) reads it with the feed's own VTIMEZONE. The
 * server's TERDUT_TIMEZONE (Pacific/Kiritimati, +14) is none of the
 * schedules' zones, so nothing may lean on it.
 *
 * The rule for wall times a change skips or repeats (README "Daylight
 * saving"): a skipped handoff time moves forward by the gap, a repeated one
 * is the first.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import ICAL from 'ical.js';
import {
  forEachDatabase,
  ManualClock,
  startTestApp,
  testConfig,
  type TestApp,
  type TestUser,
} from '@terdut/test-support';

const DAY = 86_400_000;

interface Case {
  /** What a user would call it. */
  title: string;
  zone: string;
  rotation: {
    shift_length: number;
    shift_unit: 'hours' | 'days' | 'weeks';
    start_date: string;
    handoff_time: string;
  };
  /** The clock when the feed is read: it covers 14 days before and 92 after. */
  now: string;
  /** Instants and who is on call there (index into the participants, or null for nobody). */
  onCall: [string, number | null][];
  /** An override in wall time, [starts_at, ends_at] with offsets, for the third person. */
  override?: [string, string];
}

const CASES: Case[] = [
  {
    title: 'Europe/Berlin, daily at 02:30: the skipped 02:30 of 29 March is 03:30 CEST',
    zone: 'Europe/Berlin',
    rotation: { shift_length: 1, shift_unit: 'days', start_date: '2026-03-27', handoff_time: '02:30' },
    now: '2026-03-28T12:00:00Z',
    onCall: [
      ['2026-03-28T01:30:00Z', 1], // 02:30 CET on the 28th
      ['2026-03-29T01:29:59Z', 1],
      ['2026-03-29T01:30:00Z', 0], // 03:30 CEST
      ['2026-03-30T00:30:00Z', 1], // 02:30 CEST
    ],
    // 01:30 CET to 04:00 CEST: 1.5 hours on the clock, half an hour of real time.
    override: ['2026-03-29T01:30:00+01:00', '2026-03-29T04:00:00+02:00'],
  },
  {
    title: 'America/New_York, daily at 01:30: the repeated 01:30 of 1 November is the first (EDT)',
    zone: 'America/New_York',
    rotation: { shift_length: 1, shift_unit: 'days', start_date: '2026-10-30', handoff_time: '01:30' },
    now: '2026-10-31T12:00:00Z',
    onCall: [
      ['2026-11-01T05:29:59Z', 1],
      ['2026-11-01T05:30:00Z', 0], // 01:30 EDT
      ['2026-11-01T06:30:00Z', 0], // 01:30 EST: no second handoff
      ['2026-11-02T06:30:00Z', 1], // 01:30 EST, 25 hours later
    ],
    override: ['2026-11-01T01:15:00-04:00', '2026-11-01T01:15:00-05:00'],
  },
  {
    title: 'America/New_York, daily at 02:30: the skipped 02:30 of 8 March is 03:30 EDT',
    zone: 'America/New_York',
    rotation: { shift_length: 1, shift_unit: 'days', start_date: '2026-03-07', handoff_time: '02:30' },
    now: '2026-03-07T12:00:00Z',
    onCall: [
      ['2026-03-08T07:29:59Z', 0],
      ['2026-03-08T07:30:00Z', 1], // 03:30 EDT
    ],
  },
  {
    title: 'America/Havana, daily at midnight: the midnight 8 March skips is 01:00 CDT',
    zone: 'America/Havana',
    rotation: { shift_length: 1, shift_unit: 'days', start_date: '2026-03-06', handoff_time: '00:00' },
    now: '2026-03-07T12:00:00Z',
    onCall: [
      ['2026-03-07T05:00:00Z', 1], // 00:00 CST
      ['2026-03-08T04:59:59Z', 1],
      ['2026-03-08T05:00:00Z', 0], // 01:00 CDT, the end of the gap at midnight
      ['2026-03-09T04:00:00Z', 1], // 00:00 CDT
    ],
  },
  {
    title: 'America/Santiago, daily at 23:30: the repeated 23:30 of 4 April is the first (-03)',
    zone: 'America/Santiago',
    rotation: { shift_length: 1, shift_unit: 'days', start_date: '2026-04-03', handoff_time: '23:30' },
    now: '2026-04-04T12:00:00Z',
    onCall: [
      ['2026-04-05T02:29:59Z', 0],
      ['2026-04-05T02:30:00Z', 1], // 23:30 -03
      ['2026-04-05T03:30:00Z', 1], // 23:30 -04: no second handoff
      ['2026-04-06T03:30:00Z', 0], // 23:30 -04 on the 5th: 25 hours
    ],
  },
  {
    title: 'America/Santiago, weekly on Sunday at midnight across both changes of 2026 (both at midnight)',
    zone: 'America/Santiago',
    rotation: { shift_length: 1, shift_unit: 'weeks', start_date: '2026-03-29', handoff_time: '00:00' },
    now: '2026-06-15T12:00:00Z',
    onCall: [
      // At 24:00 -03 on 4 April the clock goes back to 23:00: midnight comes once, at 00:00 -04.
      ['2026-04-05T03:59:59Z', 0],
      ['2026-04-05T04:00:00Z', 1],
      ['2026-09-06T03:59:59Z', 0], // 23:59:59 -04 on the 5th
      ['2026-09-06T04:00:00Z', 1], // 01:00 -03 on 6 September: midnight is skipped
    ],
  },
  {
    title: 'Asia/Beirut, daily at midnight: skipped on 29 March, and 25 October has its midnight once',
    zone: 'Asia/Beirut',
    rotation: { shift_length: 1, shift_unit: 'days', start_date: '2026-03-27', handoff_time: '00:00' },
    now: '2026-04-01T12:00:00Z',
    onCall: [
      ['2026-03-28T21:59:59Z', 1],
      ['2026-03-28T22:00:00Z', 0], // 01:00 EEST on 29 March
      ['2026-03-29T21:00:00Z', 1], // 00:00 EEST on 30 March
    ],
  },
  {
    title: 'Australia/Lord_Howe, daily at 02:15: the skipped 02:15 of 4 October is 02:45 (+11)',
    zone: 'Australia/Lord_Howe',
    rotation: { shift_length: 1, shift_unit: 'days', start_date: '2026-10-02', handoff_time: '02:15' },
    now: '2026-10-03T00:00:00Z',
    onCall: [
      ['2026-10-03T15:44:59Z', 1],
      ['2026-10-03T15:45:00Z', 0], // 02:45 +11
      ['2026-10-04T15:15:00Z', 1], // 02:15 +11
    ],
    override: ['2026-10-04T01:30:00+10:30', '2026-10-04T03:00:00+11:00'],
  },
  {
    title: 'Pacific/Kiritimati (+14), daily at 09:00: the local date is a day ahead of UTC',
    zone: 'Pacific/Kiritimati',
    rotation: { shift_length: 1, shift_unit: 'days', start_date: '2026-12-07', handoff_time: '09:00' },
    now: '2026-12-07T12:00:00Z',
    onCall: [
      ['2026-12-06T18:59:59Z', null],
      ['2026-12-06T19:00:00Z', 0], // 09:00 on 7 December is 19:00 UTC on the 6th
      ['2026-12-07T19:00:00Z', 1],
    ],
  },
  {
    title: 'Pacific/Pago_Pago (-11), weekly on Monday at 09:00',
    zone: 'Pacific/Pago_Pago',
    rotation: { shift_length: 1, shift_unit: 'weeks', start_date: '2026-12-07', handoff_time: '09:00' },
    now: '2026-12-10T12:00:00Z',
    onCall: [
      ['2026-12-07T19:59:59Z', null],
      ['2026-12-07T20:00:00Z', 0],
      ['2026-12-14T20:00:00Z', 1],
    ],
  },
  {
    title: 'Europe/Berlin, weekly from early March read after the autumn change: still Monday 09:00',
    zone: 'Europe/Berlin',
    rotation: { shift_length: 1, shift_unit: 'weeks', start_date: '2026-03-02', handoff_time: '09:00' },
    now: '2026-10-20T12:00:00Z',
    onCall: [
      ['2026-03-02T08:00:00Z', 0], // 09:00 CET
      ['2026-03-30T07:00:00Z', 0], // 09:00 CEST, four weeks on
      ['2026-10-26T07:59:59Z', 1],
      ['2026-10-26T08:00:00Z', 0], // 09:00 CET, 34 weeks on
    ],
  },
  {
    title: 'Europe/Berlin, 12-hour shifts count real hours across the change',
    zone: 'Europe/Berlin',
    rotation: { shift_length: 12, shift_unit: 'hours', start_date: '2026-10-24', handoff_time: '20:00' },
    now: '2026-10-25T12:00:00Z',
    onCall: [
      ['2026-10-24T18:00:00Z', 0], // 20:00 CEST
      ['2026-10-25T06:00:00Z', 1], // 07:00 CET
      ['2026-10-25T18:00:00Z', 0], // 19:00 CET
    ],
  },
];

/** The feed's events as ical.js computes them, with the feed's VTIMEZONEs registered. */
function parseFeed(text: string) {
  const calendar = new ICAL.Component(ICAL.parse(text));
  for (const zone of calendar.getAllSubcomponents('vtimezone')) ICAL.TimezoneService.register(zone);
  return calendar.getAllSubcomponents('vevent').map((component) => {
    const event = new ICAL.Event(component);
    return {
      uid: event.uid,
      who: event.summary.split(' ')[0]!,
      start: event.startDate.toJSDate().toISOString(),
      end: event.endDate.toJSDate().toISOString(),
      stamp: String(component.getFirstPropertyValue('dtstamp')),
    };
  });
}

/** RFC 5545's shape of the text itself: CRLF only, folded at 75 octets, the required properties. */
function assertWellFormed(text: string, label: string): void {
  assert.ok(text.endsWith('\r\n'), label);
  assert.doesNotMatch(text.replace(/\r\n/g, ''), /[\r\n]/, `${label}: a bare CR or LF`);
  const lines = text.split('\r\n').slice(0, -1);
  for (const line of lines) assert.ok(Buffer.byteLength(line) <= 75, `${label}: ${line}`);
  const unfolded = text.replace(/\r\n[ \t]/g, '');
  assert.match(unfolded, /^BEGIN:VCALENDAR\r\n/);
  assert.match(unfolded, /\r\nVERSION:2\.0\r\n/);
  assert.match(unfolded, /\r\nPRODID:[^\r\n]+\r\n/);
  const zones = new Set([...unfolded.matchAll(/\r\nTZID:([^\r\n]+)\r\n/g)].map((m) => m[1]));
  const events = unfolded.split('BEGIN:VEVENT\r\n').slice(1);
  const uids = new Set<string>();
  for (const event of events) {
    const body = event.slice(0, event.indexOf('END:VEVENT\r\n'));
    const uid = /^UID:([^\r\n]+)$/m.exec(body)?.[1];
    assert.ok(uid !== undefined && !uids.has(uid), `${label}: every event has its own UID`);
    uids.add(uid);
    assert.match(body, /^DTSTAMP:\d{8}T\d{6}Z$/m, label);
    for (const name of ['DTSTART', 'DTEND']) {
      const property = new RegExp(`^${name}(?:;TZID=([^:\\r\\n]+))?:(\\d{8}T\\d{6}Z?)$`, 'm').exec(body);
      assert.ok(property, `${label}: ${name} in ${body}`);
      // A zoned time names a VTIMEZONE of the feed; a time without one is UTC, never floating.
      if (property[1] !== undefined) assert.ok(zones.has(property[1]), `${label}: ${property[1]}`);
      else assert.ok(property[2]!.endsWith('Z'), `${label}: ${name} is floating`);
    }
  }
}

forEachDatabase('schedules across daylight-saving changes', (database) => {
  let server: TestApp;
  let admin: TestUser;
  let people: TestUser[];
  const clock = new ManualClock('2026-03-01T00:00:00Z');

  before(async () => {
    server = await startTestApp(database(), {
      clock,
      config: testConfig({ TERDUT_TIMEZONE: 'Pacific/Kiritimati' }),
    });
    admin = await server.createUser('dst-admin', 'admin');
    people = [await server.createUser('ann'), await server.createUser('ben'), await server.createUser('cat')];
  });
  after(() => server.close());

  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
    server.request({ method, url, as: admin, ...(payload ? { payload } : {}) });

  for (const [index, scenario] of CASES.entries()) {
    test(scenario.title, async () => {
      clock.set(scenario.now);
      const schedule = await call('POST', '/api/schedules', {
        name: `DST ${index}`,
        time_zone: scenario.zone,
      });
      assert.equal(schedule.status, 201, JSON.stringify(schedule.body));
      const id = schedule.body.id as number;
      const rotation = await call('POST', `/api/schedules/${id}/rotations`, {
        name: 'Rota',
        participant_ids: [people[0]!.id, people[1]!.id],
        ...scenario.rotation,
      });
      assert.equal(rotation.status, 201, JSON.stringify(rotation.body));

      for (const [at, who] of scenario.onCall) {
        const answer = await call('GET', `/api/schedules/${id}/on-call?at=${at}`);
        assert.equal(answer.status, 200);
        assert.equal(answer.body.username, who === null ? undefined : people[who]!.username, at);
      }

      if (scenario.override) {
        const [starts_at, ends_at] = scenario.override;
        const override = await call('POST', `/api/schedules/${id}/overrides`, {
          user_id: people[2]!.id,
          starts_at,
          ends_at,
        });
        assert.equal(override.status, 201, JSON.stringify(override.body));
        assert.equal(override.body.starts_at, new Date(starts_at).toISOString());
        assert.equal(override.body.ends_at, new Date(ends_at).toISOString());
        const during = new Date((Date.parse(starts_at) + Date.parse(ends_at)) / 2).toISOString();
        const answer = await call('GET', `/api/schedules/${id}/on-call?at=${during}`);
        assert.equal(answer.body.username, 'cat');
        assert.equal(answer.body.since, new Date(starts_at).toISOString());
        assert.equal(answer.body.until, new Date(ends_at).toISOString());
      }

      // The feed against the timeline: every shift it shows, with the instants the API gives.
      const now = Date.parse(scenario.now);
      const [feedFrom, feedTo] = [now - 14 * DAY, now + 92 * DAY];
      const timeline = await call(
        'GET',
        `/api/schedules/${id}/timeline?from=${new Date(feedFrom - 62 * DAY).toISOString()}&to=${new Date(feedTo + 62 * DAY).toISOString()}`,
      );
      assert.equal(timeline.status, 200, JSON.stringify(timeline.body));
      const expected = timeline.body
        .filter((s: any) => s.username !== undefined)
        .filter((s: any) => Date.parse(s.end) > feedFrom && Date.parse(s.start) < feedTo)
        .map((s: any) => ({ who: s.username, start: s.start, end: s.end }));
      assert.ok(expected.length > 0);
      const url = new URL((await call('POST', `/api/schedules/${id}/feed`)).body.url).pathname;
      const text = (await server.request({ method: 'GET', url })).body as string;
      assertWellFormed(text, scenario.title);
      const events = parseFeed(text);
      assert.deepEqual(
        events.map(({ who, start, end }) => ({ who, start, end })),
        expected,
      );
      assert.ok(
        events.every((event) => event.stamp === ICAL.Time.fromJSDate(new Date(now), true).toString()),
      );

      // Read again an hour later: the same events keep their UIDs.
      clock.set(new Date(now + 3_600_000));
      const again = parseFeed((await server.request({ method: 'GET', url })).body as string);
      const uids = new Map(again.map((event) => [event.start, event.uid]));
      for (const event of events) assert.equal(uids.get(event.start), event.uid, event.start);
    });
  }

  test('in the last hour of a weekly shift that the autumn change made 169 hours long, on-call still says since when', async () => {
    clock.set('2026-10-26T07:30:00Z'); // 08:30 CET, Monday
    const schedule = await call('POST', '/api/schedules', {
      name: 'Autumn week',
      time_zone: 'Europe/Berlin',
    });
    const id = schedule.body.id as number;
    await call('POST', `/api/schedules/${id}/rotations`, {
      name: 'Weekly',
      participant_ids: [people[0]!.id, people[1]!.id],
      shift_length: 1,
      shift_unit: 'weeks',
      start_date: '2026-10-19',
      handoff_time: '09:00',
    });
    const now = await call('GET', `/api/schedules/${id}/now`);
    assert.equal(now.status, 200);
    assert.equal(now.body.now.username, 'ann');
    assert.equal(now.body.now.since, '2026-10-19T07:00:00.000Z'); // 09:00 CEST, 168.5 hours ago
    assert.equal(now.body.now.until, '2026-10-26T08:00:00.000Z'); // 09:00 CET
    const at = await call('GET', `/api/schedules/${id}/on-call?at=2026-10-26T07:59:59Z`);
    assert.equal(at.body.since, '2026-10-19T07:00:00.000Z');
  });

  test('around the spring change, the last hour of a weekly shift still says since when', async () => {
    clock.set('2026-03-01T00:00:00Z');
    const weekly = async (name: string, start_date: string, handoff_time: string) => {
      const schedule = await call('POST', '/api/schedules', { name, time_zone: 'Europe/Berlin' });
      const id = schedule.body.id as number;
      const rotation = await call('POST', `/api/schedules/${id}/rotations`, {
        name: 'Weekly',
        participant_ids: [people[0]!.id, people[1]!.id],
        shift_length: 1,
        shift_unit: 'weeks',
        start_date,
        handoff_time,
      });
      assert.equal(rotation.status, 201, JSON.stringify(rotation.body));
      return id;
    };
    // Sunday 02:30 CET to the skipped 02:30 of 29 March, which is 03:30 CEST:
    // 168 hours, but a week and an hour on the wall clock.
    const skipped = await weekly('Spring week, skipped', '2026-03-22', '02:30');
    for (const at of ['2026-03-29T01:00:00Z', '2026-03-29T01:29:59Z']) {
      const answer = await call('GET', `/api/schedules/${skipped}/on-call?at=${at}`);
      assert.equal(answer.body.username, 'ann', at);
      assert.equal(answer.body.since, '2026-03-22T01:30:00.000Z', at); // 02:30 CET
      assert.equal(answer.body.until, '2026-03-29T01:30:00.000Z', at); // 03:30 CEST
    }
    // Sunday 03:00 CEST, just after the gap, to 03:00 CEST a week later; a week
    // before 02:30 of 5 April is the skipped 02:30 of 29 March.
    const after = await weekly('Spring week, after the gap', '2026-03-29', '03:00');
    for (const at of ['2026-04-05T00:00:00Z', '2026-04-05T00:59:59Z']) {
      const answer = await call('GET', `/api/schedules/${after}/on-call?at=${at}`);
      assert.equal(answer.body.username, 'ann', at);
      assert.equal(answer.body.since, '2026-03-29T01:00:00.000Z', at); // 03:00 CEST
      assert.equal(answer.body.until, '2026-04-05T01:00:00.000Z', at);
    }
  });

  test('a feed with a VTIMEZONE answers 304 to a calendar polling an hour later while its shifts are the same', async () => {
    clock.set('2026-03-20T12:00:00Z');
    const schedule = await call('POST', '/api/schedules', {
      name: 'Polled in Berlin',
      time_zone: 'Europe/Berlin',
    });
    const id = schedule.body.id as number;
    await call('POST', `/api/schedules/${id}/rotations`, {
      name: 'Weekly',
      participant_ids: [people[0]!.id, people[1]!.id],
      shift_length: 1,
      shift_unit: 'weeks',
      start_date: '2026-03-02',
      handoff_time: '09:00',
    });
    const url = new URL((await call('POST', `/api/schedules/${id}/feed`)).body.url).pathname;
    const first = await server.request({ method: 'GET', url });
    assert.match(first.body, /BEGIN:VTIMEZONE/);
    const etag = String(first.headers.etag);
    for (const later of [1_000, 60_000, 3_600_000]) {
      clock.set(new Date(Date.parse('2026-03-20T12:00:00Z') + later));
      const polled = await server.request({ method: 'GET', url, headers: { 'if-none-match': etag } });
      assert.equal(polled.status, 304, `${later} ms later`);
    }
  });

  test("a person's feed with shifts in schedules of several zones gives each its own VTIMEZONE and instants", async () => {
    clock.set('2026-10-20T12:00:00Z');
    const ann = people[0]!;
    const url = new URL(
      (await server.request({ method: 'POST', url: `/api/users/${ann.id}/calendar-feed`, as: ann })).body.url,
    ).pathname;
    const text = (await server.request({ method: 'GET', url })).body as string;
    assertWellFormed(text, 'person feed');
    const zones = [...text.matchAll(/\r\nTZID:([^\r\n]+)\r\n/g)].map((m) => m[1]);
    assert.equal(new Set(zones).size, zones.length, 'one VTIMEZONE per zone');
    const events = parseFeed(text);
    assert.ok(events.length > 0);
    const schedules = (await call('GET', '/api/schedules')).body as { id: number }[];
    const expected: { start: string; end: string }[] = [];
    const now = Date.parse('2026-10-20T12:00:00Z');
    const [feedFrom, feedTo] = [now - 14 * DAY, now + 92 * DAY];
    for (const { id } of schedules) {
      const timeline = await call(
        'GET',
        `/api/schedules/${id}/timeline?from=${new Date(feedFrom - 62 * DAY).toISOString()}&to=${new Date(feedTo + 62 * DAY).toISOString()}`,
      );
      for (const s of timeline.body) {
        if (s.user_id === ann.id && Date.parse(s.end) > feedFrom && Date.parse(s.start) < feedTo) {
          expected.push({ start: s.start, end: s.end });
        }
      }
    }
    const key = (e: { start: string; end: string }) => `${e.start} ${e.end}`;
    assert.deepEqual(events.map(key).sort(), expected.map(key).sort());
  });

  test('bad input is a 400 naming the field and why, and nothing is stored', async () => {
    clock.set('2026-03-01T00:00:00Z');
    const before = (await call('GET', '/api/schedules')).body;
    for (const [body, pattern] of [
      [{ name: 'Zone', time_zone: 'Europe/Atlantis' }, /"time_zone".*Europe\/Atlantis/],
      [{ name: 'Zone', time_zone: '+01:00' }, /"time_zone"/],
      [{ name: 'Zone', time_zone: '' }, /"time_zone"/],
    ] as const) {
      const response = await call('POST', '/api/schedules', body);
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.match(response.body.error, pattern);
    }
    const target = before[0].id as number;
    const patched = await call('GET', `/api/schedules/${target}`);
    assert.deepEqual(patched.body.rotations, []);
    const renamed = await server.request({
      method: 'PATCH',
      url: `/api/schedules/${target}`,
      as: admin,
      payload: { name: 'Renamed', time_zone: 'Nowhere/City' },
    });
    assert.equal(renamed.status, 400);
    assert.match(renamed.body.error, /"time_zone"/);
    assert.deepEqual(
      (await call('GET', `/api/schedules/${target}`)).body,
      patched.body,
      'not renamed either',
    );

    const base = {
      name: 'Bad',
      participant_ids: [people[0]!.id],
      shift_length: 1,
      shift_unit: 'days',
      start_date: '2026-03-23',
      handoff_time: '09:00',
    };
    for (const [body, pattern] of [
      [
        { ...base, handoff_time: '24:00' },
        /"handoff_time" .*00:00 to 23:59.*"24:00"; for midnight use 00:00/,
      ],
      [{ ...base, handoff_time: '02:60' }, /"handoff_time" .*00:00 to 23:59.*"02:60"$/],
      [{ ...base, handoff_time: '9:00' }, /handoff_time/],
      [{ ...base, shift_length: 0 }, /shift_length/],
      [{ ...base, shift_length: -1 }, /shift_length/],
      [{ ...base, shift_length: 1.5 }, /shift_length/],
      [
        { ...base, restriction: { from: '22:00', to: '24:00' } },
        /"restriction\.to" .*for midnight use 00:00/,
      ],
      [{ ...base, restriction: { weekdays: [0] } }, /weekdays/],
    ] as const) {
      const response = await call('POST', `/api/schedules/${target}/rotations`, body);
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.match(response.body.error, pattern, JSON.stringify(body));
    }
    for (const [body, pattern] of [
      [{ starts_at: '2026-03-29T03:00:00+02:00', ends_at: '2026-03-29T01:30:00+01:00' }, /"ends_at".*after/],
      [{ starts_at: '2026-03-29T03:00:00+02:00', ends_at: '2026-03-29T03:00:00+02:00' }, /"ends_at".*after/],
      [{ starts_at: '2026-03-29T02:30:00', ends_at: '2026-03-29T04:00:00+02:00' }, /"starts_at"/],
      [{ starts_at: '2026-03-29T24:00:00Z', ends_at: '2026-03-30T04:00:00Z' }, /"starts_at"/],
    ] as const) {
      const response = await call('POST', `/api/schedules/${target}/overrides`, {
        user_id: people[0]!.id,
        ...body,
      });
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.match(response.body.error, pattern, JSON.stringify(body));
    }
    assert.deepEqual((await call('GET', '/api/schedules')).body, before);
    assert.deepEqual(
      (await call('GET', `/api/schedules/${target}`)).body,
      patched.body,
      'no rotation stored',
    );
    const overrides = await call(
      'GET',
      `/api/schedules/${target}/overrides?from=2026-03-20T00:00:00Z&to=2026-04-10T00:00:00Z`,
    );
    assert.deepEqual(overrides.body, []);
  });
});
