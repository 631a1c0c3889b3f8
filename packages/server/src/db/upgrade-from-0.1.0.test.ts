/**
 * An installation of terdut-server 0.1.0 upgraded to this version: its data
 * (upgrade-fixtures/0.1.0.sql, made through 0.1.0's own API) on 0.1.0's
 * schema, then every later migration. Nothing a 0.1.0 client read changes
 * (upgrade-fixtures/0.1.0-answers.json holds what 0.1.0 answered), keys and
 * passwords keep working, the statistics are the ones the history gives,
 * the day schedule is the default schedule's, and Alertmanager's next
 * notifications continue the open incidents instead of opening new ones.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { openPglite, type Database } from './database.ts';
import { migrate } from './migrate.ts';
import {
  createTestPostgres,
  firingAlert,
  ManualClock,
  notification,
  referenceStatistics,
  resolvedAlert,
  startTestApp,
  testConfig,
  type TestApp,
} from '@terdut/test-support';

const fixture = (name: string) =>
  readFileSync(new URL(`./upgrade-fixtures/${name}`, import.meta.url), 'utf8');
const LAST_MIGRATION_OF_0_1_0 = '0401_incident_queue_indexes.sql';
/** The keys 0.1.0 printed when the fixture was made (only their hashes are in it). */
const KEYS = {
  admin: '9cfa8604c185d995e83f9e95d1889dc19aaf19c703edb5325472b542c1c8f282',
  alice: 'd4b3d2c9a0f5d4e9f1ab56edaea6d33697fedce639ee8079a25c498f31aaf8f5',
  alertmanager: 'cd02e471bf77a9663fdd2728af5240b48bb757b4b8cd3d98a09168545509af76',
} as const;
const ALICE_PASSWORD = 'alice-password-0.1.0';
/** A minute after the fixture was made: CertExpiry is still snoozed, nothing has gone stale. */
const SOON_AFTER = '2026-12-07T18:52:30Z';
const ZONE = 'Europe/Berlin';

type Answers = Record<string, { status: number; body: unknown }>;

/** Fields whose value moves with use, not with the upgrade: the test's own reads use the keys. */
const MOVES_WITH_USE = new Set(['last_used_at']);
/**
 * An alert's `received_at` is when a notification last carried it since
 * 0.1.0, which answered the first receipt of its occurrence (CHANGELOG):
 * never earlier than what 0.1.0 answered.
 */
const LAST_CARRIED = 'received_at';

