import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  createTestPglite,
  forEachDatabase,
  ManualClock,
  startTestApp,
  type TestApp,
  type TestUser,
  firingAlert,
  notification,
  resolvedAlert,
  type WebhookPayloadJson,
} from '@terdut/test-support';

forEachDatabase('alert intake (POST /api/webhook/alertmanager)', (database) => {
  let server: TestApp;
  let alertmanager: TestUser;
  let member: TestUser;
  const clock = new ManualClock('2026-07-27T10:00:00Z');

  before(async () => {
    server = await startTestApp(database(), { clock });
    alertmanager = await server.createUser('alertmanager-intake', 'member');
    member = await server.createUser('intake-member', 'member');
  });
  after(() => server.close());

  const post = (payload: unknown) =>
    server.request({
      method: 'POST',
      url: '/api/webhook/alertmanager',
      payload: payload as object,
      as: alertmanager,
    });
  const incident = async (id: number) =>
    (await server.request({ method: 'GET', url: `/api/incidents/${id}`, as: member })).body;
  const timeline = async (id: number) =>
    (await server.request({ method: 'GET', url: `/api/incidents/${id}/timeline`, as: member })).body as any[];
  const incidentsOfGroup = async (groupKey: string) => {
    const all = [];
    for (const query of ['', '?status=resolved']) {
      const list = await server.request({ method: 'GET', url: `/api/incidents${query}`, as: member });
      all.push(...(list.body as any[]).filter((item) => item.group_key === groupKey));
    }
    return all;
  };
  const countRows = async (table: string) =>
    (await database().query<{ count: number }>(`SELECT count(*)::int AS count FROM ${table}`)).rows[0]!.count;

  test('without an API key the webhook is refused with 401', async () => {
    const response = await server.request({
      method: 'POST',
      url: '/api/webhook/alertmanager',
      payload: notification({ alerts: [firingAlert()] }),
    });
    assert.equal(response.status, 401);
  });

  test("Alertmanager's basic_auth is refused with 401 saying to send the key as a Bearer credential", async () => {
    const response = await server.request({
      method: 'POST',
      url: '/api/webhook/alertmanager',
      headers: {
        authorization: `Basic ${Buffer.from(`alertmanager:${alertmanager.key}`).toString('base64')}`,
      },
      payload: notification({ alerts: [firingAlert()] }),
    });
    assert.equal(response.status, 401);
    assert.match(
      response.body.error,
      /Basic authentication is not accepted; send Authorization: Bearer <api key>/,
    );
  });

  test('a version other than "4" is refused with 400 naming the field, and nothing is stored', async () => {
    const before = await countRows('alerts');
    const response = await post(
      notification({ groupKey: 'v5', alerts: [firingAlert({ name: 'V5' })], version: '5' }),
    );
    assert.equal(response.status, 400);
    assert.match(response.body.error, /"version"/);
    assert.match(response.body.error, /"4"/);
    assert.equal(await countRows('alerts'), before);
  });

  test('malformed payloads get 400 with the reason', async () => {
    const missingFingerprint = notification({ groupKey: 'bad', alerts: [firingAlert()] });
    delete (missingFingerprint.alerts[0] as Partial<(typeof missingFingerprint.alerts)[0]>).fingerprint;
    let response = await post(missingFingerprint);
    assert.equal(response.status, 400);
    assert.match(response.body.error, /fingerprint/);

    response = await post(
      notification({ groupKey: 'bad', alerts: [firingAlert({ startsAt: 'yesterday' })] }),
    );
    assert.equal(response.status, 400);
    assert.match(response.body.error, /alerts\.0\.startsAt/);

    // RFC 3339 has four-digit years: this end is in the year 10000 in UTC.
    response = await post(
      notification({
        groupKey: 'bad',
        alerts: [firingAlert(), { ...firingAlert({ name: 'Far' }), endsAt: '9999-12-31T23:59:59-05:00' }],
      }),
    );
    assert.equal(response.status, 400);
    assert.match(response.body.error, /alerts\.1\.endsAt.*year 10000/);

    // Not 2 March: a stored start that was never sent would open another occurrence.
    response = await post(
      notification({ groupKey: 'bad', alerts: [firingAlert({ startsAt: '2026-02-30T01:00:00Z' })] }),
    );
    assert.equal(response.status, 400);
    assert.match(response.body.error, /alerts\.0\.startsAt.*not a real date/);

    response = await post({ version: '4', status: 'firing', receiver: 'x', alerts: [] });
    assert.equal(response.status, 400);
    assert.match(response.body.error, /groupKey/);

    response = await server.request({
      method: 'POST',
      url: '/api/webhook/alertmanager',
      headers: { 'content-type': 'application/json' },
      payload: '{"version": "4", ',
      as: alertmanager,
    });
    assert.equal(response.status, 400);
  });

  test('an alert starting over an hour ahead of the server clock is 400; its real firing and resolve are applied', async () => {
    const groupKey = '{}:{alertname="Skewed"}';
    const at = (minutesAhead: number) => new Date(clock.now().getTime() + minutesAhead * 60_000);
    const skewed = await post(
      notification({ groupKey, alerts: [firingAlert({ name: 'Skewed', startsAt: at(24 * 60) })] }),
    );
    assert.equal(skewed.status, 400);
    assert.match(
      skewed.body.error,
      /"alerts\.0\.startsAt" .* is 24h ahead of this server's clock .*; at most 1h is accepted: check the clock/,
    );
    // Alertmanager's own API starts an alert posted with only an endsAt at that endsAt (api/v2/api.go).
    assert.match(skewed.body.error, /posted it to Alertmanager with an endsAt but no startsAt/);

    const real = await post(
      notification({ groupKey, alerts: [firingAlert({ name: 'Skewed', startsAt: at(-1) })] }),
    );
    assert.equal(real.status, 200);
    const resolved = await post(
      notification({
        groupKey,
        alerts: [resolvedAlert({ name: 'Skewed', startsAt: at(-1), endsAt: clock.now() })],
      }),
    );
    assert.equal(resolved.status, 200);
    const incident = await server.request({
      method: 'GET',
      url: `/api/incidents/${real.body.incident_id}`,
      as: alertmanager,
    });
    assert.equal(incident.body.status, 'resolved');

    // A clock a few minutes fast is within the tolerance.
    const fast = await post(
      notification({
        groupKey: '{}:{alertname="Fast"}',
        alerts: [firingAlert({ name: 'Fast', startsAt: at(30) })],
      }),
    );
    assert.equal(fast.status, 200);
  });

  test('unknown keys (notification_reason, routeLabels, future alert fields) are ignored', async () => {
    const payload = notification({
      groupKey: 'unknown-keys',
      alerts: [{ ...firingAlert({ name: 'UnknownKeys' }), someFutureField: { nested: true } }],
      extra: { notification_reason: 'repeat', routeLabels: { team: 'db' }, somethingNew: [1, 2] },
    });
    const response = await post(payload);
    assert.equal(response.status, 200);
    assert.equal(response.body.status, 'accepted');
    assert.equal(typeof response.body.incident_id, 'number');
  });

  test('endsAt 0001-01-01T00:00:00Z means not ended: ends_at is omitted, not null', async () => {
    const response = await post(
      notification({ groupKey: 'zero-ends', alerts: [firingAlert({ name: 'ZeroEnds' })] }),
    );
    const detail = await incident(response.body.incident_id);
    const [alert] = detail.alerts;
    assert.equal(alert.status, 'firing');
    assert.equal('ends_at' in alert, false);
    assert.equal('resolution_source' in alert, false);
    assert.equal('archived_at' in alert, false);
    assert.deepEqual(Object.keys(alert).sort(), [
      'annotations',
      'fingerprint',
      'generator_url',
      'id',
      'incident_id',
      'labels',
      'name',
      'received_at',
      'starts_at',
      'status',
    ]);
    assert.equal(alert.name, 'ZeroEnds');
    assert.equal(alert.starts_at, '2026-07-27T09:55:00.000Z');
    assert.equal(alert.received_at, clock.now().toISOString());
  });

  test('redelivering the same payload changes nothing: same incident, same timeline, same timestamps', async () => {
    const payload = notification({
      groupKey: 'redelivery',
      alerts: [
        firingAlert({ name: 'Redelivered', severity: 'warning' }),
        firingAlert({ name: 'Redelivered2' }),
      ],
    });
    const first = await post(payload);
    assert.equal(first.status, 200);
    const id = first.body.incident_id;
    const incidentBefore = await incident(id);
    const timelineBefore = await timeline(id);
    assert.deepEqual(
      timelineBefore.map((event) => event.type),
      ['triggered', 'alert_added', 'alert_added'],
    );

    clock.advance(5 * 60_000);
    const again = await post(payload);
    assert.equal(again.status, 200);
    assert.equal(again.body.incident_id, id);
    // Only "last seen" (the alerts' received_at) moves: the notification did carry them again.
    const after = await incident(id);
    assert.deepEqual(
      after.alerts.map((alert: { received_at: string }) => alert.received_at),
      [clock.now().toISOString(), clock.now().toISOString()],
    );
    const withoutLastSeen = (value: any) => ({
      ...value,
      alerts: value.alerts.map(({ received_at: _, ...alert }: { received_at: string }) => alert),
    });
    assert.deepEqual(withoutLastSeen(after), withoutLastSeen(incidentBefore));
    assert.deepEqual(await timeline(id), timelineBefore);
    assert.equal((await incidentsOfGroup('redelivery')).length, 1);
  });

  test('duplicates from an Alertmanager HA pair arriving together make one incident and one set of events', async () => {
    const payload = notification({
      groupKey: 'ha-pair',
      alerts: [firingAlert({ name: 'HaPair' }), firingAlert({ name: 'HaPair', labels: { instance: 'b' } })],
    });
    const [a, b] = await Promise.all([post(payload), post(structuredClone(payload))]);
    assert.equal(a.status, 200);
    assert.equal(b.status, 200);
    assert.equal(a.body.incident_id, b.body.incident_id);
    assert.equal((await incidentsOfGroup('ha-pair')).length, 1);
    assert.deepEqual(
      (await timeline(a.body.incident_id)).map((event) => event.type),
      ['triggered', 'alert_added', 'alert_added'],
    );
  });

  test('many alerts of one group make one incident with all of them', async () => {
    const alerts = Array.from({ length: 25 }, (_, index) =>
      firingAlert({ name: 'Many', labels: { instance: `host-${index}` } }),
    );
    const response = await post(notification({ groupKey: 'many', alerts }));
    const detail = await incident(response.body.incident_id);
    assert.equal(detail.alerts.length, 25);
    assert.ok(detail.alerts.every((alert: any) => alert.incident_id === detail.id));
  });

  test('severity is the high-water mark of the alerts and is never lowered', async () => {
    const warning = firingAlert({ name: 'Sev', severity: 'warning', labels: { instance: 'w' } });
    const critical = firingAlert({ name: 'Sev', severity: 'critical', labels: { instance: 'c' } });
    const info = firingAlert({ name: 'Sev', severity: 'info', labels: { instance: 'i' } });
    const first = await post(notification({ groupKey: 'severity', alerts: [warning] }));
    const id = first.body.incident_id;
    assert.equal((await incident(id)).severity, 'warning');

    await post(notification({ groupKey: 'severity', alerts: [warning, critical] }));
    assert.equal((await incident(id)).severity, 'critical');

    // The critical alert resolves and a lesser one joins: still critical.
    await post(
      notification({
        groupKey: 'severity',
        alerts: [
          warning,
          resolvedAlert({ name: 'Sev', severity: 'critical', labels: { instance: 'c' } }),
          info,
        ],
      }),
    );
    const detail = await incident(id);
    assert.equal(detail.status, 'triggered');
    assert.equal(detail.severity, 'critical');
  });

  test('an incident without any severity label has no severity field', async () => {
    const response = await post(
      notification({ groupKey: 'no-severity', alerts: [firingAlert({ name: 'NoSev' })] }),
    );
    assert.equal('severity' in (await incident(response.body.incident_id)), false);
  });

  test('when every alert is resolved the incident resolves itself (resolution_source alerts)', async () => {
    const a = { name: 'Auto', labels: { instance: 'a' } };
    const b = { name: 'Auto', labels: { instance: 'b' } };
    const opened = await post(notification({ groupKey: 'auto', alerts: [firingAlert(a), firingAlert(b)] }));
    const id = opened.body.incident_id;

    clock.advance(60_000);
    const partly = await post(notification({ groupKey: 'auto', alerts: [resolvedAlert(a), firingAlert(b)] }));
    assert.equal(partly.body.incident_id, id);
    assert.equal((await incident(id)).status, 'triggered');

    clock.advance(60_000);
    const all = await post(notification({ groupKey: 'auto', alerts: [resolvedAlert(a), resolvedAlert(b)] }));
    assert.equal(all.status, 200);
    assert.equal('incident_id' in all.body, false);
    const detail = await incident(id);
    assert.equal(detail.status, 'resolved');
    assert.equal(detail.resolution_source, 'alerts');
    assert.equal(detail.resolved_at, clock.now().toISOString());
    assert.ok(
      detail.alerts.every((alert: any) => alert.resolution_source === 'alertmanager' && alert.ends_at),
    );
    const events = await timeline(id);
    assert.deepEqual(
      events.map((event) => event.type),
      ['triggered', 'alert_added', 'alert_added', 'alert_resolved', 'alert_resolved', 'resolved'],
    );
    const resolved = events.at(-1);
    assert.equal('user_id' in resolved, false, 'the server resolved it: no user');
    assert.equal('username' in resolved, false);

    // The resolved notification repeated changes nothing.
    clock.advance(60_000);
    await post(notification({ groupKey: 'auto', alerts: [resolvedAlert(a), resolvedAlert(b)] }));
    assert.equal((await timeline(id)).length, events.length);
    assert.equal((await incidentsOfGroup('auto')).length, 1);

    // The group fires again (a new occurrence: later startsAt): a new incident, the old one stays closed.
    const again = await post(
      notification({
        groupKey: 'auto',
        alerts: [firingAlert({ ...a, startsAt: clock.now() }), resolvedAlert(b)],
      }),
    );
    assert.notEqual(again.body.incident_id, id);
    assert.equal((await incident(id)).status, 'resolved');
    const reopened = await incident(again.body.incident_id);
    assert.equal(reopened.status, 'triggered');
    assert.equal(reopened.alerts.length, 1, 'only the alert that fired again');
  });

  test('manual resolve is terminal; alerts firing through it open nothing, new occurrences open a new incident', async () => {
    const steady = { name: 'Manual', labels: { instance: 'steady' } };
    const flappy = { name: 'Manual', labels: { instance: 'flappy' } };
    const opened = await post(
      notification({ groupKey: 'manual', alerts: [firingAlert(steady), firingAlert(flappy)] }),
    );
    const id = opened.body.incident_id;
    clock.advance(60_000);
    const resolve = await server.request({ method: 'POST', url: `/api/incidents/${id}/resolve`, as: member });
    assert.equal(resolve.status, 200);
    assert.equal(resolve.body.resolution_source, 'manual');

    // Repeat notifications for alerts that kept firing straight through the resolve.
    clock.advance(60_000);
    const repeat = await post(
      notification({ groupKey: 'manual', alerts: [firingAlert(steady), firingAlert(flappy)] }),
    );
    assert.equal(repeat.status, 200);
    assert.equal('incident_id' in repeat.body, false);
    assert.equal((await incidentsOfGroup('manual')).length, 1);
    assert.equal((await incident(id)).status, 'resolved');

    // One of them resolves: noted on the closed incident, which stays closed.
    clock.advance(60_000);
    await post(notification({ groupKey: 'manual', alerts: [firingAlert(steady), resolvedAlert(flappy)] }));
    assert.equal((await timeline(id)).at(-1).type, 'alert_resolved');
    assert.equal((await incident(id)).status, 'resolved');

    // It starts firing again after the resolve: a new occurrence opens a new incident.
    clock.advance(60_000);
    const refire = await post(
      notification({
        groupKey: 'manual',
        alerts: [firingAlert(steady), firingAlert({ ...flappy, startsAt: clock.now() })],
      }),
    );
    assert.equal(typeof refire.body.incident_id, 'number');
    assert.notEqual(refire.body.incident_id, id);
    const second = await incident(refire.body.incident_id);
    assert.equal(second.status, 'triggered');
    const flappyAlert = second.alerts.find((alert: any) => alert.labels.instance === 'flappy');
    assert.equal(flappyAlert.starts_at, clock.now().toISOString());
    assert.equal(flappyAlert.incident_id, second.id, 'the alert row points at its newest incident');
    // The old incident still lists its own alerts.
    assert.equal((await incident(id)).alerts.length, 2);

    // A fingerprint new to the group after a manual resolve opens a new incident too.
    await server.request({ method: 'POST', url: `/api/incidents/${second.id}/resolve`, as: member });
    clock.advance(60_000);
    const newcomer = await post(
      notification({
        groupKey: 'manual',
        alerts: [firingAlert(steady), firingAlert({ name: 'Manual', labels: { instance: 'newcomer' } })],
      }),
    );
    assert.equal(typeof newcomer.body.incident_id, 'number');
    assert.equal((await incidentsOfGroup('manual')).length, 3);
  });

  test('an alert resolved by Alertmanager is not revived by a late firing duplicate of the same occurrence', async () => {
    const spec = { name: 'LateDuplicate' };
    const opened = await post(notification({ groupKey: 'late-dup', alerts: [firingAlert(spec)] }));
    await post(notification({ groupKey: 'late-dup', alerts: [resolvedAlert(spec)] }));
    const late = await post(notification({ groupKey: 'late-dup', alerts: [firingAlert(spec)] }));
    assert.equal('incident_id' in late.body, false);
    const detail = await incident(opened.body.incident_id);
    assert.equal(detail.status, 'resolved');
    assert.equal(detail.alerts[0].status, 'resolved');
  });

  test('an alert Alertmanager resolved by timeout that Prometheus sends again later (same startsAt) opens a new incident', async () => {
    // Prometheus could not reach Alertmanager for longer than the alert's endsAt: Alertmanager
    // resolved it; once reachable, Prometheus sends it again with its old startsAt.
    const spec = { name: 'Partitioned', labels: { severity: 'critical' } };
    const opened = await post(notification({ groupKey: 'partition', alerts: [firingAlert(spec)] }));
    await post(notification({ groupKey: 'partition', alerts: [resolvedAlert(spec)] }));
    clock.advance(9 * 60_000);
    const duplicate = await post(notification({ groupKey: 'partition', alerts: [firingAlert(spec)] }));
    assert.equal('incident_id' in duplicate.body, false, 'within 10 minutes: a late duplicate');
    clock.advance(2 * 60_000);
    const again = await post(notification({ groupKey: 'partition', alerts: [firingAlert(spec)] }));
    assert.equal(typeof again.body.incident_id, 'number', 'eleven minutes after the resolve it fires again');
    assert.notEqual(again.body.incident_id, opened.body.incident_id);
    const detail = await incident(again.body.incident_id);
    assert.equal(detail.status, 'triggered');
    assert.equal(detail.severity, 'critical');
    assert.deepEqual(
      detail.alerts.map((alert: { status: string }) => alert.status),
      ['firing'],
    );
    assert.equal((await incident(opened.body.incident_id)).status, 'resolved');
  });

  // Alertmanager keeps the earliest start it hears of an alert: when the
  // Prometheus replica that saw it first is heard from second, the start
  // moves earlier. That was taken for an older occurrence and ignored, its
  // resolve too: the incident stayed open (and paging) for hours.
  test('an occurrence whose start Alertmanager moved earlier stays one: its repeats keep it fresh and its resolve resolves the incident', async () => {
    const groupKey = 'earlier-start';
    const known = new Date(clock.now().getTime() - 60_000);
    const earlier = new Date(known.getTime() - 45_000);
    const spec = (startsAt: Date) => ({ name: 'EarlierStart', labels: { instance: 'db-1' }, startsAt });
    const opened = await post(notification({ groupKey, alerts: [firingAlert(spec(known))] }));
    const id = opened.body.incident_id as number;

    // An older occurrence's late resolve (it ended before the known one began) is still ignored.
    const older = {
      ...spec(new Date(known.getTime() - 600_000)),
      endsAt: new Date(known.getTime() - 300_000),
    };
    await post(notification({ groupKey, alerts: [resolvedAlert(older)] }));
    assert.equal((await incident(id)).alerts[0].status, 'firing');

    // Firing with the earlier start, after more than a late duplicate's delay: "last seen" moves.
    clock.advance(11 * 60_000);
    const repeat = await post(notification({ groupKey, alerts: [firingAlert(spec(earlier))] }));
    assert.equal(repeat.body.incident_id, id);
    const refreshed = (await incident(id)).alerts[0];
    assert.equal(refreshed.received_at, clock.now().toISOString(), 'the repeat refreshed the alert');
    assert.equal(refreshed.starts_at, known.toISOString(), 'the occurrence keeps the start first known');

    clock.advance(60_000);
    const resolved = await post(
      notification({ groupKey, alerts: [resolvedAlert({ ...spec(earlier), endsAt: clock.now() })] }),
    );
    assert.equal(resolved.status, 200);
    const detail = await incident(id);
    assert.equal(detail.status, 'resolved', 'the resolve with the earlier start resolved the incident');
    assert.equal(detail.resolution_source, 'alerts');
    assert.equal(detail.alerts[0].status, 'resolved');
    assert.deepEqual(
      (await timeline(id)).filter((event) => event.type.startsWith('alert_')).map((event) => event.type),
      ['alert_added', 'alert_resolved'],
    );
    assert.equal((await incidentsOfGroup(groupKey)).length, 1);

    // Alertmanager resolved it; firing with that start soon after is a late duplicate, later it fires again.
    clock.advance(5 * 60_000);
    const late = await post(notification({ groupKey, alerts: [firingAlert(spec(earlier))] }));
    assert.equal('incident_id' in late.body, false, 'within 10 minutes of the resolve: a late duplicate');
    clock.advance(6 * 60_000);
    const again = await post(notification({ groupKey, alerts: [firingAlert(spec(earlier))] }));
    assert.equal(typeof again.body.incident_id, 'number', 'eleven minutes after the resolve it fires again');
    assert.notEqual(again.body.incident_id, id);
  });

  test("a group key that names a missed heartbeat's incident is refused, so no notification can join or resolve it", async () => {
    const response = await post(
      notification({ groupKey: 'heartbeat:1', alerts: [resolvedAlert({ name: 'Watchdog' })] }),
    );
    assert.equal(response.status, 400);
    assert.match(response.body.error, /^field "groupKey" must not start with "heartbeat:"/);
  });

  test('alerts from different groups make different incidents', async () => {
    const one = await post(notification({ groupKey: 'group-one', alerts: [firingAlert({ name: 'One' })] }));
    const two = await post(notification({ groupKey: 'group-two', alerts: [firingAlert({ name: 'Two' })] }));
    assert.notEqual(one.body.incident_id, two.body.incident_id);
  });

  test('the incident is titled after the common summary and carries the group labels', async () => {
    const payload: WebhookPayloadJson = notification({
      groupKey: 'titled',
      groupLabels: { alertname: 'DiskFull', cluster: 'prod' },
      alerts: [
        firingAlert({
          name: 'DiskFull',
          labels: { cluster: 'prod' },
          annotations: { summary: 'Disk is full' },
        }),
      ],
    });
    const response = await post(payload);
    const detail = await incident(response.body.incident_id);
    assert.equal(detail.title, 'Disk is full');
    assert.deepEqual(detail.group_labels, { alertname: 'DiskFull', cluster: 'prod' });
    assert.equal(detail.group_key, 'titled');
  });

  test('notifications, alerts and incidents are counted in /metrics', async () => {
    const metrics = (await server.request({ method: 'GET', url: '/metrics' })).body as string;
    assert.match(metrics, /terdut_webhook_notifications_total\{outcome="accepted"\} [1-9]/);
    assert.match(metrics, /terdut_webhook_notifications_total\{outcome="rejected"\} [1-9]/);
    assert.match(metrics, /terdut_alerts_received_total\{status="firing"\} [1-9]/);
    assert.match(metrics, /terdut_alerts_received_total\{status="resolved"\} [1-9]/);
    assert.match(metrics, /terdut_incidents_opened_total [1-9]/);
    assert.match(metrics, /terdut_incidents_resolved_total\{source="alerts"\} [1-9]/);
    assert.match(metrics, /terdut_incidents_resolved_total\{source="manual"\} [1-9]/);
  });
});

