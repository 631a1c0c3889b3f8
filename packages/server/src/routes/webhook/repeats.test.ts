import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  forEachDatabase,
  ManualClock,
  startTestApp,
  testConfig,
  type TestApp,
  type TestUser,
  firingAlert,
  notification,
  postNotification,
  type WebhookPayloadJson,
} from '@terdut/test-support';

// A repeat (the same firing group again, Alertmanager's steady state) is
// applied in one call when the database proves it is one (migration 0950).
// Each replica only remembers what a group last sent it; these tests change
// the group behind a replica's back (through the other replica, a person,
// the staleness sweep) and send that replica the same notification again: it
// must be applied as a new notification, exactly as if never seen before.
forEachDatabase('webhook: a repeat changes only "last seen", whatever changed since', (database) => {
  let first: TestApp;
  let second: TestApp;
  let user: TestUser;
  const clock = new ManualClock('2026-11-02T10:00:00Z');

  before(async () => {
    const config = testConfig({ TERDUT_ALERT_STALE_AFTER: '1h' });
    first = await startTestApp(database(), { clock, config });
    second = await startTestApp(database(), { clock, config });
    user = await first.createUser('repeats-user', 'member');
  });
  after(async () => {
    await second.close();
    await first.close();
  });

  const post = (replica: TestApp, payload: WebhookPayloadJson) => postNotification(replica, user, payload);
  const get = async (url: string) => (await first.request({ method: 'GET', url, as: user })).body;
  const incident = (id: number) => get(`/api/incidents/${id}`);
  const eventTypes = async (id: number) =>
    ((await get(`/api/incidents/${id}/timeline`)) as { type: string }[]).map((event) => event.type);

  test('a repeat moves "last seen" only: same incident, same timeline, never stale', async () => {
    const payload = notification({ groupKey: 'repeat-steady', alerts: [firingAlert({ name: 'Steady' })] });
    const id = (await post(first, payload)).incident_id!;
    for (let i = 0; i < 3; i++) {
      clock.advance(45 * 60_000);
      assert.equal((await post(first, payload)).incident_id, id);
      await first.app.services.alertExpiry.sweep();
    }
    const detail = await incident(id);
    assert.equal(detail.status, 'triggered');
    assert.equal(detail.alerts[0].status, 'firing');
    assert.deepEqual(await eventTypes(id), ['triggered', 'alert_added']);
  });

  test('an annotation changed through the other replica is put back by a repeat of the old notification', async () => {
    const old = firingAlert({ name: 'Annotated', annotations: { summary: 'disk 91% full' } });
    const changed = firingAlert({ name: 'Annotated', annotations: { summary: 'disk 97% full' } });
    const id = (await post(first, notification({ groupKey: 'repeat-annotation', alerts: [old] })))
      .incident_id!;
    await post(first, notification({ groupKey: 'repeat-annotation', alerts: [old] }));
    await post(second, notification({ groupKey: 'repeat-annotation', alerts: [changed] }));
    assert.equal((await incident(id)).alerts[0].annotations.summary, 'disk 97% full');
    // The first replica last saw `old`: what Alertmanager sends now wins.
    await post(first, notification({ groupKey: 'repeat-annotation', alerts: [old] }));
    assert.equal((await incident(id)).alerts[0].annotations.summary, 'disk 91% full');
  });

  test('a repeat after a person resolved the incident opens nothing (a manual resolve is final)', async () => {
    const payload = notification({
      groupKey: 'repeat-resolved',
      alerts: [firingAlert({ name: 'Resolved' })],
    });
    const id = (await post(first, payload)).incident_id!;
    await post(first, payload);
    const resolve = await second.request({ method: 'POST', url: `/api/incidents/${id}/resolve`, as: user });
    assert.equal(resolve.status, 200);
    assert.equal((await post(first, payload)).incident_id, undefined);
    const open = (await get('/api/incidents?status=triggered&limit=500')) as { group_key: string }[];
    assert.equal(open.filter((row) => row.group_key === 'repeat-resolved').length, 0);
  });

  test('a repeat after the sweep presumed the alert resolved revives it in a new incident', async () => {
    const payload = notification({ groupKey: 'repeat-expired', alerts: [firingAlert({ name: 'Revived' })] });
    const id = (await post(first, payload)).incident_id!;
    await post(first, payload);
    clock.advance(61 * 60_000);
    await second.app.services.alertExpiry.sweep();
    assert.equal((await incident(id)).status, 'resolved');
    const revived = (await post(first, payload)).incident_id;
    assert.ok(revived !== undefined && revived !== id, 'a new incident for the alert that still fires');
    const detail = await incident(revived);
    assert.equal(detail.alerts[0].status, 'firing');
    assert.equal(detail.alerts[0].resolution_source ?? null, null);
  });

  test('an alert revived after its incident was archived is listed among the alerts again, not archived', async () => {
    const payload = notification({
      groupKey: 'repeat-archived',
      alerts: [firingAlert({ name: 'Unarchived' })],
    });
    const id = (await post(first, payload)).incident_id!;
    clock.advance(61 * 60_000);
    await second.app.services.alertExpiry.sweep();
    const archive = await first.request({ method: 'POST', url: `/api/incidents/${id}/archive`, as: user });
    assert.equal(archive.status, 200);
    // Alertmanager says it still fires: a new incident, and the alert with it.
    const revived = (await post(first, payload)).incident_id;
    assert.ok(revived !== undefined && revived !== id);
    assert.equal('archived_at' in (await incident(revived)).alerts[0], false);
    const firing = (await get('/api/alerts?status=firing')) as { name: string }[];
    assert.ok(
      firing.some((alert) => alert.name === 'Unarchived'),
      'the firing alert of an open incident is missing from GET /api/alerts',
    );
  });

  test('an alert that fired through a manual resolve and joins the next incident is no longer archived', async () => {
    const kept = firingAlert({ name: 'KeptThroughArchive' });
    const id = (await post(first, notification({ groupKey: 'repeat-kept-archived', alerts: [kept] })))
      .incident_id!;
    assert.equal(
      (await first.request({ method: 'POST', url: `/api/incidents/${id}/resolve`, as: user })).status,
      200,
    );
    await first.request({ method: 'POST', url: `/api/incidents/${id}/archive`, as: user });
    // A new alert of the group opens a new incident; the one still firing joins it.
    const next = (
      await post(
        first,
        notification({ groupKey: 'repeat-kept-archived', alerts: [kept, firingAlert({ name: 'Newcomer' })] }),
      )
    ).incident_id;
    assert.ok(next !== undefined && next !== id);
    const alerts = (await incident(next)).alerts as { name: string; archived_at?: string }[];
    assert.deepEqual(alerts.map((alert) => [alert.name, 'archived_at' in alert]).sort(), [
      ['KeptThroughArchive', false],
      ['Newcomer', false],
    ]);
  });

  test('a repeat while another alert of the group went stale resolves that one', async () => {
    const kept = firingAlert({ name: 'Kept' });
    const dropped = firingAlert({ name: 'Dropped' });
    const id = (await post(first, notification({ groupKey: 'repeat-stale', alerts: [kept] }))).incident_id!;
    await post(first, notification({ groupKey: 'repeat-stale', alerts: [kept] }));
    // The other replica hears of a second alert, which then stops being sent.
    await post(second, notification({ groupKey: 'repeat-stale', alerts: [kept, dropped] }));
    clock.advance(61 * 60_000);
    await post(first, notification({ groupKey: 'repeat-stale', alerts: [kept] }));
    const statuses = Object.fromEntries(
      ((await incident(id)).alerts as { name: string; status: string }[]).map((alert) => [
        alert.name,
        alert.status,
      ]),
    );
    assert.deepEqual(statuses, { Kept: 'firing', Dropped: 'resolved' });
  });

  test('a repeat of an alert presumed resolved while its incident stayed open revives it', async () => {
    const a = firingAlert({ name: 'Presumed' });
    const b = firingAlert({ name: 'StillFiring' });
    const both = notification({ groupKey: 'repeat-presumed', alerts: [a, b] });
    const id = (await post(first, both)).incident_id!;
    await post(first, both);
    clock.advance(61 * 60_000);
    // The other replica hears only of B: A, not refreshed for an hour, is presumed resolved.
    await post(second, notification({ groupKey: 'repeat-presumed', alerts: [b] }));
    const presumed = async () =>
      ((await incident(id)).alerts as { name: string; status: string }[]).find(
        (alert) => alert.name === 'Presumed',
      )!.status;
    assert.equal(await presumed(), 'resolved');
    await post(first, both);
    assert.equal(await presumed(), 'firing');
  });
});
