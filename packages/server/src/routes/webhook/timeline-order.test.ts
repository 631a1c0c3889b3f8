/**
 * What resolves an incident on its own (a notification, the staleness
 * sweep) may wait for a lock (another replica applying the same group, a
 * large notification ahead of it, a person's action) while people act on
 * the incident. What it does must be stamped when it happened, after what
 * they did, or the timeline shows acknowledgements and snoozes after the
 * resolve that ended the incident. On PostgreSQL, with other connections
 * holding the locks (PGlite has one connection).
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
  testConfig,
  type TestApp,
  type TestUser,
} from '@terdut/test-support';
import { createTestPostgres } from '../../../../../test/support/databases.ts';

let postgres: Awaited<ReturnType<typeof createTestPostgres>>;
let server: TestApp;
let user: TestUser;
let holder: pg.Client;
let second: pg.Client;
const clock = new ManualClock('2026-12-07T09:00:00Z');

before(async () => {
  postgres = await createTestPostgres();
  server = await startTestApp(postgres.db, { clock, config: testConfig({ TERDUT_ALERT_STALE_AFTER: '1h' }) });
  user = await server.createUser('timeline-order', 'member');
  holder = new pg.Client({ connectionString: postgres.url });
  second = new pg.Client({ connectionString: postgres.url });
  await Promise.all([holder.connect(), second.connect()]);
});
after(async () => {
  await Promise.all([holder.end(), second.end()]);
  await server.close();
  await postgres.drop();
});

/** Whether a backend waits for an advisory lock now (the notification is queued behind the holder). */
async function someoneWaitsForAdvisoryLock(): Promise<boolean> {
  const { rows } = await holder.query<{ waiting: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())) AS waiting`,
  );
  return rows[0]!.waiting;
}

/** The index of the client whose locks a backend of this database waits for, once one does. */
async function indexOfBlockingClient(clients: pg.Client[]): Promise<number> {
  for (;;) {
    const { rows } = await clients[0]!.query<{ pid: number }>(
      `SELECT unnest(pg_blocking_pids(pid)) AS pid FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    const pids = rows.map((row) => row.pid);
    const index = clients.findIndex((client) =>
      pids.includes((client as unknown as { processID: number }).processID),
    );
    if (index >= 0) return index;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
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

test('the sweep stamps a resolve after an acknowledgement made while it waited for another incident', async () => {
  const ids: number[] = [];
  for (const name of ['SweptFirst', 'SweptSecond']) {
    const opened = await postNotification(
      server,
      user,
      notification({
        groupKey: `timeline-order-${name}`,
        alerts: [firingAlert({ name, startsAt: clock.now() })],
      }),
    );
    ids.push(opened.incident_id!);
  }
  clock.advance(2 * 3600_000);

  // Each incident held by a connection of its own; the sweep waits for whichever it takes first.
  const holders = [holder, second];
  for (const [index, id] of ids.entries()) {
    await holders[index]!.query('BEGIN');
    await holders[index]!.query('SELECT 1 FROM incidents WHERE id = $1 FOR NO KEY UPDATE', [id]);
  }
  const sweeping = server.app.services.alertExpiry.sweep();
  const waitedFor = await indexOfBlockingClient(holders);
  const other = 1 - waitedFor;
  await holders[other]!.query('COMMIT');
  clock.advance(60_000);
  const acknowledged = await server.request({
    method: 'POST',
    url: `/api/incidents/${ids[other]}/acknowledge`,
    as: user,
  });
  assert.equal(acknowledged.status, 200);
  await holders[waitedFor]!.query('COMMIT');
  await sweeping;

  const incident = (await server.request({ method: 'GET', url: `/api/incidents/${ids[other]}`, as: user }))
    .body;
  assert.equal(incident.status, 'resolved');
  assert.ok(
    incident.resolved_at >= incident.acknowledged_at,
    `resolved at ${incident.resolved_at}, before the acknowledgement at ${incident.acknowledged_at}`,
  );
});
