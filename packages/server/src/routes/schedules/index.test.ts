import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import ICAL from 'ical.js';
import { scheduleOnCallLookup } from '../../services/schedules.ts';
import {
  forEachDatabase,
  ManualClock,
  startTestApp,
  testConfig,
  type TestApp,
  type TestUser,
} from '@terdut/test-support';

forEachDatabase('schedules, rotations, overrides and feeds', (database) => {
  let server: TestApp;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let berlin: number;
  // Thursday before the spring change in Berlin (Sunday 29 March 2026).
  const clock = new ManualClock('2026-03-26T12:00:00Z');

  before(async () => {
    server = await startTestApp(database(), {
      clock,
      config: testConfig({ TERDUT_TIMEZONE: 'Europe/Berlin' }),
    });
    admin = await server.createUser('sched-admin', 'admin');
    alice = await server.createUser('alice');
    bob = await server.createUser('bob');
    carol = await server.createUser('carol');
  });
  after(() => server.close());

  const call = (
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    payload?: object,
    as = admin,
  ) => server.request({ method, url, as, ...(payload ? { payload } : {}) });

  test('an admin creates a schedule with a zone; members may read but not create; bad zones are 400', async () => {
    const created = await call('POST', '/api/schedules', { name: 'Databases', time_zone: 'Europe/Berlin' });
    assert.equal(created.status, 201);
    assert.equal(created.body.time_zone, 'Europe/Berlin');
    assert.equal(created.body.is_default, false);
    berlin = created.body.id;

    assert.equal((await call('POST', '/api/schedules', { name: 'X', time_zone: 'UTC' }, alice)).status, 403);
    const badZone = await call('POST', '/api/schedules', { name: 'Mars', time_zone: 'Mars/Olympus' });
    assert.equal(badZone.status, 400);
    assert.match(badZone.body.error, /"time_zone".*Mars\/Olympus/);
    const taken = await call('POST', '/api/schedules', { name: 'databases', time_zone: 'UTC' });
    assert.equal(taken.status, 409);

    const listed = await call('GET', '/api/schedules', undefined, alice);
    assert.deepEqual(
      listed.body.map((s: any) => [s.name, s.is_default, s.time_zone]),
      [
        ['Default', true, 'Europe/Berlin'],
        ['Databases', false, 'Europe/Berlin'],
      ],
    );
    assert.equal(listed.body[0].time_zone_from_config, true);
  });

  test('a weekly rotation hands over Monday 09:00 Berlin time on both sides of the change', async () => {
    const rotation = await call('POST', `/api/schedules/${berlin}/rotations`, {
      name: 'Weekly',
      participant_ids: [alice.id, bob.id],
      shift_length: 1,
      shift_unit: 'weeks',
      start_date: '2026-03-23',
      handoff_time: '09:00',
    });
    assert.equal(rotation.status, 201);
    assert.deepEqual(
      rotation.body.participants.map((p: any) => p.username),
      ['alice', 'bob'],
    );
    const at = async (instant: string) =>
      (await call('GET', `/api/schedules/${berlin}/on-call?at=${instant}`, undefined, bob)).body;
    assert.equal((await at('2026-03-23T07:59:00Z')).user_id, undefined); // before the first handoff
    assert.equal((await at('2026-03-23T08:00:00Z')).username, 'alice'); // 09:00 CET
    const before = await at('2026-03-30T06:59:00Z');
    assert.equal(before.username, 'alice');
    assert.equal(before.until, '2026-03-30T07:00:00.000Z'); // 09:00 CEST
    assert.equal(before.source, 'rotation');
    assert.equal(before.rotation, 'Weekly');
    assert.equal((await at('2026-03-30T07:00:00Z')).username, 'bob');
    // An offset's "+" typed unencoded, as curl sends it, arrives as a space:
    // read as the instant meant, not refused and not another instant.
    assert.equal((await at('2026-03-30T08:59:00+02:00')).username, 'alice');
    assert.equal((await at('2026-03-30T09:00:00+02:00')).username, 'bob');
    const timeline = await call(
      'GET',
      `/api/schedules/${berlin}/timeline?from=2026-03-30T08:00:00+02:00&to=2026-03-30T10:00:00+02:00`,
      undefined,
      bob,
    );
    assert.equal(timeline.status, 200, JSON.stringify(timeline.body));
    assert.deepEqual(
      timeline.body.map((segment: any) => [segment.username, segment.start]),
      [
        ['alice', '2026-03-30T06:00:00.000Z'],
        ['bob', '2026-03-30T07:00:00.000Z'],
      ],
    );
  });

  test('an override covers its span and wins; now and next say who comes after', async () => {
    const override = await call('POST', `/api/schedules/${berlin}/overrides`, {
      user_id: carol.id,
      starts_at: '2026-03-26T10:00:00Z',
      ends_at: '2026-03-26T14:00:00Z',
    });
    assert.equal(override.status, 201);
    assert.equal(override.body.username, 'carol');
    const now = await call('GET', `/api/schedules/${berlin}/now`, undefined, alice);
    assert.equal(now.status, 200);
    assert.equal(now.body.now.username, 'carol');
    assert.equal(now.body.now.source, 'override');
    assert.equal(now.body.now.until, '2026-03-26T14:00:00.000Z');
    assert.equal(now.body.next.username, 'alice');
    assert.equal(now.body.next.until, '2026-03-30T07:00:00.000Z');
    // Without `at`, on-call answers for now by the app's clock (12:00 UTC, Carol), as /now does.
    const onCall = await call('GET', `/api/schedules/${berlin}/on-call`, undefined, alice);
    assert.equal(onCall.status, 200);
    assert.equal(onCall.body.at, clock.now().toISOString());
    assert.equal(onCall.body.username, 'carol');
    assert.equal(onCall.body.until, '2026-03-26T14:00:00.000Z');

    const timeline = await call(
      'GET',
      `/api/schedules/${berlin}/timeline?from=2026-03-26T00:00:00Z&to=2026-03-31T00:00:00Z`,
      undefined,
      alice,
    );
    assert.deepEqual(
      timeline.body.map((s: any) => [s.start, s.username]),
      [
        ['2026-03-26T00:00:00.000Z', 'alice'],
        ['2026-03-26T10:00:00.000Z', 'carol'],
        ['2026-03-26T14:00:00.000Z', 'alice'],
        ['2026-03-30T07:00:00.000Z', 'bob'],
      ],
    );
  });

  test('in the second week of a two-week shift, and a month into a monthly one, on-call says since when', async () => {
    const schedule = await call('POST', '/api/schedules', { name: 'Fortnights', time_zone: 'Europe/Berlin' });
    const id = schedule.body.id as number;
    const rotation = await call('POST', `/api/schedules/${id}/rotations`, {
      name: 'Two weeks',
      participant_ids: [alice.id, bob.id],
      shift_length: 2,
      shift_unit: 'weeks',
      start_date: '2026-03-16',
      handoff_time: '09:00',
    });
    assert.equal(rotation.status, 201, JSON.stringify(rotation.body));
    // Thursday 26 March: alice's fortnight began Monday 16 March, 10 days before.
    const now = await call('GET', `/api/schedules/${id}/now`, undefined, alice);
    assert.equal(now.body.now.username, 'alice');
    assert.equal(now.body.now.since, '2026-03-16T08:00:00.000Z'); // 09:00 CET
    assert.equal(now.body.now.until, '2026-03-30T07:00:00.000Z'); // 09:00 CEST
    const monthly = await call('POST', '/api/schedules', { name: 'Months', time_zone: 'Europe/Berlin' });
    await call('POST', `/api/schedules/${monthly.body.id}/rotations`, {
      name: 'Thirty days',
      participant_ids: [carol.id, bob.id],
      shift_length: 30,
      shift_unit: 'days',
      start_date: '2026-03-01',
      handoff_time: '09:00',
    });
    const at = await call('GET', `/api/schedules/${monthly.body.id}/on-call?at=2026-03-30T12:00:00Z`);
    assert.equal(at.body.username, 'carol');
    assert.equal(at.body.since, '2026-03-01T08:00:00.000Z');
    assert.equal(at.body.until, '2026-03-31T07:00:00.000Z'); // 09:00 CEST
    // The tests below count every schedule's handoffs and shifts.
    for (const gone of [id, monthly.body.id]) {
      assert.equal((await call('DELETE', `/api/schedules/${gone}`)).status, 204);
    }
  });

  test('overrides are listed by when they start, whatever order they were added in', async () => {
    const created = await call('POST', '/api/schedules', { name: 'Override order', time_zone: 'UTC' });
    const id = created.body.id;
    for (const [user, startsAt, endsAt] of [
      [alice, '2026-04-03T00:00:00Z', '2026-04-04T00:00:00Z'],
      [bob, '2026-04-01T00:00:00Z', '2026-04-02T00:00:00Z'],
      [carol, '2026-04-02T00:00:00Z', '2026-04-05T00:00:00Z'],
    ] as const) {
      const added = await call('POST', `/api/schedules/${id}/overrides`, {
        user_id: user.id,
        starts_at: startsAt,
        ends_at: endsAt,
      });
      assert.equal(added.status, 201, JSON.stringify(added.body));
    }
    const listed = await call(
      'GET',
      `/api/schedules/${id}/overrides?from=2026-03-30T00:00:00Z&to=2026-04-10T00:00:00Z`,
      undefined,
      alice,
    );
    assert.equal(listed.status, 200);
    assert.deepEqual(
      listed.body.map((o: any) => [o.username, o.starts_at]),
      [
        ['bob', '2026-04-01T00:00:00.000Z'],
        ['carol', '2026-04-02T00:00:00.000Z'],
        ['alice', '2026-04-03T00:00:00.000Z'],
      ],
    );
    assert.equal((await call('DELETE', `/api/schedules/${id}`)).status, 204);
  });

  test('for paging: onCallAt and handoffsBetween name who takes over from whom', async () => {
    const schedules = server.app.services.schedules;
    const atOverride = await schedules.onCallAt(berlin, new Date('2026-03-26T12:00:00Z'));
    assert.equal(atOverride.username, 'carol');
    const onDefault = await schedules.onCallAt('default', new Date('2026-03-26T12:00:00Z'));
    assert.equal(onDefault.schedule.is_default, true);
    const changes = await schedules.handoffsBetween(
      berlin,
      new Date('2026-03-26T00:00:00Z'),
      new Date('2026-03-31T00:00:00Z'),
    );
    assert.deepEqual(
      changes.map((h) => [h.at.toISOString(), h.fromUsername, h.toUsername]),
      [
        ['2026-03-26T10:00:00.000Z', 'alice', 'carol'],
        ['2026-03-26T14:00:00.000Z', 'carol', 'alice'],
        ['2026-03-30T07:00:00.000Z', 'alice', 'bob'],
      ],
    );
    const lookup = scheduleOnCallLookup(schedules, berlin);
    assert.deepEqual(await lookup(database(), new Date('2026-03-26T12:00:00Z')), [carol.id]);
    assert.deepEqual(await lookup(database(), new Date('2026-03-30T07:00:00Z')), [bob.id]);
    assert.deepEqual(await lookup(database(), new Date('2026-03-01T00:00:00Z')), []);
    const everywhere = await schedules.allHandoffsBetween(
      new Date('2026-03-26T00:00:00Z'),
      new Date('2026-03-31T00:00:00Z'),
    );
    assert.deepEqual(
      everywhere.map(({ schedule, handoff }) => [schedule.name, handoff.toUsername]),
      [
        ['Databases', 'carol'],
        ['Databases', 'alice'],
        ['Databases', 'bob'],
      ],
    );
  });

  test('bad rotation and override input is a 400 naming the field, and nothing is stored', async () => {
    const base = {
      name: 'Bad',
      participant_ids: [alice.id],
      shift_length: 1,
      shift_unit: 'days',
      start_date: '2026-03-23',
      handoff_time: '09:00',
    };
    const cases: [object, RegExp][] = [
      [{ ...base, handoff_time: '25:00' }, /handoff_time/],
      [{ ...base, start_date: '2026-02-30' }, /start_date/],
      [{ ...base, shift_unit: 'months' }, /shift_unit/],
      [{ ...base, participant_ids: [] }, /participant_ids/],
      [{ ...base, restriction: { from: '18:00' } }, /restriction\.from.*restriction\.to/],
      [{ ...base, restriction: { weekdays: [8] } }, /weekdays/],
      [{ ...base, end_date: '2026-03-23' }, /"end_date" \(2026-03-23\) must be after "start_date"/],
      [{ ...base, end_date: '2026-02-30' }, /"end_date" is not a date/],
    ];
    for (const [body, pattern] of cases) {
      const response = await call('POST', `/api/schedules/${berlin}/rotations`, body);
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.match(response.body.error, pattern);
    }
    const unknown = await call('POST', `/api/schedules/${berlin}/rotations`, {
      ...base,
      participant_ids: [999_999],
    });
    assert.equal(unknown.status, 404);
    const backwards = await call('POST', `/api/schedules/${berlin}/overrides`, {
      user_id: alice.id,
      starts_at: '2026-03-27T10:00:00Z',
      ends_at: '2026-03-27T09:00:00Z',
    });
    assert.equal(backwards.status, 400);
    assert.match(backwards.body.error, /"ends_at"/);
    const badAt = await call('GET', `/api/schedules/${berlin}/on-call?at=yesterday`);
    assert.equal(badAt.status, 400);
    assert.match(badAt.body.error, /"at"/);
    const detail = await call('GET', `/api/schedules/${berlin}`, undefined, alice);
    assert.deepEqual(
      detail.body.rotations.map((r: any) => r.name),
      ['Weekly'],
    );
  });

  test('an impossible or zone-less instant is a 400 naming the field, never another day', async () => {
    const before = (await call('GET', `/api/schedules/${berlin}`, undefined, alice)).body;
    const rolledOver = await call('POST', `/api/schedules/${berlin}/overrides`, {
      user_id: alice.id,
      starts_at: '2026-02-30T01:00:00Z',
      ends_at: '2026-03-03T01:00:00Z',
    });
    assert.equal(rolledOver.status, 400);
    assert.match(rolledOver.body.error, /"starts_at"/);
    for (const [query, field] of [
      ['on-call?at=2026-04-31T12:00:00Z', 'at'],
      // Without a zone the server's own TZ would decide which instant it is.
      ['on-call?at=2026-03-29T02:30:00', 'at'],
      ['timeline?from=2026-02-30T00:00:00Z&to=2026-03-05T00:00:00Z', 'from'],
      ['overrides?from=2026-03-01T00:00:00Z&to=2026-03-03T24:00:00Z', 'to'],
    ]) {
      const response = await call('GET', `/api/schedules/${berlin}/${query}`, undefined, alice);
      assert.equal(response.status, 400, query);
      assert.match(response.body.error, new RegExp(`"${field}".*RFC 3339`), query);
    }
    const after = (await call('GET', `/api/schedules/${berlin}`, undefined, alice)).body;
    assert.deepEqual(after, before);
  });

  test('an instant before 1970 or from the year 9000 on is a 400 naming the field, not a 500', async () => {
    for (const [query, field] of [
      ['on-call?at=0000-01-01T00:00:00Z', 'at'],
      ['on-call?at=9999-12-31T00:00:00Z', 'at'],
      ['timeline?from=9999-12-01T00:00:00Z&to=9999-12-31T00:00:00Z', 'from'],
      ['overrides?from=0001-01-01T00:00:00Z', 'from'],
    ] as const) {
      const response = await call('GET', `/api/schedules/${berlin}/${query}`, undefined, alice);
      assert.equal(response.status, 400, query);
      assert.match(
        response.body.error,
        new RegExp(`"${field}" .*must be from 1970-01-01 up to 9000-01-01`),
        query,
      );
    }
    const ancient = await call('POST', `/api/schedules/${berlin}/overrides`, {
      user_id: alice.id,
      starts_at: '0000-06-01T00:00:00Z',
      ends_at: '0000-06-02T00:00:00Z',
    });
    assert.equal(ancient.status, 400);
    assert.match(ancient.body.error, /"starts_at"/);
  });

  test('a rotation with someone deleted can still be edited as it is; the deleted cannot join another', async () => {
    const schedule = (await call('POST', '/api/schedules', { name: 'Leavers', time_zone: 'Europe/Berlin' }))
      .body.id;
    // People of their own: the feed tests below count alice's shifts.
    const [erin, dave, frank] = [
      await server.createUser('erin'),
      await server.createUser('dave'),
      await server.createUser('frank'),
    ];
    const rotation = {
      name: 'Daily',
      participant_ids: [erin.id, dave.id, frank.id],
      shift_length: 1,
      shift_unit: 'days',
      start_date: '2026-03-23',
      handoff_time: '09:00',
    };
    const created = await call('POST', `/api/schedules/${schedule}/rotations`, rotation);
    assert.equal(created.status, 201);
    assert.equal((await call('DELETE', `/api/users/${dave.id}`)).status, 204);
    const timeline = `/api/schedules/${schedule}/timeline?from=2026-03-23T00:00:00Z&to=2026-03-30T00:00:00Z`;
    const turns = async () =>
      (await call('GET', timeline)).body.map((segment: any) => [segment.start, segment.end, segment.user_id]);
    const before = await turns();

    const renamed = await call('PUT', `/api/schedules/${schedule}/rotations/${created.body.id}`, {
      ...rotation,
      name: 'Daily, renamed',
    });
    assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
    assert.deepEqual(
      renamed.body.participants.map((p: any) => [p.user_id, p.deleted === true]),
      [
        [erin.id, false],
        [dave.id, true],
        [frank.id, false],
      ],
    );
    assert.deepEqual(await turns(), before, "nobody else's turn moved");

    const joining = await call('POST', `/api/schedules/${schedule}/rotations`, {
      ...rotation,
      name: 'Another',
      participant_ids: [dave.id],
    });
    assert.equal(joining.status, 404);
    assert.match(joining.body.error, /participant_ids/);
  });

  test('a rotation that ends hands over to the layer below at its handoff time on the end date, and can be given no end again', async () => {
    const created = await call('POST', '/api/schedules', { name: 'Ending', time_zone: 'Europe/Berlin' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id;
    const below = await call('POST', `/api/schedules/${id}/rotations`, {
      name: 'Base',
      participant_ids: [bob.id],
      shift_length: 1,
      shift_unit: 'weeks',
      start_date: '2026-03-02',
      handoff_time: '09:00',
      layer: 1,
    });
    assert.equal(below.status, 201, JSON.stringify(below.body));
    assert.equal('end_date' in below.body, false, 'no end: the field is left out');
    const body = {
      name: 'Project',
      participant_ids: [alice.id],
      shift_length: 1,
      shift_unit: 'days',
      start_date: '2026-03-20',
      handoff_time: '09:00',
      end_date: '2026-03-29',
      layer: 2,
    };
    const ending = await call('POST', `/api/schedules/${id}/rotations`, body);
    assert.equal(ending.status, 201, JSON.stringify(ending.body));
    assert.equal(ending.body.end_date, '2026-03-29');
    const at = async (instant: string) =>
      (await call('GET', `/api/schedules/${id}/on-call?at=${instant}`)).body.username;
    // 09:00 on 29 March is the first hour of summer time: 07:00Z.
    assert.equal(await at('2026-03-29T06:59:00Z'), 'alice');
    assert.equal(await at('2026-03-29T07:00:00Z'), 'bob');
    const { end_date: _end, ...withoutEnd } = body;
    const endless = await call('PUT', `/api/schedules/${id}/rotations/${ending.body.id}`, withoutEnd);
    assert.equal(endless.status, 200, JSON.stringify(endless.body));
    assert.equal('end_date' in endless.body, false);
    assert.equal(await at('2026-04-15T07:00:00Z'), 'alice', 'without an end it goes on');
    assert.equal((await call('DELETE', `/api/schedules/${id}`)).status, 204);
  });

  test('a rotation added on top of one on the highest layer (1000) goes on it and wins, and can be saved back as it is', async () => {
    const created = await call('POST', '/api/schedules', { name: 'Top', time_zone: 'Europe/Berlin' });
    const id = created.body.id;
    const base = {
      participant_ids: [alice.id],
      shift_length: 1,
      shift_unit: 'weeks',
      start_date: '2026-03-02',
      handoff_time: '09:00',
    };
    const highest = await call('POST', `/api/schedules/${id}/rotations`, {
      ...base,
      name: 'High',
      layer: 1000,
    });
    assert.equal(highest.status, 201, JSON.stringify(highest.body));
    const onTop = await call('POST', `/api/schedules/${id}/rotations`, {
      ...base,
      name: 'On top',
      participant_ids: [bob.id],
    });
    assert.equal(onTop.status, 201, JSON.stringify(onTop.body));
    assert.equal(onTop.body.layer, 1000);
    assert.equal(
      (await call('GET', `/api/schedules/${id}/on-call?at=2026-03-26T12:00:00Z`)).body.username,
      'bob',
    );
    const { id: _id, schedule_id: _s, participants, created_at: _c, ...fields } = onTop.body;
    const savedBack = await call('PUT', `/api/schedules/${id}/rotations/${onTop.body.id}`, {
      ...fields,
      participant_ids: participants.map((p: any) => p.user_id),
    });
    assert.equal(savedBack.status, 200, JSON.stringify(savedBack.body));
    assert.equal((await call('DELETE', `/api/schedules/${id}`)).status, 204);
  });

  test('a zone is stored by its canonical name, and a replaced rotation keeps its layer', async () => {
    const created = await call('POST', '/api/schedules', {
      name: 'Lowercase',
      time_zone: 'america/new_york',
    });
    assert.equal(created.body.time_zone, 'America/New_York');
    const body = {
      name: 'Nights',
      participant_ids: [alice.id],
      shift_length: 12,
      shift_unit: 'hours',
      start_date: '2026-03-01',
      handoff_time: '20:00',
      layer: 7,
    };
    const rotation = await call('POST', `/api/schedules/${created.body.id}/rotations`, body);
    const { layer: _layer, ...withoutLayer } = body;
    const replaced = await call('PUT', `/api/schedules/${created.body.id}/rotations/${rotation.body.id}`, {
      ...withoutLayer,
      participant_ids: [bob.id, alice.id],
      restriction: { weekdays: [6, 7], from: '20:00', to: '08:00' },
    });
    assert.equal(replaced.status, 200);
    assert.equal(replaced.body.layer, 7);
    assert.deepEqual(replaced.body.restriction, { weekdays: [6, 7], from: '20:00', to: '08:00' });
    assert.deepEqual(
      replaced.body.participants.map((p: any) => p.username),
      ['bob', 'alice'],
    );
    assert.equal((await call('DELETE', `/api/schedules/${created.body.id}`)).status, 204);
  });

  test('every change is in the audit log', async () => {
    const audit = await call('GET', '/api/audit?limit=20');
    const actions = audit.body.map((entry: any) => entry.action);
    for (const action of [
      'schedule.created',
      'schedule.rotation_created',
      'schedule.rotation_updated',
      'schedule.override_created',
      'schedule.deleted',
    ]) {
      assert.ok(actions.includes(action), `${action} in ${actions.join(', ')}`);
    }
  });

  test('the day API shows rotation days and refuses to delete them, naming the rotation', async () => {
    const rotation = await call('POST', '/api/schedules/1/rotations', {
      name: 'Weekly',
      participant_ids: [bob.id],
      shift_length: 1,
      shift_unit: 'weeks',
      start_date: '2026-04-06',
      handoff_time: '09:00',
    });
    assert.equal(rotation.status, 201);
    const stored = await call('POST', '/api/schedule', { user_id: alice.id, dates: ['2026-04-07'] });
    assert.equal(stored.status, 201);
    const days = await call('GET', '/api/schedule?from=2026-04-05&to=2026-04-07', undefined, alice);
    assert.deepEqual(
      days.body.map((e: any) => `${e.date} ${e.username} ${e.rotation ?? 'entry'}`),
      ['2026-04-06 bob Weekly', '2026-04-07 alice entry'],
    );
    const refused = await call('DELETE', `/api/schedule/${days.body[0].id}`);
    assert.equal(refused.status, 409);
    assert.match(refused.body.error, /covered by rotation Weekly; add an override instead/);
    assert.equal((await call('DELETE', `/api/schedule/${days.body[1].id}`)).status, 204);
    const after = await call('GET', '/api/schedule?from=2026-04-07&to=2026-04-07', undefined, alice);
    assert.deepEqual(
      after.body.map((e: any) => `${e.username} ${e.rotation}`),
      ['bob Weekly'],
    );
    await call('DELETE', `/api/schedules/1/rotations/${rotation.body.id}`);
  });

  test('the schedule feed parses as iCalendar and matches the timeline across the DST change', async () => {
    const feed = await call('POST', `/api/schedules/${berlin}/feed`);
    assert.equal(feed.status, 201);
    const path = new URL(feed.body.url).pathname;
    assert.match(path, /^\/api\/calendar\/\d+-[0-9a-f]{64}\.ics$/);

    const response = await server.request({ method: 'GET', url: path });
    assert.equal(response.status, 200);
    assert.match(String(response.headers['content-type']), /text\/calendar/);
    const calendar = new ICAL.Component(ICAL.parse(response.body));
    for (const zone of calendar.getAllSubcomponents('vtimezone')) {
      ICAL.TimezoneService.register(zone);
    }
    const events = calendar
      .getAllSubcomponents('vevent')
      .map((component) => new ICAL.Event(component))
      .map((event) => ({
        who: event.summary.split(' ')[0],
        start: event.startDate.toJSDate().toISOString(),
        end: event.endDate.toJSDate().toISOString(),
        startLocal: event.startDate.toString(),
      }));
    // The feed covers 14 days back and 92 ahead; shifts crossing either edge keep their real times.
    const timeline = await call(
      'GET',
      `/api/schedules/${berlin}/timeline?from=2026-01-01T00:00:00Z&to=2026-09-01T00:00:00Z`,
      undefined,
      alice,
    );
    const expected = timeline.body
      .filter((s: any) => s.username !== undefined)
      .filter((s: any) => s.end > '2026-03-12T12:00:00.000Z' && s.start < '2026-06-26T12:00:00.000Z')
      .map((s: any) => ({ who: s.username, start: s.start, end: s.end }));
    assert.equal(expected.at(-1).end, '2026-06-29T07:00:00.000Z'); // a Monday 09:00 CEST, past the window
    assert.deepEqual(
      events.map(({ who, start, end }) => ({ who, start, end })),
      expected,
    );
    // The first handoff after the change reads 09:00 local time in the feed.
    assert.equal(
      events.find((e) => e.start === '2026-03-30T07:00:00.000Z')?.startLocal,
      '2026-03-30T09:00:00',
    );
  });

  test('a feed shows shifts longer than its window with their real handoffs, the same on every read', async () => {
    const schedule = (await call('POST', '/api/schedules', { name: 'Quarterly', time_zone: 'Europe/Berlin' }))
      .body.id;
    const [quinn, ruth] = [await server.createUser('quinn'), await server.createUser('ruth')];
    const rotation = await call('POST', `/api/schedules/${schedule}/rotations`, {
      name: 'Half a year',
      participant_ids: [quinn.id, ruth.id],
      shift_length: 26,
      shift_unit: 'weeks',
      start_date: '2025-10-06',
      handoff_time: '09:00',
    });
    assert.equal(rotation.status, 201);
    const path = new URL((await call('POST', `/api/schedules/${schedule}/feed`)).body.url).pathname;
    const read = async () => {
      const calendar = new ICAL.Component(
        ICAL.parse((await server.request({ method: 'GET', url: path })).body),
      );
      for (const zone of calendar.getAllSubcomponents('vtimezone')) ICAL.TimezoneService.register(zone);
      return calendar.getAllSubcomponents('vevent').map((component) => {
        const event = new ICAL.Event(component);
        return {
          uid: event.uid,
          start: event.startDate.toJSDate().toISOString(),
          end: event.endDate.toJSDate().toISOString(),
        };
      });
    };
    const first = await read();
    // Quinn from 6 Oct 2025, Ruth from 6 Apr 2026, both 09:00 CEST: shifts far longer than the feed's
    // 14 days back and 92 ahead of 26 March, shown whole.
    assert.deepEqual(
      first.map(({ start, end }) => [start, end]),
      [
        ['2025-10-06T07:00:00.000Z', '2026-04-06T07:00:00.000Z'],
        ['2026-04-06T07:00:00.000Z', '2026-10-05T07:00:00.000Z'],
      ],
    );
    clock.advance(3000);
    assert.deepEqual(await read(), first, 'the same events, with the same UIDs, a few seconds later');
  });

  test('a feed URL with a wrong secret is 404, and rotating the secret retires the old URL', async () => {
    const first = new URL((await call('POST', `/api/schedules/${berlin}/feed`)).body.url).pathname;
    assert.equal((await server.request({ method: 'GET', url: first })).status, 200);
    const wrong = first.replace(/-[0-9a-f]{4}/, '-0000');
    const refused = await server.request({ method: 'GET', url: wrong });
    assert.equal(refused.status, 404);
    assert.doesNotMatch(JSON.stringify(refused.body), /[0-9a-f]{64}/);
    const second = new URL((await call('POST', `/api/schedules/${berlin}/feed`)).body.url).pathname;
    assert.notEqual(second, first);
    assert.equal((await server.request({ method: 'GET', url: first })).status, 404);
    assert.equal((await server.request({ method: 'GET', url: second })).status, 200);
    assert.equal((await call('POST', `/api/schedules/${berlin}/feed`, undefined, alice)).status, 403);
    const stored = await database().query<{ secret_hash: string }>('SELECT secret_hash FROM schedule_feeds');
    assert.ok(stored.rows.every((row) => !second.includes(row.secret_hash)));
  });

  test('a feed answers with an ETag; polling with If-None-Match is 304 until a shift changes', async () => {
    const schedule = (await call('POST', '/api/schedules', { name: 'Polled', time_zone: 'UTC' })).body.id;
    const url = new URL((await call('POST', `/api/schedules/${schedule}/feed`)).body.url).pathname;
    const first = await server.request({ method: 'GET', url });
    assert.equal(first.status, 200);
    const etag = String(first.headers.etag);
    assert.match(etag, /^"[\w-]+"$/);

    // A minute later the text is written anew (its DTSTAMP is the time of writing); the shifts are the same.
    clock.advance(60_000);
    const same = await server.request({ method: 'GET', url, headers: { 'if-none-match': etag } });
    assert.equal(same.status, 304);
    assert.equal(same.body, '');
    assert.equal(same.headers.etag, etag);
    const anyOf = await server.request({
      method: 'GET',
      url,
      headers: { 'if-none-match': `"other", W/${etag}` },
    });
    assert.equal(anyOf.status, 304);

    const added = await call('POST', `/api/schedules/${schedule}/overrides`, {
      user_id: bob.id,
      starts_at: '2026-03-28T08:00:00Z',
      ends_at: '2026-03-28T20:00:00Z',
    });
    assert.equal(added.status, 201);
    const changed = await server.request({ method: 'GET', url, headers: { 'if-none-match': etag } });
    assert.equal(changed.status, 200);
    assert.match(String(changed.body), /SUMMARY:.*bob/);
    assert.notEqual(changed.headers.etag, etag);
    assert.equal((await call('DELETE', `/api/schedules/${schedule}`)).status, 204);
    clock.advance(-60_000);
  });

  test('a schedule and /api/me say whether a feed is on, and since when its URL was made', async () => {
    const schedule = (await call('POST', '/api/schedules', { name: 'Fed', time_zone: 'UTC' })).body.id;
    const feedOf = async () => (await call('GET', `/api/schedules/${schedule}`)).body.feed_created_at;
    const ownFeed = async () =>
      (await call('GET', '/api/me', undefined, carol)).body.calendar_feed_created_at;
    assert.equal(await feedOf(), undefined);
    assert.equal(await ownFeed(), undefined);
    await call('POST', `/api/schedules/${schedule}/feed`);
    await call('POST', `/api/users/${carol.id}/calendar-feed`, undefined, carol);
    assert.equal(await feedOf(), clock.now().toISOString());
    assert.equal(await ownFeed(), clock.now().toISOString());
    const listed = (await call('GET', '/api/schedules')).body.find((s: { id: number }) => s.id === schedule);
    assert.equal(listed.feed_created_at, clock.now().toISOString());
    await call('DELETE', `/api/schedules/${schedule}/feed`);
    await call('DELETE', `/api/users/${carol.id}/calendar-feed`, undefined, carol);
    assert.equal(await feedOf(), undefined);
    assert.equal(await ownFeed(), undefined);
  });

  test('renewing a feed twice at once (a double click, two replicas) answers 201 to both; the last URL works', async () => {
    const schedule = (await call('POST', '/api/schedules', { name: 'Renewed', time_zone: 'UTC' })).body.id;
    for (const url of [`/api/schedules/${schedule}/feed`, `/api/users/${carol.id}/calendar-feed`]) {
      const renewals = await Promise.all(Array.from({ length: 6 }, () => call('POST', url)));
      assert.deepEqual(
        renewals.map((response) => response.status),
        [201, 201, 201, 201, 201, 201],
        JSON.stringify(renewals.map((response) => response.body)),
      );
      const answers = await Promise.all(
        renewals.map((response) =>
          server.request({ method: 'GET', url: new URL(response.body.url).pathname }),
        ),
      );
      assert.equal(answers.filter((answer) => answer.status === 200).length, 1, 'one feed, one live URL');
    }
  });

  test("a person's feed has their shifts only; they may rotate their own but not someone else's", async () => {
    const own = await call('POST', `/api/users/${alice.id}/calendar-feed`, undefined, alice);
    assert.equal(own.status, 201);
    assert.equal((await call('POST', `/api/users/${bob.id}/calendar-feed`, undefined, alice)).status, 403);
    const text = (await server.request({ method: 'GET', url: new URL(own.body.url).pathname }))
      .body as string;
    const events = new ICAL.Component(ICAL.parse(text))
      .getAllSubcomponents('vevent')
      .map((e) => new ICAL.Event(e));
    assert.ok(events.length > 0);
    assert.ok(events.every((event) => event.summary === 'On call: Databases'));
  });

  test('deleting a person turns their calendar feed off: the URL is 404 and no row is left to revive', async () => {
    const leaver = await server.createUser('leaver');
    const own = await call('POST', `/api/users/${leaver.id}/calendar-feed`, undefined, leaver);
    assert.equal(own.status, 201);
    const path = new URL(own.body.url).pathname;
    assert.equal((await server.request({ method: 'GET', url: path })).status, 200);

    assert.equal((await call('DELETE', `/api/users/${leaver.id}`)).status, 204);
    const refused = await server.request({ method: 'GET', url: path });
    assert.equal(refused.status, 404);
    assert.equal(refused.body.error, 'no such calendar feed; ask for a new feed URL');
    const rows = await database().query('SELECT id FROM schedule_feeds WHERE user_id = $1', [leaver.id]);
    assert.equal(rows.rows.length, 0, 'a later recovery of the person must not bring the old URL back');
  });

  test('the default schedule cannot be deleted; another can, with its rotations', async () => {
    const refused = await call('DELETE', '/api/schedules/1');
    assert.equal(refused.status, 409);
    assert.match(refused.body.error, /default/);
    const spare = await call('POST', '/api/schedules', { name: 'Spare', time_zone: 'Asia/Tokyo' });
    assert.equal((await call('DELETE', `/api/schedules/${spare.body.id}`)).status, 204);
    assert.equal((await call('GET', `/api/schedules/${spare.body.id}`)).status, 404);
  });

  test('the OpenAPI document describes the new routes; the feed route needs no API key', async () => {
    const document = (await server.request({ method: 'GET', url: '/api/openapi.json' })).body;
    for (const path of [
      '/api/schedules',
      '/api/schedules/{id}',
      '/api/schedules/{id}/rotations/{rotation_id}',
      '/api/schedules/{id}/overrides',
      '/api/schedules/{id}/on-call',
      '/api/schedules/{id}/now',
      '/api/schedules/{id}/timeline',
      '/api/schedules/{id}/feed',
      '/api/users/{id}/calendar-feed',
    ]) {
      assert.ok(document.paths[path], `${path} in the OpenAPI document`);
    }
    const feed = document.paths['/api/calendar/{token}'].get;
    assert.deepEqual(feed.security, []);
    assert.ok(feed.responses['200'].content['text/calendar']);
  });
});
