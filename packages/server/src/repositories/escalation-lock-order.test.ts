/**
 * The paging pass locks a batch of incidents and their escalations in one
 * statement (lockIncidentsAndEscalationsUnlessHeld). Every writer of an escalation
 * locks its incident first; the statement must keep that order, or a pass
 * and an acknowledgement could deadlock. On PostgreSQL, with a second and a
 * third connection holding and probing the locks (PGlite has one).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createTestPostgres } from '../../../../test/support/databases.ts';
import { openPostgres, type Database } from '../db/database.ts';
import {
  insertEscalation,
  lockIncidentsAndEscalationsUnlessHeld,
  moveEscalationsWithEvents,
} from './escalations.ts';
import { BUILT_IN_DEFAULT_POLICY } from '../services/paging/policy-routing.ts';

let postgres: Awaited<ReturnType<typeof createTestPostgres>>;
let db: Database;
let other: pg.Client;
let probe: pg.Client;

before(async () => {
  postgres = await createTestPostgres();
  db = postgres.db;
  other = new pg.Client({ connectionString: postgres.url });
  probe = new pg.Client({ connectionString: postgres.url });
  await Promise.all([other.connect(), probe.connect()]);
});
after(async () => {
  await Promise.all([other.end(), probe.end()]);
  await postgres.drop();
});

async function incidentWithEscalation(title: string): Promise<number> {
  const { rows } = await db.query<{ id: number }>(
    `INSERT INTO incidents (group_key, title, triggered_at) VALUES ($1, $1, now()) RETURNING id`,
    [title],
  );
  const id = rows[0]!.id;
  await insertEscalation(
    db,
    { incident_id: id, policy_id: null, policy: BUILT_IN_DEFAULT_POLICY, labels: { team: 'db' } },
    new Date('2026-12-05T08:00:00Z'),
  );
  return id;
}

/** Whether another transaction holds the incident's row lock now (a NOWAIT probe). */
async function incidentIsLocked(id: number): Promise<boolean> {
  await probe.query('BEGIN');
  try {
    await probe.query('SELECT 1 FROM incidents WHERE id = $1 FOR NO KEY UPDATE NOWAIT', [id]);
    return false;
  } catch (error) {
    if ((error as { code?: string }).code === '55P03') return true;
    throw error;
  } finally {
    await probe.query('ROLLBACK');
  }
}

test('the incident and its escalation come back locked, with their types', async () => {
  const id = await incidentWithEscalation('typed');
  await db.transaction(async (tx) => {
    const [locked, ...more] = await lockIncidentsAndEscalationsUnlessHeld(tx, [id]);
    assert.ok(locked !== undefined);
    assert.equal(more.length, 0);
    assert.equal(locked.incident.id, id);
    assert.equal(locked.incident.title, 'typed');
    assert.equal(locked.incident.status, 'triggered');
    assert.equal(locked.escalation.incident_id, id);
    assert.equal(locked.escalation.state, 'active');
    assert.ok(locked.escalation.due_at instanceof Date);
    assert.equal(locked.escalation.due_at.toISOString(), '2026-12-05T08:00:00.000Z');
    assert.deepEqual(locked.escalation.policy, BUILT_IN_DEFAULT_POLICY);
    assert.deepEqual(locked.escalation.labels, { team: 'db' });
    assert.equal(await incidentIsLocked(id), true);
  });
  assert.equal(await incidentIsLocked(id), false);
});

test('an incident another transaction holds is skipped at once, escalation and all', async () => {
  const id = await incidentWithEscalation('held');
  await other.query('BEGIN');
  await other.query('SELECT 1 FROM incidents WHERE id = $1 FOR NO KEY UPDATE', [id]);
  try {
    const started = performance.now();
    const locked = await db.transaction((tx) => lockIncidentsAndEscalationsUnlessHeld(tx, [id]));
    assert.deepEqual(locked, []);
    assert.ok(performance.now() - started < 2000, 'it did not wait');
  } finally {
    await other.query('ROLLBACK');
  }
});

