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
  resolvedAlert,
} from '@terdut/test-support';

const HOUR = 3_600_000;

forEachDatabase('staleness: alerts not refreshed count as resolved (expiry)', (database) => {
  let server: TestApp;
  let replica: TestApp;
  let user: TestUser;
  const clock = new ManualClock('2026-07-27T10:00:00Z');

  before(async () => {
    const config = testConfig({ TERDUT_ALERT_STALE_AFTER: '1h' });
    server = await startTestApp(database(), { clock, config });
    // A second app on the same database: another replica's sweeper.
    replica = await startTestApp(database(), { clock, config });
    user = await server.createUser('expiry-user', 'member');
  });
  after(async () => {
    await replica.close();
    await server.close();
  });

  const post = (payload: object) =>
    server.request({ method: 'POST', url: '/api/webhook/alertmanager', payload, as: user });
  const incident = async (id: number) =>
    (await server.request({ method: 'GET', url: `/api/incidents/${id}`, as: user })).body;
  const timeline = async (id: number) =>
    (await server.request({ method: 'GET', url: `/api/incidents/${id}/timeline`, as: user })).body as any[];

  test('a firing alert not refreshed for TERDUT_ALERT_STALE_AFTER is resolved by the sweep, and its incident with it', async () => {
    const opened = await post(
      notification({ groupKey: 'stale-1', alerts: [firingAlert({ name: 'Stale1' })] }),
    );
    const id = opened.body.incident_id;
    const lastSeen = clock.now();

    clock.advance(59 * 60_000);
    await server.app.services.alertExpiry.sweep();
    assert.equal((await incident(id)).status, 'triggered', 'not stale yet');

    clock.advance(2 * 60_000);
    const result = await server.app.services.alertExpiry.sweep();
    assert.ok(result.expiredAlerts >= 1);
    const detail = await incident(id);
    assert.equal(detail.status, 'resolved');
    assert.equal(detail.resolution_source, 'alerts');
    const [alert] = detail.alerts;
    assert.equal(alert.status, 'resolved');
    assert.equal(alert.resolution_source, 'expiry');
    assert.equal(alert.ends_at, new Date(lastSeen.getTime() + HOUR).toISOString());
    const events = await timeline(id);
    assert.deepEqual(
      events.map((event) => event.type),
      ['triggered', 'alert_added', 'alert_resolved', 'resolved'],
    );
    assert.match(events[2].detail, /not refreshed for 1h/);
    assert.equal('user_id' in events[2], false);
  });

  test('an alert carried in every notification is never stale', async () => {
    const payload = notification({ groupKey: 'stale-2', alerts: [firingAlert({ name: 'Fresh' })] });
    const id = (await post(payload)).body.incident_id;
    for (let i = 0; i < 3; i++) {
      clock.advance(50 * 60_000);
      await post(payload);
      await server.app.services.alertExpiry.sweep();
    }
    const detail = await incident(id);
    assert.equal(detail.status, 'triggered');
    assert.equal(detail.alerts[0].status, 'firing');
  });

  test('an alert missing from the notifications (truncated, lost) expires lazily when its group is notified', async () => {
    const lost = { name: 'Lazy', labels: { instance: 'lost' } };
    const kept = { name: 'Lazy', labels: { instance: 'kept' } };
    const id = (
      await post(notification({ groupKey: 'stale-3', alerts: [firingAlert(lost), firingAlert(kept)] }))
    ).body.incident_id;
    clock.advance(40 * 60_000);
    await post(notification({ groupKey: 'stale-3', alerts: [firingAlert(kept)], truncatedAlerts: 1 }));
    clock.advance(40 * 60_000);
    // No sweep: the notification itself expires what the group no longer refreshes.
    await post(notification({ groupKey: 'stale-3', alerts: [firingAlert(kept)], truncatedAlerts: 1 }));
    let detail = await incident(id);
    assert.equal(detail.status, 'triggered');
    const lostAlert = detail.alerts.find((alert: any) => alert.labels.instance === 'lost');
    assert.equal(lostAlert.status, 'resolved');
    assert.equal(lostAlert.resolution_source, 'expiry');

    await post(notification({ groupKey: 'stale-3', alerts: [resolvedAlert(kept)] }));
    detail = await incident(id);
    assert.equal(detail.status, 'resolved');
    assert.equal(detail.resolution_source, 'alerts');
  });

  test('a notification that leaves firing alerts out (max_alerts) resolves nothing; the sweep waits TERDUT_ALERT_STALE_AFTER after the last one', async () => {
    const a = { name: 'Truncated', labels: { instance: 'a' } };
    const b = { name: 'Truncated', labels: { instance: 'b' } };
    // max_alerts: 1, a and b firing: Alertmanager lists a and leaves b out.
    const id = (
      await post(notification({ groupKey: 'trunc-1', alerts: [firingAlert(a)], truncatedAlerts: 1 }))
    ).body.incident_id;
    // a resolves while b fires: a listed as resolved, b left out. Alertmanager computes the
    // notification's status from the list it cut: "resolved", as notification() does.
    const aResolved = notification({ groupKey: 'trunc-1', alerts: [resolvedAlert(a)], truncatedAlerts: 1 });
    assert.equal(aResolved.status, 'resolved');
    assert.equal((await post(aResolved)).status, 200);
    assert.equal((await incident(id)).status, 'triggered', 'b still fires, unseen');
    clock.advance(59 * 60_000);
    await server.app.services.alertExpiry.sweep();
    assert.equal(
      (await incident(id)).status,
      'triggered',
      'the sweep does not take the left-out alerts for quiet',
    );

    // Alertmanager's next notification has room for b (a was dropped once sent): the same incident.
    assert.equal(
      (await post(notification({ groupKey: 'trunc-1', alerts: [firingAlert(b)] }))).body.incident_id,
      id,
    );
    await post(notification({ groupKey: 'trunc-1', alerts: [resolvedAlert(b)] }));
    assert.equal((await incident(id)).status, 'resolved', 'the whole group listed, all resolved');

    // A group that goes silent after such a notification is resolved once it is stale.
    const silent = (
      await post(notification({ groupKey: 'trunc-2', alerts: [firingAlert(a)], truncatedAlerts: 1 }))
    ).body.incident_id;
    await post({ ...aResolved, groupKey: 'trunc-2' });
    clock.advance(59 * 60_000);
    await server.app.services.alertExpiry.sweep();
    assert.equal((await incident(silent)).status, 'triggered');
    clock.advance(2 * 60_000);
    await server.app.services.alertExpiry.sweep();
    assert.equal((await incident(silent)).status, 'resolved');
  });

  test('Alertmanager still reporting an expired alert as firing revives it in a new incident', async () => {
    const spec = { name: 'Revived' };
    const id = (await post(notification({ groupKey: 'stale-4', alerts: [firingAlert(spec)] }))).body
      .incident_id;
    clock.advance(2 * HOUR);
    await server.app.services.alertExpiry.sweep();
    assert.equal((await incident(id)).status, 'resolved');

    const again = await post(notification({ groupKey: 'stale-4', alerts: [firingAlert(spec)] }));
    assert.equal(typeof again.body.incident_id, 'number');
    assert.notEqual(again.body.incident_id, id);
    const alert = (await incident(again.body.incident_id)).alerts[0];
    assert.equal(alert.status, 'firing');
    assert.equal('resolution_source' in alert, false);
    assert.equal('ends_at' in alert, false);
  });

  test("Alertmanager's own resolve replaces a presumed expiry without new events", async () => {
    const spec = { name: 'LateResolve' };
    const id = (await post(notification({ groupKey: 'stale-5', alerts: [firingAlert(spec)] }))).body
      .incident_id;
    clock.advance(2 * HOUR);
    await server.app.services.alertExpiry.sweep();
    const eventsBefore = await timeline(id);
    await post(notification({ groupKey: 'stale-5', alerts: [resolvedAlert(spec)] }));
    const alert = (await incident(id)).alerts[0];
    assert.equal(alert.resolution_source, 'alertmanager');
    assert.deepEqual(await timeline(id), eventsBefore);
  });

  test('an alert routed into two groups: its resolve, or its expiry, through one group resolves both incidents', async () => {
    for (const ending of ['resolved', 'expired'] as const) {
      const spec = { name: `TwoGroups${ending}`, labels: { instance: 'shared' } };
      const first = (await post(notification({ groupKey: `two-a-${ending}`, alerts: [firingAlert(spec)] })))
        .body;
      const second = (await post(notification({ groupKey: `two-b-${ending}`, alerts: [firingAlert(spec)] })))
        .body;
      assert.notEqual(first.incident_id, second.incident_id);
      if (ending === 'resolved') {
        await post(notification({ groupKey: `two-b-${ending}`, alerts: [resolvedAlert(spec)] }));
        assert.equal((await incident(second.incident_id)).status, 'resolved');
      } else {
        clock.advance(2 * HOUR);
      }
      await server.app.services.alertExpiry.sweep();
      for (const id of [first.incident_id, second.incident_id]) {
        const detail = await incident(id);
        assert.equal(detail.status, 'resolved', `${ending}: incident ${id}`);
        assert.equal(detail.resolution_source, 'alerts');
        assert.equal((await timeline(id)).filter((event) => event.type === 'resolved').length, 1);
      }
    }
  });

  test('two replicas sweeping at once expire each alert once', async () => {
    const ids: number[] = [];
    for (let group = 0; group < 5; group++) {
      const alerts = [0, 1, 2].map((i) =>
        firingAlert({ name: `Race${group}`, labels: { instance: `i${i}` } }),
      );
      ids.push((await post(notification({ groupKey: `stale-race-${group}`, alerts }))).body.incident_id);
    }
    clock.advance(2 * HOUR);
    const [a, b] = await Promise.all([
      server.app.services.alertExpiry.sweep(),
      replica.app.services.alertExpiry.sweep(),
    ]);
    // A group one replica holds is skipped by the other; a third pass finds nothing left.
    await server.app.services.alertExpiry.sweep();
    assert.ok(a.expiredAlerts + b.expiredAlerts >= 15);
    for (const id of ids) {
      const types = (await timeline(id)).map((event) => event.type);
      assert.deepEqual(types, [
        'triggered',
        'alert_added',
        'alert_added',
        'alert_added',
        'alert_resolved',
        'alert_resolved',
        'alert_resolved',
        'resolved',
      ]);
    }
  });
});
