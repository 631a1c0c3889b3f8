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
import { notificationOfSize, resolvedAlert, notification } from '../support/alertmanager-payloads.ts';

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
  test('webhook, incidents, alerts and statistics through the client', async () => {
    const alertmanager = new TerdutClient({ baseUrl: asAdmin.http.baseUrl, token: admin.key });
    const accepted = await alertmanager.webhook.sendAlertmanager(
      notificationOfSize(3, { groupKey: 'client-group', name: 'ClientTest' }),
    );

    const [incident] = await asMember.incidents.list();
    assert.ok(incident);
    assert.deepEqual(accepted, { status: 'accepted', incident_id: incident.id });
    assert.equal(incident.group_key, 'client-group');
    assert.equal(incident.status, 'triggered');
    const detailed = await asMember.incidents.get(incident.id);
    assert.equal(detailed.alerts?.length, 3);

    const alerts = await asMember.alerts.list({ status: 'firing' });
    assert.equal(alerts.length, 3);
    const alert = await asMember.alerts.get(alerts[0]!.id);
    assert.equal(alert.name, 'ClientTest');
    assert.equal(alert.incident_id, incident.id);

    const acknowledged = await asMember.incidents.acknowledge(incident.id);
    assert.equal(acknowledged.acknowledged_by, 'client-member');
    await asMember.incidents.unacknowledge(incident.id);
    const assigned = await asMember.incidents.assign(incident.id, admin.id);
    assert.equal(assigned.assigned_to, 'client-admin');
    const snoozed = await asMember.incidents.snooze(incident.id, '1h30m');
    assert.ok(snoozed.snoozed_until);
    assert.equal((await asMember.incidents.list({ snoozed: true })).length, 1);
    await asMember.incidents.unsnooze(incident.id);

    const note = await asMember.incidents.addNote(incident.id, 'looking at the disks');
    assert.equal(note.type, 'note');
    assert.equal(note.detail, 'looking at the disks');
    const notAllowed = await asAdmin.incidents
      .deleteNote(incident.id, note.id)
      .catch((error: unknown) => error);
    assert.ok(notAllowed instanceof TerdutApiError && notAllowed.status === 403);
    await asMember.incidents.deleteNote(incident.id, note.id);
    const timeline = await asMember.incidents.timeline(incident.id);
    assert.equal(timeline[0]!.type, 'triggered');

    const resolved = await asMember.incidents.resolve(incident.id);
    assert.equal(resolved.resolution_source, 'manual');
    const again = await asMember.incidents.resolve(incident.id).catch((error: unknown) => error);
    assert.ok(again instanceof TerdutApiError);
    assert.equal(again.status, 409);
    assert.equal(again.serverMessage, 'incident is resolved');
    await asMember.incidents.archive(incident.id);
    assert.deepEqual(
      (await asMember.incidents.list({ archived: true })).map((item) => item.id),
      [incident.id],
    );
    await asMember.incidents.unarchive(incident.id);

    await alertmanager.webhook.sendAlertmanager(
      notification({
        groupKey: 'client-group',
        alerts: [resolvedAlert({ name: 'ClientTest', labels: { instance: 'host-0' } })],
      }),
    );
    assert.deepEqual(await asMember.stats.alerts(), { total: 3, firing: 2, resolved: 1 });
    assert.deepEqual(await asMember.stats.topAlerts(5), [{ name: 'ClientTest', count: 3 }]);
    assert.equal((await asMember.stats.alertsByHour()).length, 24);
    assert.equal((await asMember.stats.alertsByDay())[0]!.day_name, 'Sunday');
    const incidents = await asMember.stats.incidents();
    assert.equal(incidents.total, 1);
    assert.equal(incidents.resolved, 1);
    assert.equal(incidents.mtta_seconds, null, 'the acknowledgement was taken back');
    assert.equal(typeof incidents.mttr_seconds, 'number');

    const badPayload = await alertmanager.webhook
      .sendAlertmanager({ ...notificationOfSize(1), version: '3' })
      .catch((error: unknown) => error);
    assert.ok(badPayload instanceof TerdutApiError && badPayload.status === 400);
  });
});
