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

forEachDatabase('retention: resolved incidents older than TERDUT_RETENTION are pruned', (database) => {
  let server: TestApp;
  let replica: TestApp;
  let user: TestUser;
  const clock = new ManualClock('2026-07-27T10:00:00Z');

  before(async () => {
    const config = testConfig({ TERDUT_RETENTION: '48h', TERDUT_ALERT_STALE_AFTER: '1000h' });
    server = await startTestApp(database(), { clock, config });
    replica = await startTestApp(database(), { clock, config });
    user = await server.createUser('retention-user', 'member');
  });
  after(async () => {
    await replica.close();
    await server.close();
  });

  const post = (payload: object) =>
    server.request({ method: 'POST', url: '/api/webhook/alertmanager', payload, as: user });
  const status = async (url: string) => (await server.request({ method: 'GET', url, as: user })).status;
  const alertIdsOf = async (id: number) =>
    (
      (await server.request({ method: 'GET', url: `/api/incidents/${id}`, as: user })).body.alerts as any[]
    ).map((alert) => alert.id as number);
  const count = async (sql: string, params: unknown[]) =>
    (await database().query<{ count: number }>(sql, params)).rows[0]!.count;

  test('old resolved incidents go with their timeline and alerts; open, recent and still-referenced stay', async () => {
    // Resolved long ago, with an alert of its own.
    const old = (await post(notification({ groupKey: 'ret-old', alerts: [firingAlert({ name: 'Old' })] })))
      .body.incident_id;
    await post(notification({ groupKey: 'ret-old', alerts: [resolvedAlert({ name: 'Old' })] }));
    const [oldAlert] = await alertIdsOf(old);

    // Resolved by hand long ago, but its alert fired again and belongs to a newer incident.
    const shared = { name: 'Shared' };
    const before = (await post(notification({ groupKey: 'ret-shared', alerts: [firingAlert(shared)] }))).body
      .incident_id;
    await server.request({ method: 'POST', url: `/api/incidents/${before}/resolve`, as: user });
    const [sharedAlert] = await alertIdsOf(before);

    // Open for a long time.
    const open = (await post(notification({ groupKey: 'ret-open', alerts: [firingAlert({ name: 'Open' })] })))
      .body.incident_id;

    clock.advance(47 * HOUR);
    const newer = (
      await post(
        notification({ groupKey: 'ret-shared', alerts: [firingAlert({ ...shared, startsAt: clock.now() })] }),
      )
    ).body.incident_id;
    const recent = (
      await post(notification({ groupKey: 'ret-recent', alerts: [firingAlert({ name: 'Recent' })] }))
    ).body.incident_id;
    await server.request({ method: 'POST', url: `/api/incidents/${recent}/resolve`, as: user });

    clock.advance(2 * HOUR);
    const result = await server.app.services.retention.prune();
    assert.equal(result.ran, true);
    assert.equal(result.incidents, 2);

    assert.equal(await status(`/api/incidents/${old}`), 404);
    assert.equal(await status(`/api/incidents/${before}`), 404);
    assert.equal(
      await count('SELECT count(*)::int AS count FROM incident_events WHERE incident_id = ANY($1)', [
        [old, before],
      ]),
      0,
    );
    assert.equal(await status(`/api/alerts/${oldAlert}`), 404, 'an alert no incident refers to is deleted');
    assert.equal(await status(`/api/alerts/${sharedAlert}`), 200, 'an alert of a newer incident stays');
    assert.deepEqual(await alertIdsOf(newer), [sharedAlert]);
    assert.equal(await status(`/api/incidents/${open}`), 200, 'open incidents are never pruned');
    assert.equal(await status(`/api/incidents/${recent}`), 200, 'recently resolved incidents stay');

    // Nothing left to do.
    assert.equal((await server.app.services.retention.prune()).incidents, 0);
  });

  test('a backlog of more unreferenced alerts than one batch holds is pruned whole', async () => {
    // 12,000 resolved alerts no incident refers to, last seen long ago (an
    // upgrade's first prune, or a storm's alerts once their incidents went).
    const lastSeen = new Date(clock.now().getTime() - 100 * HOUR);
    await database().query(
      `INSERT INTO alerts (fingerprint, group_key, name, status, labels, annotations, starts_at, ends_at,
                           received_at, last_seen_at)
       SELECT 'backlog-' || n, 'ret-backlog', 'Backlog', 'resolved', '{}', '{}', $1, $1, $1, $1
         FROM generate_series(1, 12000) AS n`,
      [lastSeen],
    );
    const result = await server.app.services.retention.prune();
    assert.ok(result.alerts >= 12_000, `pruned ${result.alerts} alerts`);
    assert.equal(
      await count(`SELECT count(*)::int AS count FROM alerts WHERE group_key = $1`, ['ret-backlog']),
      0,
    );
  });

  test('two replicas pruning at once delete each incident once, without errors', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 10; i++) {
      const id = (
        await post(notification({ groupKey: `ret-race-${i}`, alerts: [firingAlert({ name: `Race${i}` })] }))
      ).body.incident_id;
      await server.request({ method: 'POST', url: `/api/incidents/${id}/resolve`, as: user });
      ids.push(id);
    }
    clock.advance(100 * HOUR);
    const [a, b] = await Promise.all([
      server.app.services.retention.prune(),
      replica.app.services.retention.prune(),
    ]);
    const again = await server.app.services.retention.prune();
    assert.equal(
      a.incidents + b.incidents + again.incidents,
      ids.length + 1,
      'these ten and the recently resolved one of the first test',
    );
    for (const id of ids) assert.equal(await status(`/api/incidents/${id}`), 404);
  });
});