/** `actual` has every field `expected` has, with the same value; fields added since are allowed. */
function assertStillAnswers(actual: unknown, expected: unknown, where: string): void {
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${where}: an array`);
    assert.equal(actual.length, expected.length, `${where}: ${expected.length} items`);
    expected.forEach((item, index) => assertStillAnswers(actual[index], item, `${where}[${index}]`));
  } else if (expected !== null && typeof expected === 'object') {
    assert.ok(actual !== null && typeof actual === 'object', `${where}: an object`);
    for (const [key, value] of Object.entries(expected)) {
      assert.ok(key in actual, `${where}.${key} is still answered`);
      if (MOVES_WITH_USE.has(key)) continue;
      if (key === LAST_CARRIED) {
        const now = (actual as Record<string, string>)[key]!;
        assert.ok(Date.parse(now) >= Date.parse(value as string), `${where}.${key}: ${now} before ${value}`);
        continue;
      }
      assertStillAnswers((actual as Record<string, unknown>)[key], value, `${where}.${key}`);
    }
  } else {
    assert.deepEqual(actual, expected, where);
  }
}

for (const kind of ['pglite', 'postgres'] as const) {
  void test(`a 0.1.0 installation upgraded [${kind}]`, async (t) => {
    let db: Database;
    let drop: () => Promise<void>;
    if (kind === 'pglite') {
      db = await openPglite(undefined);
      drop = () => db.close();
    } else {
      const created = await createTestPostgres({ migrated: false });
      db = created.db;
      drop = () => created.drop();
    }
    const servers: TestApp[] = [];
    t.after(async () => {
      for (const server of servers) await server.close();
      await drop();
    });

    await migrate(db, { through: LAST_MIGRATION_OF_0_1_0 });
    await db.exec(fixture('0.1.0.sql'));
    const applied = await migrate(db);
    assert.ok(applied.length > 0 && applied.every((name) => name > LAST_MIGRATION_OF_0_1_0), applied.join());

    const clock = new ManualClock(SOON_AFTER);
    const app = await startTestApp(db, { clock, config: testConfig({ TERDUT_TIMEZONE: ZONE }) });
    servers.push(app);

    await t.test('every field 0.1.0 answered is answered the same', async () => {
      const answers = JSON.parse(fixture('0.1.0-answers.json')) as Answers;
      for (const [request, expected] of Object.entries(answers)) {
        const [who, method, url] = request.split(' ') as [keyof typeof KEYS, 'GET', string];
        const response = await app.request({ method, url, as: KEYS[who] });
        assert.equal(response.status, expected.status, `${request}: ${JSON.stringify(response.body)}`);
        assertStillAnswers(response.body, expected.body, request);
      }
    });

    await t.test("alice's password still signs her in", async () => {
      const response = await app.request({
        method: 'POST',
        url: '/auth/login',
        payload: { username: 'alice', password: ALICE_PASSWORD },
      });
      assert.equal(response.status, 200, JSON.stringify(response.body));
    });

    await t.test('the statistics are what the stored history gives', async () => {
      const expected = await referenceStatistics(db, ZONE, new Date(clock.now().getTime() - 60 * 60_000));
      const get = async (url: string) => (await app.request({ method: 'GET', url, as: KEYS.alice })).body;
      assert.deepEqual(await get('/api/stats/alerts/top?limit=100'), expected.top);
      assert.deepEqual(await get('/api/stats/alerts/by-hour'), expected.byHour);
      assert.deepEqual(await get('/api/stats/alerts/by-day'), expected.byDay);
      assert.deepEqual(await get('/api/stats/incidents'), expected.incidents);
    });

    await t.test("the day schedule became the default schedule's whole-day overrides", async () => {
      const schedules = (await app.request({ method: 'GET', url: '/api/schedules', as: KEYS.alice })).body;
      const main = schedules.find((schedule: { is_default: boolean }) => schedule.is_default);
      assert.ok(main, JSON.stringify(schedules));
      const onCall = async (at: string) =>
        (
          await app.request({
            method: 'GET',
            url: `/api/schedules/${main.id}/on-call?at=${encodeURIComponent(at)}`,
            as: KEYS.alice,
          })
        ).body;
      // Whole days in the zone the days were kept in: 2026-12-10 00:30 in Berlin is bob's.
      assert.equal((await onCall('2026-12-06T23:30:00Z')).username, 'alice');
      assert.equal((await onCall('2026-12-09T22:30:00Z')).username, 'alice');
      assert.equal((await onCall('2026-12-09T23:30:00Z')).username, 'bob');
      const after = await onCall('2026-12-10T23:30:00Z');
      assert.equal(after.user_id, undefined, JSON.stringify(after));
    });

    await t.test("Alertmanager's next notifications continue the open incidents", async () => {
      const post = (body: ReturnType<typeof notification>) =>
        app.request({
          method: 'POST',
          url: '/api/webhook/alertmanager',
          payload: body,
          as: KEYS.alertmanager,
        });
      const common = { alertname: 'DiskFull', severity: 'critical', team: 'db' };
      // The two alerts as Alertmanager keeps sending them (fingerprints and starts as 0.1.0 stored them).
      const diskFull = [
        {
          labels: { ...common, instance: 'db-1' },
          startsAt: '2026-12-07T16:51:29.700Z',
          fingerprint: 'a000000000000001',
        },
        {
          labels: { ...common, instance: 'db-2' },
          startsAt: '2026-12-07T17:21:29.700Z',
          fingerprint: 'a000000000000002',
        },
      ];
      const groupKey = '{}:{alertname="DiskFull"}';
      const repeated = await post(
        notification({ groupKey, alerts: diskFull.map((alert) => firingAlert(alert)) }),
      );
      assert.equal(repeated.status, 200, JSON.stringify(repeated.body));
      const open = (await app.request({ method: 'GET', url: '/api/incidents', as: KEYS.alice })).body;
      assert.deepEqual(
        open.map((incident: { id: number; alert_count: number }) => [incident.id, incident.alert_count]),
        [
          [3, 1],
          [1, 2],
        ],
        'the open group continues its incident, with its two alerts',
      );
      clock.advance(60_000);
      const resolved = await post(
        notification({
          groupKey,
          alerts: diskFull.map((alert) => resolvedAlert({ ...alert, endsAt: clock.now() })),
        }),
      );
      assert.equal(resolved.status, 200, JSON.stringify(resolved.body));
      const incident = (await app.request({ method: 'GET', url: '/api/incidents/1', as: KEYS.alice })).body;
      assert.equal(incident.status, 'resolved');
    });
  });
}
