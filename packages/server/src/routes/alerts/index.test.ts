import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  forEachDatabase,
  ManualClock,
  startTestApp,
  type TestApp,
  type TestUser,
  firingAlert,
  notification,
  resolvedAlert,
} from '@terdut/test-support';

forEachDatabase('alerts API', (database) => {
  let server: TestApp;
  let user: TestUser;
  const clock = new ManualClock('2026-07-27T10:00:00Z');

  before(async () => {
    server = await startTestApp(database(), { clock });
    user = await server.createUser('alerts-reader', 'member');
  });
  after(() => server.close());

  const post = (payload: object) =>
    server.request({ method: 'POST', url: '/api/webhook/alertmanager', payload, as: user });
  const get = (url: string) => server.request({ method: 'GET', url, as: user });

  test('the alert endpoints refuse callers without credentials with 401', async () => {
    assert.equal((await server.request({ method: 'GET', url: '/api/alerts' })).status, 401);
    assert.equal((await server.request({ method: 'GET', url: '/api/alerts/1' })).status, 401);
  });

  test('an alert has exactly the contract fields; a resolved one has ends_at and resolution_source', async () => {
    const spec = {
      name: 'Fields',
      labels: { instance: 'db-1' },
      annotations: { summary: 'sum', description: 'desc' },
      generatorURL: 'http://prom/graph',
    };
    const opened = await post(notification({ groupKey: 'alert-fields', alerts: [firingAlert(spec)] }));
    const firing = (await get(`/api/incidents/${opened.body.incident_id}`)).body.alerts[0];
    const one = await get(`/api/alerts/${firing.id}`);
    assert.equal(one.status, 200);
    assert.deepEqual(one.body, {
      id: firing.id,
      fingerprint: firingAlert(spec).fingerprint,
      name: 'Fields',
      status: 'firing',
      labels: { alertname: 'Fields', instance: 'db-1' },
      annotations: { summary: 'sum', description: 'desc' },
      starts_at: '2026-07-27T09:55:00.000Z',
      generator_url: 'http://prom/graph',
      received_at: clock.now().toISOString(),
      incident_id: opened.body.incident_id,
    });

    clock.advance(60_000);
    await post(
      notification({
        groupKey: 'alert-fields',
        alerts: [resolvedAlert({ ...spec, endsAt: '2026-07-27T10:00:30Z' })],
      }),
    );
    const resolved = (await get(`/api/alerts/${firing.id}`)).body;
    assert.equal(resolved.status, 'resolved');
    assert.equal(resolved.ends_at, '2026-07-27T10:00:30.000Z');
    assert.equal(resolved.resolution_source, 'alertmanager');
    assert.equal(
      resolved.received_at,
      clock.now().toISOString(),
      'received_at is when a notification last carried it',
    );
  });

  test('received_at moves with every notification that carries the alert, not only with a new occurrence', async () => {
    const spec = { alertname: 'Repeated', labels: { instance: 'db-2' }, startsAt: '2026-07-27T09:55:00Z' };
    const opened = await post(notification({ groupKey: 'alert-repeat', alerts: [firingAlert(spec)] }));
    const alertId = (await get(`/api/incidents/${opened.body.incident_id}`)).body.alerts[0].id;
    const firstSeen = clock.now().toISOString();
    // Alertmanager repeats the unchanged, still firing alert (repeat_interval).
    clock.advance(4 * 3_600_000);
    await post(notification({ groupKey: 'alert-repeat', alerts: [firingAlert(spec)] }));
    const repeated = (await get(`/api/alerts/${alertId}`)).body;
    assert.equal(repeated.received_at, clock.now().toISOString());
    assert.notEqual(repeated.received_at, firstSeen);
    assert.equal(repeated.starts_at, '2026-07-27T09:55:00.000Z', 'the occurrence is the same one');
  });

  test('GET /api/alerts/{id}: 404 for no such alert, 400 for a malformed id', async () => {
    const missing = await get('/api/alerts/999999');
    assert.equal(missing.status, 404);
    assert.match(missing.body.error, /alert 999999/);
    assert.equal((await get('/api/alerts/x')).status, 400);
  });

  test('the list is newest first and filters by status; limit caps it', async () => {
    clock.advance(60_000);
    await post(notification({ groupKey: 'alert-list-a', alerts: [firingAlert({ name: 'ListA' })] }));
    clock.advance(60_000);
    await post(notification({ groupKey: 'alert-list-b', alerts: [firingAlert({ name: 'ListB' })] }));
    const newest = (await get('/api/alerts?limit=2')).body as any[];
    assert.deepEqual(
      newest.map((alert) => alert.name),
      ['ListB', 'ListA'],
    );

    await post(notification({ groupKey: 'alert-list-a', alerts: [resolvedAlert({ name: 'ListA' })] }));
    const firing = (await get('/api/alerts?status=firing')).body as any[];
    assert.ok(firing.length > 0 && firing.every((alert) => alert.status === 'firing'));
    assert.equal(
      firing.some((alert) => alert.name === 'ListA'),
      false,
    );
    const resolved = (await get('/api/alerts?status=resolved')).body as any[];
    assert.ok(resolved.some((alert) => alert.name === 'ListA'));
    assert.ok(resolved.every((alert) => alert.status === 'resolved'));

    assert.equal((await get('/api/alerts?status=pending')).status, 400);
    assert.equal((await get('/api/alerts?limit=0')).status, 400);
    assert.equal((await get('/api/alerts?limit=5000')).status, 400);
  });

  test('archiving an incident archives its alerts: archived=true lists only those, the default only the rest', async () => {
    const opened = await post(
      notification({ groupKey: 'alert-archive', alerts: [firingAlert({ name: 'Arch' })] }),
    );
    const id = opened.body.incident_id;
    await server.request({ method: 'POST', url: `/api/incidents/${id}/resolve`, as: user });
    await server.request({ method: 'POST', url: `/api/incidents/${id}/archive`, as: user });
    const archived = (await get('/api/alerts?archived=true')).body as any[];
    assert.ok(archived.some((alert) => alert.name === 'Arch'));
    assert.ok(archived.every((alert) => typeof alert.archived_at === 'string'));
    const current = (await get('/api/alerts')).body as any[];
    assert.equal(
      current.some((alert) => alert.name === 'Arch'),
      false,
    );
    assert.ok(current.every((alert) => !('archived_at' in alert)));

    // It fires again: a new occurrence in a new incident, no longer archived.
    clock.advance(60_000);
    await post(
      notification({
        groupKey: 'alert-archive',
        alerts: [firingAlert({ name: 'Arch', startsAt: clock.now() })],
      }),
    );
    const again = ((await get('/api/alerts')).body as any[]).find((alert) => alert.name === 'Arch');
    assert.equal(again.status, 'firing');
    assert.notEqual(again.incident_id, id);
    assert.equal('archived_at' in again, false);
  });
});
