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

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

forEachDatabase('statistics', (database) => {
  let server: TestApp;
  let member: TestUser;
  let alertmanager: TestUser;
  const clock = new ManualClock('2026-07-27T10:00:00Z');

  before(async () => {
    server = await startTestApp(database(), {
      clock,
      config: testConfig({ TERDUT_TIMEZONE: 'Europe/Berlin', TERDUT_ALERT_STALE_AFTER: '6h' }),
    });
    member = await server.createUser('stats-reader');
    alertmanager = await server.createUser('alertmanager', 'admin');
  });
  after(() => server.close());

  const get = async (url: string) => {
    const response = await server.request({ method: 'GET', url, as: member });
    assert.equal(response.status, 200, `${url}: ${JSON.stringify(response.body)}`);
    return response.body;
  };
  const deliver = async (payload: object): Promise<number | undefined> => {
    const response = await server.request({
      method: 'POST',
      url: '/api/webhook/alertmanager',
      payload,
      as: alertmanager,
    });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.incident_id;
  };

  // 09:55 UTC is 11:55 on Monday in Berlin.
  const diskFull = (host: string) =>
    ({ name: 'DiskFull', labels: { host }, startsAt: '2026-07-27T09:55:00Z' }) as const;
  // 22:30 UTC on Sunday is 00:30 on Monday in Berlin.
  const latency = { name: 'HighLatency', startsAt: '2026-07-26T22:30:00Z' } as const;

  test('with no data the counts are zero, and the mean times are null, not zero', async () => {
    assert.deepEqual(await get('/api/stats/incidents'), {
      total: 0,
      triggered: 0,
      acknowledged: 0,
      resolved: 0,
      mtta_seconds: null,
      mttr_seconds: null,
    });
    assert.deepEqual(await get('/api/stats/alerts'), { total: 0, firing: 0, resolved: 0 });
    assert.deepEqual(await get('/api/stats/alerts/top'), []);
    const byHour = await get('/api/stats/alerts/by-hour');
    assert.equal(byHour.length, 24);
    assert.deepEqual(
      byHour.map((entry: any) => entry.hour),
      Array.from({ length: 24 }, (_, hour) => hour),
    );
    assert.ok(byHour.every((entry: any) => entry.count === 0));
    assert.deepEqual(await get('/api/stats/alerts/by-day'), [
      { day: 0, day_name: 'Sunday', count: 0 },
      { day: 1, day_name: 'Monday', count: 0 },
      { day: 2, day_name: 'Tuesday', count: 0 },
      { day: 3, day_name: 'Wednesday', count: 0 },
      { day: 4, day_name: 'Thursday', count: 0 },
      { day: 5, day_name: 'Friday', count: 0 },
      { day: 6, day_name: 'Saturday', count: 0 },
    ]);
  });

  test('alerts received through the webhook are counted by name, by hour and by weekday in the configured zone', async () => {
    await deliver(
      notification({
        groupKey: 'disk',
        alerts: [firingAlert(diskFull('db-1')), firingAlert(diskFull('db-2'))],
      }),
    );
    await deliver(notification({ groupKey: 'latency', alerts: [firingAlert(latency)] }));

    assert.deepEqual(await get('/api/stats/alerts'), { total: 3, firing: 3, resolved: 0 });
    assert.deepEqual(await get('/api/stats/alerts/top'), [
      { name: 'DiskFull', count: 2 },
      { name: 'HighLatency', count: 1 },
    ]);
    const byHour = await get('/api/stats/alerts/by-hour');
    assert.deepEqual(
      byHour.filter((entry: any) => entry.count > 0),
      [
        { hour: 0, count: 1 },
        { hour: 11, count: 2 },
      ],
    );
    const byDay = await get('/api/stats/alerts/by-day');
    assert.deepEqual(
      byDay.filter((entry: any) => entry.count > 0),
      [{ day: 1, day_name: 'Monday', count: 3 }],
    );
  });

  test('a repeated notification counts nothing twice', async () => {
    await deliver(
      notification({
        groupKey: 'disk',
        alerts: [firingAlert(diskFull('db-1')), firingAlert(diskFull('db-2'))],
      }),
    );
    assert.deepEqual(await get('/api/stats/alerts'), { total: 3, firing: 3, resolved: 0 });
    assert.equal((await get('/api/stats/alerts/top'))[0].count, 2);
  });

  test('mean time to acknowledge and to resolve are measured from when the incident was triggered', async () => {
    const [disk] = (await server.request({ method: 'GET', url: '/api/incidents', as: member })).body.filter(
      (incident: any) => incident.group_key === 'disk',
    );
    clock.advance(5 * MINUTE);
    const ack = await server.request({
      method: 'POST',
      url: `/api/incidents/${disk.id}/acknowledge`,
      as: member,
    });
    assert.equal(ack.status, 200);
    clock.advance(5 * MINUTE);
    await deliver(notification({ groupKey: 'latency', alerts: [resolvedAlert(latency)] }));

    assert.deepEqual(await get('/api/stats/incidents'), {
      total: 2,
      triggered: 0,
      acknowledged: 1,
      resolved: 1,
      mtta_seconds: 300,
      mttr_seconds: 600,
    });
    assert.deepEqual(await get('/api/stats/alerts'), { total: 3, firing: 2, resolved: 1 });
  });

  test('a firing alert nothing refreshed for TERDUT_ALERT_STALE_AFTER counts as resolved', async () => {
    clock.advance(6 * HOUR + MINUTE);
    assert.deepEqual(await get('/api/stats/alerts'), { total: 3, firing: 0, resolved: 3 });
  });

  test('each occurrence of a flapping alert counts, and archived incidents still count', async () => {
    const refired = await deliver(
      notification({ groupKey: 'latency', alerts: [firingAlert({ ...latency, startsAt: clock.now() })] }),
    );
    assert.ok(refired !== undefined);
    const top = await get('/api/stats/alerts/top');
    assert.deepEqual(top, [
      { name: 'DiskFull', count: 2 },
      { name: 'HighLatency', count: 2 },
    ]);

    await deliver(
      notification({ groupKey: 'latency', alerts: [resolvedAlert({ ...latency, startsAt: clock.now() })] }),
    );
    const archived = await server.request({
      method: 'POST',
      url: `/api/incidents/${refired}/archive`,
      as: member,
    });
    assert.equal(archived.status, 200, JSON.stringify(archived.body));
    const stats = await get('/api/stats/incidents');
    assert.equal(stats.total, 3);
    assert.equal(stats.resolved, 2);
    assert.equal(
      (await get('/api/stats/alerts/top')).find((row: any) => row.name === 'HighLatency').count,
      2,
    );
  });

  test('top honours limit and refuses a limit out of range with 400 naming it', async () => {
    assert.equal((await get('/api/stats/alerts/top?limit=1')).length, 1);
    for (const limit of ['0', '101', 'many']) {
      const response = await server.request({
        method: 'GET',
        url: `/api/stats/alerts/top?limit=${limit}`,
        as: member,
      });
      assert.equal(response.status, 400, limit);
      assert.match(response.body.error, /limit/);
    }
  });

  test('statistics need credentials', async () => {
    const response = await server.request({ method: 'GET', url: '/api/stats/incidents' });
    assert.equal(response.status, 401);
  });
});
