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
  resolvedAlert,
  notification,
  postNotification,
  type WebhookPayloadJson,
} from '@terdut/test-support';

// A group's first notification opens its incident in one call when the
// database proves the group is new (migration 0960, terdut_intake_open); a
// replica tries that for every group it has not seen. These tests hold it to
// what the full intake does: the same incident, timeline, escalation and
// links; never routed with policies that changed since the replica read
// them; never a second incident when the group is not new after all.
forEachDatabase('webhook: a new group opens its incident as the full intake would', (database) => {
  let first: TestApp;
  let second: TestApp;
  let user: TestUser;
  let admin: TestUser;
  const clock = new ManualClock('2026-11-03T09:00:00Z');

  before(async () => {
    const config = testConfig({ TERDUT_ALERT_STALE_AFTER: '1h' });
    first = await startTestApp(database(), { clock, config });
    second = await startTestApp(database(), { clock, config });
    user = await first.createUser('new-groups-user', 'member');
    admin = await first.createUser('new-groups-admin', 'admin');
  });
  after(async () => {
    await second.close();
    await first.close();
  });

  const post = (replica: TestApp, payload: WebhookPayloadJson) => postNotification(replica, user, payload);
  const get = async (url: string) => (await first.request({ method: 'GET', url, as: user })).body;
  const escalationOf = async (incidentId: number) =>
    (
      await first.db.query<{
        policy_id: number | null;
        policy: { name: string };
        labels: Record<string, string>;
        state: string;
        step: number;
        round: number;
        due_at: Date | null;
      }>(
        'SELECT policy_id, policy, labels, state, step, round, due_at FROM escalations WHERE incident_id = $1',
        [incidentId],
      )
    ).rows;
  const storedAlertsOf = async (incidentId: number) =>
    (
      await first.db.query<{ name: string; incident_id: number; has_digest: boolean; linked: boolean }>(
        `SELECT a.name, a.incident_id, a.content_digest IS NOT NULL AS has_digest,
                EXISTS (SELECT 1 FROM incident_alerts ia WHERE ia.alert_id = a.id AND ia.incident_id = $1
                           AND ia.occurrence_starts_at = a.starts_at) AS linked
           FROM alerts a JOIN incident_alerts l ON l.alert_id = a.id AND l.incident_id = $1 ORDER BY a.name`,
        [incidentId],
      )
    ).rows;

  /** Everything a person or the pager sees of an incident, with the label that tells the copies apart taken out. */
  const everything = async (incidentId: number) => {
    const detail = await get(`/api/incidents/${incidentId}`);
    const timeline = (await get(`/api/incidents/${incidentId}/timeline`)) as {
      type: string;
      detail: string;
    }[];
    const withoutCopy = (labels: Record<string, string>) =>
      Object.fromEntries(Object.entries(labels).filter(([key]) => key !== 'copy'));
    return {
      title: detail.title,
      status: detail.status,
      severity: detail.severity,
      group_labels: detail.group_labels,
      alerts: (detail.alerts as { name: string; status: string; labels: Record<string, string> }[]).map(
        (alert) => ({ name: alert.name, status: alert.status, labels: withoutCopy(alert.labels) }),
      ),
      timeline: timeline.map((event) => [event.type, event.detail]),
      escalation: (await escalationOf(incidentId)).map((row) => ({
        ...row,
        labels: withoutCopy(row.labels),
      })),
      stored: (await storedAlertsOf(incidentId)).map((row) => ({
        ...row,
        incident_id: row.incident_id === incidentId,
      })),
    };
  };

  // Fingerprints that sort alike in both copies: alerts are stored in fingerprint order.
  const groupOf = (copy: string) =>
    [
      firingAlert({
        name: 'DiskFilling',
        fingerprint: `${copy}-3`,
        labels: { team: 'web', copy, severity: 'warning' },
      }),
      firingAlert({
        name: 'DiskFull',
        fingerprint: `${copy}-1`,
        labels: { team: 'web', copy, severity: 'critical' },
      }),
      firingAlert({ name: 'InodesLow', fingerprint: `${copy}-2`, labels: { team: 'web', copy } }),
    ].reverse();

  test('a new group opens the same incident, timeline, escalation and links through either path', async () => {
    // The first replica has never seen group "a": it takes the one-call path.
    const viaOpen = (
      await post(
        first,
        notification({ groupKey: 'new-a', alerts: groupOf('a'), groupLabels: { team: 'web' } }),
      )
    ).incident_id!;
    // The second replica has seen group "b" (an alert of it resolved), so it applies the full intake.
    await post(
      second,
      notification({
        groupKey: 'new-b',
        alerts: [resolvedAlert({ name: 'Earlier', labels: { copy: 'b' } })],
      }),
    );
    const viaFull = (
      await post(
        second,
        notification({ groupKey: 'new-b', alerts: groupOf('b'), groupLabels: { team: 'web' } }),
      )
    ).incident_id!;
    assert.ok(viaOpen !== undefined && viaFull !== undefined && viaOpen !== viaFull);

    const opened = await everything(viaOpen);
    assert.deepEqual(opened, await everything(viaFull));
    // And what that is, spelled out.
    assert.equal(opened.status, 'triggered');
    assert.equal(opened.severity, 'critical');
    assert.deepEqual(
      opened.timeline.map(([type]) => type),
      ['triggered', 'alert_added', 'alert_added', 'alert_added'],
    );
    assert.deepEqual(
      opened.timeline.slice(1).map(([, detail]) => detail),
      ['InodesLow', 'DiskFull', 'DiskFilling'],
      'alert_added in the order of the notification',
    );
    assert.equal(opened.escalation.length, 1);
    assert.equal(opened.escalation[0]!.state, 'active');
    assert.equal(opened.escalation[0]!.due_at?.getTime(), clock.now().getTime());
    assert.deepEqual(opened.escalation[0]!.labels, { team: 'web' });
    assert.ok(opened.stored.every((row) => row.has_digest && row.linked && row.incident_id));
    assert.equal(opened.stored.length, 3);

    // The digests make the next notification a repeat on the first replica: nothing new on the timeline.
    await post(
      first,
      notification({ groupKey: 'new-a', alerts: groupOf('a'), groupLabels: { team: 'web' } }),
    );
    assert.deepEqual((await everything(viaOpen)).timeline, opened.timeline);
  });

  test('a policy created through the other replica routes the next new group at once', async () => {
    // The first replica routes (and remembers the policies) for a group of team "db"...
    const before = (
      await post(
        first,
        notification({
          groupKey: 'new-db-1',
          alerts: [firingAlert({ name: 'DbDown', labels: { team: 'db' } })],
        }),
      )
    ).incident_id!;
    assert.equal((await escalationOf(before))[0]!.policy_id, null, 'no policy yet: the built-in default');
    // ...then the database team gets a policy, through the second replica.
    const created = await second.request({
      method: 'POST',
      url: '/api/escalation-policies',
      as: admin,
      payload: { name: 'database team', matchers: ['team="db"'], steps: [{ targets: [{ type: 'admins' }] }] },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const after = (
      await post(
        first,
        notification({
          groupKey: 'new-db-2',
          alerts: [firingAlert({ name: 'DbSlow', labels: { team: 'db' } })],
        }),
      )
    ).incident_id!;
    const [escalation] = await escalationOf(after);
    assert.equal(escalation!.policy_id, created.body.id);
    assert.equal(escalation!.policy.name, 'database team');
  });

  test('a group the other replica already opened is joined, not opened again', async () => {
    const known = firingAlert({ name: 'Known' });
    const id = (await post(second, notification({ groupKey: 'new-seen-elsewhere', alerts: [known] })))
      .incident_id!;
    const added = firingAlert({ name: 'Added' });
    assert.equal(
      (await post(first, notification({ groupKey: 'new-seen-elsewhere', alerts: [known, added] })))
        .incident_id,
      id,
    );
    const timeline = (await get(`/api/incidents/${id}/timeline`)) as { type: string; detail: string }[];
    assert.deepEqual(
      timeline.map((event) => [event.type, event.detail]),
      [
        ['triggered', timeline[0]!.detail],
        ['alert_added', 'Known'],
        ['alert_added', 'Added'],
      ],
    );
  });

  test('an alert another group stored first: the group is not new, and the full intake moves the alert', async () => {
    const shared = firingAlert({ name: 'Shared', labels: { shared: 'yes' } });
    const elsewhere = (await post(second, notification({ groupKey: 'new-shared-1', alerts: [shared] })))
      .incident_id!;
    const here = (await post(first, notification({ groupKey: 'new-shared-2', alerts: [shared] })))
      .incident_id;
    assert.ok(
      here !== undefined && here !== elsewhere,
      'its own incident in the group it is notified in now',
    );
    const detail = await get(`/api/incidents/${here}`);
    assert.deepEqual(
      (detail.alerts as { name: string; group_key?: string }[]).map((alert) => alert.name),
      ['Shared'],
    );
  });

  test('a group whose old alert went stale: the new alert opens an incident and the stale one is presumed resolved', async () => {
    const old = firingAlert({ name: 'Forgotten' });
    const id = (await post(second, notification({ groupKey: 'new-stale', alerts: [old] }))).incident_id!;
    const resolve = await second.request({ method: 'POST', url: `/api/incidents/${id}/resolve`, as: user });
    assert.equal(resolve.status, 200);
    clock.advance(61 * 60_000);
    const fresh = firingAlert({ name: 'Fresh' });
    const opened = (await post(first, notification({ groupKey: 'new-stale', alerts: [fresh] }))).incident_id!;
    assert.ok(opened !== id);
    const alerts = (await get('/api/alerts?limit=500')) as {
      name: string;
      status: string;
      resolution_source?: string;
    }[];
    const forgotten = alerts.find((alert) => alert.name === 'Forgotten');
    assert.equal(forgotten?.status, 'resolved');
    assert.equal(forgotten?.resolution_source, 'expiry');
    assert.equal(alerts.find((alert) => alert.name === 'Fresh')?.status, 'firing');
  });

  test('both replicas receive a new group at once (an Alertmanager HA pair): one incident, each alert added once', async () => {
    const alerts = [firingAlert({ name: 'PairA' }), firingAlert({ name: 'PairB' })];
    const payload = notification({ groupKey: 'new-ha-pair', alerts });
    const [a, b] = await Promise.all([post(first, payload), post(second, payload)]);
    assert.ok(a.incident_id !== undefined);
    assert.equal(a.incident_id, b.incident_id);
    const open = (await get('/api/incidents?limit=500')) as { id: number; group_key: string }[];
    assert.equal(open.filter((row) => row.group_key === 'new-ha-pair').length, 1);
    const timeline = (await get(`/api/incidents/${a.incident_id}/timeline`)) as { type: string }[];
    assert.deepEqual(
      timeline.map((event) => event.type),
      ['triggered', 'alert_added', 'alert_added'],
    );
  });
});
