import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  forEachDatabase,
  ManualClock,
  startTestApp,
  testConfig,
  type TestApp,
  type TestUser,
} from '@terdut/test-support';

forEachDatabase('on-call schedule', (database) => {
  let server: TestApp;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  // 23:30 UTC on the 27th is already the 28th in Berlin.
  const clock = new ManualClock('2026-07-27T23:30:00Z');

  before(async () => {
    server = await startTestApp(database(), {
      clock,
      config: testConfig({ TERDUT_TIMEZONE: 'Europe/Berlin' }),
    });
    admin = await server.createUser('sched-admin', 'admin');
    alice = await server.createUser('alice');
    bob = await server.createUser('bob');
  });
  after(() => server.close());

  const assign = (body: unknown, as: TestUser = admin) =>
    server.request({ method: 'POST', url: '/api/schedule', payload: body as object, as });
  const list = (query: string, as: TestUser = alice) =>
    server.request({ method: 'GET', url: `/api/schedule${query}`, as });

  test('an admin puts someone on call; the entries come back oldest first with every field', async () => {
    const response = await assign({ user_id: alice.id, dates: ['2026-08-02', '2026-08-01'] });
    assert.equal(response.status, 201);
    assert.equal(response.body.length, 2);
    assert.deepEqual(
      response.body.map((entry: any) => [entry.date, entry.user_id, entry.username]),
      [
        ['2026-08-01', alice.id, 'alice'],
        ['2026-08-02', alice.id, 'alice'],
      ],
    );
    const entry = response.body[0];
    assert.deepEqual(Object.keys(entry).sort(), ['created_at', 'date', 'id', 'user_id', 'username']);
    assert.equal(typeof entry.id, 'number');
    assert.equal(entry.created_at, '2026-07-27T23:30:00.000Z');
  });

  test('a date listed twice counts once, and assigning days someone already has changes nothing', async () => {
    const first = await assign({ user_id: alice.id, dates: ['2026-08-03', '2026-08-03'] });
    assert.equal(first.status, 201);
    assert.deepEqual(
      first.body.map((entry: any) => entry.date),
      ['2026-08-03'],
    );
    const again = await assign({ user_id: alice.id, dates: ['2026-08-03'] });
    assert.equal(again.status, 201);
    assert.equal(again.body[0].id, first.body[0].id);
  });

  test('a day someone else holds is refused with 409, and the free days in the same request stay free', async () => {
    const response = await assign({ user_id: bob.id, dates: ['2026-08-04', '2026-08-01'] });
    assert.equal(response.status, 409);
    assert.match(response.body.error, /2026-08-01 \(alice\)/);
    assert.match(response.body.error, /"replace": true/);
    const window = await list('?from=2026-08-01&to=2026-08-04');
    assert.deepEqual(
      window.body.map((entry: any) => `${entry.date} ${entry.username}`),
      ['2026-08-01 alice', '2026-08-02 alice', '2026-08-03 alice'],
    );
  });

  test('with replace the day changes hands, all in one go', async () => {
    const response = await assign({ user_id: bob.id, dates: ['2026-08-04', '2026-08-02'], replace: true });
    assert.equal(response.status, 201);
    assert.deepEqual(
      response.body.map((entry: any) => `${entry.date} ${entry.username}`),
      ['2026-08-02 bob', '2026-08-04 bob'],
    );
    const window = await list('?from=2026-08-01&to=2026-08-04');
    assert.deepEqual(
      window.body.map((entry: any) => `${entry.date} ${entry.username}`),
      ['2026-08-01 alice', '2026-08-02 bob', '2026-08-03 alice', '2026-08-04 bob'],
    );
  });

  test('malformed dates are refused with 400 naming each of them, and nothing is stored', async () => {
    const response = await assign({ user_id: alice.id, dates: ['2026-08-20', '2026-02-30', 'tomorrow'] });
    assert.equal(response.status, 400);
    assert.match(response.body.error, /"2026-02-30"/);
    assert.match(response.body.error, /"tomorrow"/);
    assert.doesNotMatch(response.body.error, /2026-08-20/);
    assert.deepEqual((await list('?from=2026-08-20&to=2026-08-20')).body, []);
  });

  test('an empty date list and a missing user_id are 400s naming the field', async () => {
    const empty = await assign({ user_id: alice.id, dates: [] });
    assert.equal(empty.status, 400);
    assert.match(empty.body.error, /"dates"/);
    const missing = await assign({ dates: ['2026-08-21'] });
    assert.equal(missing.status, 400);
    assert.match(missing.body.error, /user_id/);
  });

  test('an unknown user is 404', async () => {
    const response = await assign({ user_id: 999_999, dates: ['2026-08-22'] });
    assert.equal(response.status, 404);
    assert.equal(response.body.error, 'user 999999 not found');
  });

  test('members can read the schedule but not change it', async () => {
    const response = await assign({ user_id: alice.id, dates: ['2026-08-23'] }, alice);
    assert.equal(response.status, 403);
    assert.equal((await list('?from=2026-08-23&to=2026-08-23')).body.length, 0);
    const read = await list('?from=2026-08-01&to=2026-08-01', bob);
    assert.equal(read.status, 200);
  });

  test('reading without credentials is 401', async () => {
    const response = await server.request({ method: 'GET', url: '/api/schedule' });
    assert.equal(response.status, 401);
  });

  test('the default window starts today in the configured time zone and spans 30 days', async () => {
    // Today is 2026-07-28 in Berlin; the 27th (still "today" in UTC) is outside.
    await assign({ user_id: alice.id, dates: ['2026-07-27', '2026-07-28', '2026-08-27', '2026-08-28'] });
    const response = await list('');
    assert.equal(response.status, 200);
    const dates = response.body.map((entry: any) => entry.date);
    assert.equal(dates[0], '2026-07-28');
    assert.equal(dates.at(-1), '2026-08-27');
    assert.deepEqual(dates, [...dates].sort());
  });

  test('from after to, or a malformed from, is a 400 naming the field', async () => {
    const reversed = await list('?from=2026-08-10&to=2026-08-01');
    assert.equal(reversed.status, 400);
    assert.match(reversed.body.error, /"from" \(2026-08-10\) is after "to" \(2026-08-01\)/);
    const malformed = await list('?from=2026-8-1');
    assert.equal(malformed.status, 400);
    assert.match(malformed.body.error, /"from"/);
  });

  test('a day before 1970 or from the year 9000 on is a 400 naming the field, not a 500', async () => {
    for (const [query, field] of [
      ['?from=0001-01-01&to=0001-01-03', 'from'],
      ['?from=9999-12-30&to=9999-12-31', 'from'],
      ['?from=8999-12-30&to=9000-01-01', 'to'],
    ] as const) {
      const response = await list(query);
      assert.equal(response.status, 400, query);
      assert.match(
        response.body.error,
        new RegExp(`"${field}" .*must be from 1970-01-01 up to 9000-01-01`),
        query,
      );
    }
  });

  test('current is whoever has today in the configured time zone, else 404 with the contract message', async () => {
    const current = await server.request({ method: 'GET', url: '/api/schedule/current', as: bob });
    assert.equal(current.status, 200);
    assert.equal(current.body.date, '2026-07-28');
    assert.equal(current.body.username, 'alice');

    clock.set('2026-07-29T12:00:00Z');
    const nobody = await server.request({ method: 'GET', url: '/api/schedule/current', as: bob });
    assert.equal(nobody.status, 404);
    assert.deepEqual(nobody.body, { error: 'no one is on call today' });
    clock.set('2026-07-27T23:30:00Z');
  });

  test('an admin deletes an entry with 204; deleting it again is 404; members get 403', async () => {
    const created = await assign({ user_id: bob.id, dates: ['2026-09-01'] });
    const id = created.body[0].id;
    const byMember = await server.request({ method: 'DELETE', url: `/api/schedule/${id}`, as: bob });
    assert.equal(byMember.status, 403);
    const deleted = await server.request({ method: 'DELETE', url: `/api/schedule/${id}`, as: admin });
    assert.equal(deleted.status, 204);
    assert.deepEqual((await list('?from=2026-09-01&to=2026-09-01')).body, []);
    const again = await server.request({ method: 'DELETE', url: `/api/schedule/${id}`, as: admin });
    assert.equal(again.status, 404);
    const bad = await server.request({ method: 'DELETE', url: '/api/schedule/abc', as: admin });
    assert.equal(bad.status, 400);
  });

  test('two admins giving the same free day to different people at once: one wins, the other gets 409', async () => {
    const [first, second] = await Promise.all([
      assign({ user_id: alice.id, dates: ['2026-10-01', '2026-10-02'] }),
      assign({ user_id: bob.id, dates: ['2026-10-02', '2026-10-03'] }),
    ]);
    assert.deepEqual([first.status, second.status].sort(), [201, 409]);
    const window = await list('?from=2026-10-01&to=2026-10-03');
    const winner = first.status === 201 ? 'alice' : 'bob';
    assert.equal(window.body.length, 2);
    assert.ok(window.body.every((entry: any) => entry.username === winner));
  });

  test("a deleted person's days disappear from the schedule and can be given to someone else", async () => {
    const carol = await server.createUser('carol');
    await assign({ user_id: carol.id, dates: ['2026-09-10'] });
    await database().query('UPDATE users SET deleted_at = now() WHERE id = $1', [carol.id]);
    assert.deepEqual((await list('?from=2026-09-10&to=2026-09-10')).body, []);
    const taken = await assign({ user_id: alice.id, dates: ['2026-09-10'] });
    assert.equal(taken.status, 201);
    assert.equal(taken.body[0].username, 'alice');
  });
});