test('a notification that fails midway answers 500 (Alertmanager retries) and leaves nothing behind', async () => {
  const db = await createTestPglite();
  const server = await startTestApp(db);
  try {
    const alertmanager = await server.createUser('alertmanager-faults', 'member');
    const payload = notification({ groupKey: 'faulty', alerts: [firingAlert({ name: 'Faulty' })] });
    const post = () =>
      server.request({ method: 'POST', url: '/api/webhook/alertmanager', payload, as: alertmanager });
    // The timeline is written last in the transaction: break it.
    await db.exec('ALTER TABLE incident_events RENAME TO incident_events_away');
    const failed = await post();
    assert.equal(failed.status, 500);
    assert.doesNotMatch(failed.body.error, /incident_events/, 'no SQL details leak to the client');
    const count = async (table: string) =>
      (await db.query<{ count: number }>(`SELECT count(*)::int AS count FROM ${table}`)).rows[0]!.count;
    assert.equal(await count('alerts'), 0, 'the alert upsert was rolled back');
    assert.equal(await count('incidents'), 0);
    const metrics = (await server.request({ method: 'GET', url: '/metrics' })).body as string;
    assert.match(metrics, /terdut_webhook_notifications_total\{outcome="failed"\} 1/);

    // Alertmanager's retry succeeds once the fault is gone.
    await db.exec('ALTER TABLE incident_events_away RENAME TO incident_events');
    const retried = await post();
    assert.equal(retried.status, 200);
    assert.equal(await count('incidents'), 1);
  } finally {
    await server.close();
    await db.close();
  }
});