test('waiting for a held escalation, the pass already holds the incident: incident first', async () => {
  const id = await incidentWithEscalation('order');
  await other.query('BEGIN');
  await other.query('SELECT 1 FROM escalations WHERE incident_id = $1 FOR UPDATE', [id]);
  let pass: Promise<unknown> | undefined;
  try {
    pass = db.transaction((tx) => lockIncidentsAndEscalationsUnlessHeld(tx, [id]));
    // The pass waits on the escalation's lock...
    const deadline = Date.now() + 5000;
    for (;;) {
      const waiting = await probe.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE OF e%'`,
      );
      if (waiting.rows[0].n > 0) break;
      assert.ok(Date.now() < deadline, 'the pass never waited for the escalation');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // ...holding the incident's.
    assert.equal(await incidentIsLocked(id), true);
  } finally {
    await other.query('COMMIT');
  }
  const locked = (await pass) as { incident: { id: number } }[];
  assert.deepEqual(
    locked.map((pair) => pair.incident.id),
    [id],
  );
});

test('a batch comes back in incident order, locked, without the one another transaction holds', async () => {
  const [first, held, last] = [
    await incidentWithEscalation('batch 1'),
    await incidentWithEscalation('batch 2'),
    await incidentWithEscalation('batch 3'),
  ];
  await other.query('BEGIN');
  await other.query('SELECT 1 FROM incidents WHERE id = $1 FOR NO KEY UPDATE', [held]);
  try {
    await db.transaction(async (tx) => {
      const locked = await lockIncidentsAndEscalationsUnlessHeld(tx, [last, held, first]);
      assert.deepEqual(
        locked.map((pair) => [pair.incident.id, pair.escalation.incident_id]),
        [
          [first, first],
          [last, last],
        ],
      );
      assert.equal(await incidentIsLocked(first), true);
      assert.equal(await incidentIsLocked(last), true);
    });
  } finally {
    await other.query('ROLLBACK');
  }
  assert.equal(await incidentIsLocked(first), false);
});

test('a batch is locked and moved by key, never by scanning every escalation ever started', async () => {
  // Enough rows, analysed, that a scan is what the planner would pick for a join it cannot estimate.
  await db.query(
    `WITH opened AS (
       INSERT INTO incidents (group_key, title, triggered_at)
       SELECT 'scan-' || n, 'scan', now() FROM generate_series(1, 20000) AS n RETURNING id)
     INSERT INTO escalations (incident_id, policy, labels, state, due_at, updated_at)
     SELECT id, '{}', '{}', 'active', now(), now() FROM opened`,
  );
  await db.query('ANALYZE incidents, escalations');
  const [first, second] = [await incidentWithEscalation('moved 1'), await incidentWithEscalation('moved 2')];
  const now = new Date('2026-12-05T09:00:00Z');
  // A connection of its own: no plan cached while the tables were small.
  const fresh = await openPostgres(postgres.url, { max: 1 });
  const scans = await fresh.transaction(async (tx) => {
    const locked = await lockIncidentsAndEscalationsUnlessHeld(tx, [first, second]);
    await moveEscalationsWithEvents(
      tx,
      locked.map(({ escalation }) => ({ ...escalation, state: 'finished', due_at: null })),
      [{ incident_id: first, type: 'escalation_finished', detail: 'moved by key' }],
      now,
    );
    // This transaction's own scans so far.
    const { rows } = await tx.query<{ relname: string; seq_scan: number }>(
      `SELECT relname, seq_scan::int FROM pg_stat_xact_user_tables WHERE relname IN ('incidents', 'escalations')`,
    );
    return Object.fromEntries(rows.map((row) => [row.relname, row.seq_scan]));
  });
  await fresh.close();
  assert.deepEqual(scans, { incidents: 0, escalations: 0 });
  const moved = await db.query<{ incident_id: number; state: string; due_at: Date | null }>(
    'SELECT incident_id, state, due_at FROM escalations WHERE incident_id = ANY($1) ORDER BY incident_id',
    [[first, second]],
  );
  assert.deepEqual(moved.rows, [
    { incident_id: first, state: 'finished', due_at: null },
    { incident_id: second, state: 'finished', due_at: null },
  ]);
});
