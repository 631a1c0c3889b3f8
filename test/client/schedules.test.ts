/**
 * The typed client's schedules module against a real listening server: each
 * call's path, body and answer shape must match what the server serves.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { TerdutApiError, TerdutClient } from '../../packages/client/src/index.ts';
import { forEachDatabase } from '../support/databases.ts';
import { ManualClock, startTestApp, type TestApp, type TestUser } from '../support/app.ts';

forEachDatabase('typed client: schedules', (database) => {
  let server: TestApp;
  let admin: TestUser;
  let member: TestUser;
  let asAdmin: TerdutClient;
  let asMember: TerdutClient;
  const clock = new ManualClock('2026-10-22T12:00:00Z');

  before(async () => {
    server = await startTestApp(database(), { clock });
    await server.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = server.app.server.address() as AddressInfo;
    admin = await server.createUser('client-admin', 'admin');
    member = await server.createUser('client-member');
    const baseUrl = `http://127.0.0.1:${port}`;
    asAdmin = new TerdutClient({ baseUrl, token: admin.key });
    asMember = new TerdutClient({ baseUrl, token: member.key });
  });
  after(() => server.close());

  test('schedules, rotations, overrides, on-call, timeline and a feed through the client', async () => {
    const schedule = await asAdmin.schedules.create({ name: 'Platform', time_zone: 'America/New_York' });
    const rotation = await asAdmin.schedules.addRotation(schedule.id, {
      name: 'Daily',
      participant_ids: [member.id, admin.id],
      shift_length: 1,
      shift_unit: 'days',
      start_date: '2026-10-20',
      handoff_time: '09:00',
      restriction: { weekdays: [1, 2, 3, 4, 5] },
    });
    assert.deepEqual(rotation.restriction, { weekdays: [1, 2, 3, 4, 5] });
    assert.equal((await asMember.schedules.get(schedule.id)).rotations?.[0]?.name, 'Daily');

    // 2026-10-22 08:00 EDT: the shift that started on the 21st (admin) is on.
    const now = await asMember.schedules.now(schedule.id);
    assert.equal(now.now.username, 'client-admin');
    assert.equal(now.now.until, '2026-10-22T13:00:00.000Z');
    assert.equal(now.next?.username, 'client-member');

    const override = await asAdmin.schedules.addOverride(schedule.id, {
      user_id: member.id,
      starts_at: '2026-10-24T00:00:00-04:00',
      ends_at: '2026-10-25T00:00:00-04:00',
    });
    assert.equal((await asMember.schedules.onCall(schedule.id, '2026-10-24T12:00:00Z')).source, 'override');
    assert.equal((await asMember.schedules.overrides(schedule.id)).length, 1);
    const weekend = await asMember.schedules.timeline(schedule.id, {
      from: '2026-10-24T04:00:00Z',
      to: '2026-10-26T04:00:00Z',
    });
    assert.deepEqual(
      weekend.map((s) => [s.start, s.username ?? 'nobody']),
      [
        ['2026-10-24T04:00:00.000Z', 'client-member'],
        ['2026-10-25T04:00:00.000Z', 'nobody'],
      ],
    );

    const feed = await asAdmin.schedules.rotateFeed(schedule.id);
    const response = await fetch(feed.url);
    assert.equal(response.status, 200);
    assert.match(await response.text(), /^BEGIN:VCALENDAR\r\n[\s\S]*TZID:America\/New_York/);

    const refused = await asMember.schedules
      .deleteOverride(schedule.id, override.id)
      .catch((e: unknown) => e);
    assert.ok(refused instanceof TerdutApiError && refused.status === 403);
    await asAdmin.schedules.deleteOverride(schedule.id, override.id);
    await asAdmin.schedules.deleteRotation(schedule.id, rotation.id);
    await asAdmin.schedules.deleteFeed(schedule.id);
    assert.equal((await fetch(feed.url)).status, 404);
    await asAdmin.schedules.delete(schedule.id);
    assert.equal((await asMember.schedules.list()).length, 1);
  });
});
