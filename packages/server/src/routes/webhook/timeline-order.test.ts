/**
 * A notification may wait for its group's lock (another replica applying
 * the same group, a large notification ahead of it) while people act on
 * the incident. What it does must be stamped when it happened, after what
 * they did, or the timeline shows acknowledgements and snoozes after the
 * resolve that ended the incident. On PostgreSQL, with a second connection
 * holding the group's lock (PGlite has one connection).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import {
  ManualClock,
  firingAlert,
  notification,
  postNotification,
  resolvedAlert,
  startTestApp,
  type TestApp,
  type TestUser,
} from '@terdut/test-support';
import { createTestPostgres } from '../../../../../test/support/databases.ts';

let postgres: Awaited<ReturnType<typeof createTestPostgres>>;
let server: TestApp;
let user: TestUser;
let holder: pg.Client;
const clock = new ManualClock('2026-12-07T09:00:00Z');

before(async () => {
  postgres = await createTestPostgres();
  server = await startTestApp(postgres.db, { clock });
  user = await server.createUser('timeline-order', 'member');
  holder = new pg.Client({ connectionString: postgres.url });
  await holder.connect();
});
after(async () => {
  await holder.end();
  await server.close();
  await postgres.drop();
});

/** Whether a backend waits for an advisory lock now (the notification is queued behind the holder). */
async function someoneWaitsForAdvisoryLock(): Promise<boolean> {
  const { rows } = await holder.query<{ waiting: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted) AS waiting`,
  );
  return rows[0]!.waiting;
}

test('a resolve that waited for its group is stamped after the acknowledgement made meanwhile', async () => {
  const groupKey = 'timeline-order';
  const alert = { name: 'Waited', startsAt: '2026-12-07T08:55:00Z' };
  const id = (await postNotification(server, user, notification({ groupKey, alerts: [firingAlert(alert)] })))
    .incident_id!;

  await holder.query('BEGIN');
  await holder.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [groupKey]);
  const resolving = postNotification(
    server,
    user,
    notification({ groupKey, alerts: [resolvedAlert({ ...alert, endsAt: '2026-12-07T08:59:00Z' })] }),
  );
  while (!(await someoneWaitsForAdvisoryLock())) await new Promise((resolve) => setTimeout(resolve, 10));
  clock.advance(60_000);
  const acknowledged = await server.request({
    method: 'POST',
    url: `/api/incidents/${id}/acknowledge`,
    as: user,
  });
  assert.equal(acknowledged.status, 200);
  await holder.query('COMMIT');
  await resolving;

  const incident = (await server.request({ method: 'GET', url: `/api/incidents/${id}`, as: user })).body;
  assert.equal(incident.status, 'resolved');
  assert.ok(
    incident.resolved_at >= incident.acknowledged_at,
    `resolved at ${incident.resolved_at}, before the acknowledgement at ${incident.acknowledged_at}`,
  );
  const timeline = (await server.request({ method: 'GET', url: `/api/incidents/${id}/timeline`, as: user }))
    .body as { type: string }[];
  assert.deepEqual(
    timeline.map((event) => event.type),
    ['triggered', 'alert_added', 'acknowledged', 'alert_resolved', 'resolved'],
  );
});
