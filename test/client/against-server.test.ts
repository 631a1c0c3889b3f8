/**
 * The typed client against a real listening terdut-server over loopback HTTP:
 * the paths, bodies and status handling of each client module must match what
 * the server actually serves.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { TerdutApiError, TerdutClient } from '../../packages/client/src/index.ts';
import { forEachDatabase } from '../support/databases.ts';
import { ManualClock, startTestApp, type TestApp, type TestUser } from '../support/app.ts';

forEachDatabase('typed client against a listening server', (database) => {
  let server: TestApp;
  let admin: TestUser;
  let member: TestUser;
  let asAdmin: TerdutClient;
  let asMember: TerdutClient;
  const clock = new ManualClock('2026-07-27T10:00:00Z');

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

  test('schedule: assign, list, current, conflict and delete through the client', async () => {
    assert.equal(await asMember.schedule.current(), undefined, 'no one on call is undefined, not an error');

    const entries = await asAdmin.schedule.assign(member.id, ['2026-07-28', '2026-07-27']);
    assert.deepEqual(
      entries.map((entry) => entry.date),
      ['2026-07-27', '2026-07-28'],
    );
    const current = await asMember.schedule.current();
    assert.equal(current?.username, 'client-member');

    const window = await asMember.schedule.list({ from: '2026-07-27', to: '2026-07-27' });
    assert.equal(window.length, 1);

    const refused = await asAdmin.schedule.assign(admin.id, ['2026-07-28']).catch((error: unknown) => error);
    assert.ok(refused instanceof TerdutApiError);
    assert.equal(refused.status, 409);
    const replaced = await asAdmin.schedule.assign(admin.id, ['2026-07-28'], { replace: true });
    assert.equal(replaced[0]!.username, 'client-admin');

    const forbidden = await asMember.schedule.delete(entries[0]!.id).catch((error: unknown) => error);
    assert.ok(forbidden instanceof TerdutApiError && forbidden.status === 403);
    await asAdmin.schedule.delete(entries[0]!.id);
    assert.equal(await asMember.schedule.current(), undefined);
  });
});