/**
 * An entry of the day API can be a cover spanning instants (an override of
 * the default schedule made through /api/schedules). Taken back through
 * `DELETE /api/schedule/{id}` while it runs, it ends now, as the schedules
 * API's DELETE does: who was on call until then stays on record. Deleting
 * it outright rewrote the morning to whoever the day gives.
 */
forEachDatabase('taking back a running cover through the day API', (database) => {
  let server: TestApp;
  let admin: TestUser;
  let alice: TestUser;
  let carol: TestUser;
  let defaultSchedule: number;
  // Monday 10 August 2026, 12:00 in Berlin.
  const clock = new ManualClock('2026-08-10T10:00:00Z');

  before(async () => {
    server = await startTestApp(database(), {
      clock,
      config: testConfig({ TERDUT_TIMEZONE: 'Europe/Berlin' }),
    });
    admin = await server.createUser('cover-admin', 'admin');
    alice = await server.createUser('alice');
    carol = await server.createUser('carol');
    const schedules = await server.request({ method: 'GET', url: '/api/schedules', as: admin });
    defaultSchedule = schedules.body.find((schedule: any) => schedule.is_default).id;
    const days = await server.request({
      method: 'POST',
      url: '/api/schedule',
      as: admin,
      payload: { user_id: alice.id, dates: ['2026-08-10', '2026-08-11', '2026-08-12'] },
    });
    assert.equal(days.status, 201, JSON.stringify(days.body));
  });
  after(() => server.close());

  const cover = async (startsAt: string, endsAt: string): Promise<number> => {
    const created = await server.request({
      method: 'POST',
      url: `/api/schedules/${defaultSchedule}/overrides`,
      as: admin,
      payload: { user_id: carol.id, starts_at: startsAt, ends_at: endsAt },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return created.body.id;
  };
  const onCallAt = async (at: string) =>
    (
      await server.request({
        method: 'GET',
        url: `/api/schedules/${defaultSchedule}/on-call?at=${at}`,
        as: admin,
      })
    ).body.username;
  const day = async (date: string) =>
    (
      await server.request({ method: 'GET', url: `/api/schedule?from=${date}&to=${date}`, as: alice })
    ).body.map((entry: any) => [entry.username, entry.override_id ?? null]);
  const remove = (id: number) => server.request({ method: 'DELETE', url: `/api/schedule/${id}`, as: admin });

  test('a cover that is running ends now: the morning stays Carol’s, Alice is on call again from now', async () => {
    const id = await cover('2026-08-10T09:00:00+02:00', '2026-08-10T18:00:00+02:00');
    assert.equal(await onCallAt('2026-08-10T10:00:00Z'), 'carol');
    assert.deepEqual(await day('2026-08-10'), [
      ['alice', null],
      ['carol', id],
    ]);

    assert.equal((await remove(id)).status, 204);
    assert.equal(await onCallAt('2026-08-10T08:30:00Z'), 'carol', 'the morning is still Carol’s');
    assert.equal(await onCallAt('2026-08-10T10:00:00Z'), 'alice');
    assert.equal(await onCallAt('2026-08-10T15:00:00Z'), 'alice');
    // Today's page still names Carol, who was on call this morning.
    assert.deepEqual(await day('2026-08-10'), [
      ['alice', null],
      ['carol', id],
    ]);
    const audit = await server.request({ method: 'GET', url: '/api/audit?limit=5', as: admin });
    const ended = audit.body.find((entry: any) => entry.action === 'schedule.override_ended');
    assert.ok(ended, JSON.stringify(audit.body.map((entry: any) => entry.action)));
    assert.deepEqual(ended.detail, { override_id: id, ends_at: '2026-08-10T10:00:00.000Z' });
  });

  test('a cover not yet begun is deleted: the day is Alice’s alone', async () => {
    const id = await cover('2026-08-11T09:00:00+02:00', '2026-08-11T18:00:00+02:00');
    assert.equal((await remove(id)).status, 204);
    assert.deepEqual(await day('2026-08-11'), [['alice', null]]);
    assert.equal((await remove(id)).status, 404);
  });

  test('a cover already over is deleted, as the schedules API deletes it', async () => {
    const id = await cover('2026-08-10T07:00:00+02:00', '2026-08-10T08:00:00+02:00');
    assert.equal((await remove(id)).status, 204);
    assert.equal(await onCallAt('2026-08-10T05:30:00Z'), 'alice');
    assert.equal((await remove(id)).status, 404);
  });
});
