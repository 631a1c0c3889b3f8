/**
 * A policy saved with a step naming a schedule, and that schedule deleted,
 * at the same moment: one of the two is refused, never both accepted (that
 * would leave a step paging nobody). On PostgreSQL, where the two run at
 * once: a second connection holds a row one of them needs, so the other
 * comes while the first is still open, and a third watches who waits for a
 * lock. (PGlite has one connection: its transactions take turns.)
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createTestPostgres, startTestApp, type TestApp, type TestUser } from '@terdut/test-support';

let postgres: Awaited<ReturnType<typeof createTestPostgres>>;
let server: TestApp;
let admin: TestUser;
let alice: TestUser;
let other: pg.Client;
let probe: pg.Client;

before(async () => {
  postgres = await createTestPostgres();
  server = await startTestApp(postgres.db);
  admin = await server.createUser('race-admin', 'admin');
  alice = await server.createUser('alice');
  other = new pg.Client({ connectionString: postgres.url });
  probe = new pg.Client({ connectionString: postgres.url });
  await Promise.all([other.connect(), probe.connect()]);
});
after(async () => {
  await Promise.all([other.end(), probe.end()]);
  await server.close();
  await postgres.drop();
});

const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
  server.request({ method, url, as: admin, ...(payload ? { payload } : {}) });

async function schedule(name: string): Promise<number> {
  const created = await call('POST', '/api/schedules', { name, time_zone: 'UTC' });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.id;
}

const policyNaming = (name: string, scheduleId: number) =>
  call('POST', '/api/escalation-policies', {
    name,
    matchers: [`team="${name}"`],
    steps: [{ targets: [{ type: 'on_call', schedule_id: scheduleId }] }],
  });

/**
 * Resolves once `request` has answered or a statement starting with
 * `statement` waits for a row lock, whichever comes first.
 */
async function answeredOrWaiting(request: Promise<unknown>, statement: string): Promise<void> {
  let answered = false;
  void request.finally(() => (answered = true));
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (answered) return;
    const waiting = await probe.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`,
      [`${statement}%`],
    );
    if (waiting.rows[0].n > 0) return;
    assert.ok(Date.now() < deadline, `neither an answer nor a wait for "${statement}"`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('a schedule deleted while a policy naming it is being saved: the delete waits for it and is refused with 409', async () => {
  const payments = await schedule('Payments');
  // Every policy save ends by moving the routing version: holding that row
  // stops the save after it has checked the schedule and written the policy.
  await other.query('BEGIN');
  await other.query('UPDATE paging_routing SET version = version');
  let saving: ReturnType<typeof policyNaming> | undefined;
  let deleting: ReturnType<typeof call> | undefined;
  try {
    saving = policyNaming('payments', payments);
    await answeredOrWaiting(saving, 'INSERT INTO escalation_policies');
    deleting = call('DELETE', `/api/schedules/${payments}`);
    await answeredOrWaiting(deleting, 'SELECT');
  } finally {
    await other.query('ROLLBACK');
  }
  const [saved, deleted] = await Promise.all([saving, deleting]);
  assert.equal(saved.status, 201, JSON.stringify(saved.body));
  assert.equal(deleted.status, 409, JSON.stringify(deleted.body));
  assert.match(deleted.body.error, /^schedule Payments is paged by policy 'payments' step 1;/);
  assert.equal((await call('GET', `/api/schedules/${payments}`)).status, 200);
});

test('a policy naming a schedule saved while the schedule is being deleted: the save waits for it and is refused with 400', async () => {
  const search = await schedule('Search');
  const cover = await call('POST', `/api/schedules/${search}/overrides`, {
    user_id: alice.id,
    starts_at: '2030-01-01T00:00:00Z',
    ends_at: '2030-01-02T00:00:00Z',
  });
  assert.equal(cover.status, 201, JSON.stringify(cover.body));
  // Holding the schedule's override stops the delete in its cascade, with the schedule's row deleted.
  await other.query('BEGIN');
  await other.query('SELECT 1 FROM schedule_overrides WHERE schedule_id = $1 FOR UPDATE', [search]);
  let deleting: ReturnType<typeof call> | undefined;
  let saving: ReturnType<typeof policyNaming> | undefined;
  try {
    deleting = call('DELETE', `/api/schedules/${search}`);
    await answeredOrWaiting(deleting, 'DELETE FROM schedules');
    saving = policyNaming('search', search);
    await answeredOrWaiting(saving, 'SELECT');
  } finally {
    await other.query('ROLLBACK');
  }
  const [deleted, saved] = await Promise.all([deleting, saving]);
  assert.equal(deleted.status, 204, JSON.stringify(deleted.body));
  assert.equal(saved.status, 400, JSON.stringify(saved.body));
  assert.match(saved.body.error, /"steps\.0\.targets\.0\.schedule_id": schedule \d+ does not exist/);
  const policies = (await call('GET', '/api/escalation-policies')).body as { name: string }[];
  assert.ok(!policies.some((policy) => policy.name === 'search'), 'no policy pages the deleted schedule');
});
