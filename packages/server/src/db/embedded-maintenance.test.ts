import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestPglite, createTestPostgres } from '../../../../test/support/databases.ts';
import { startTestApp, type TestApp, type TestUser } from '../../../../test/support/app.ts';
import { postNotification } from '../../../../test/support/incidents.ts';
import { notificationOfSize } from '../../../../test/support/alertmanager-payloads.ts';
import type { Database } from './database.ts';
import { embeddedDatabaseJobs, maintainTables } from './embedded-maintenance.ts';

/** What the planner believes of a table: its row count as of the last VACUUM or ANALYZE (-1: never). */
async function plannerRowCount(db: Database, table: string): Promise<number> {
  const { rows } = await db.query<{ reltuples: number }>(
    'SELECT reltuples::int AS reltuples FROM pg_class WHERE oid = $1::regclass',
    [table],
  );
  return rows[0]!.reltuples;
}

/** Dead row versions in a table, as autovacuum counts them (this connection's counts included). */
async function deadRows(db: Database, table: string): Promise<number> {
  await db.query('SELECT pg_stat_force_next_flush()');
  const { rows } = await db.query<{ n_dead_tup: number }>(
    'SELECT n_dead_tup::int FROM pg_stat_user_tables WHERE relid = $1::regclass',
    [table],
  );
  return rows[0]!.n_dead_tup;
}

describe('the embedded database is vacuumed and analysed as autovacuum would (PGlite has no autovacuum)', () => {
  let db: Database;
  let server: TestApp;
  let admin: TestUser;
  before(async () => {
    db = await createTestPglite();
    server = await startTestApp(db);
    admin = await server.createUser('maintenance-admin', 'admin');
  });
  after(async () => {
    await server.close();
    await db.close();
  });

  test('the first pass maintains every table never analysed; a pass with nothing changed does nothing', async () => {
    const first = await maintainTables(db);
    assert.ok(
      first.vacuumed.includes('alerts') && first.vacuumed.includes('incidents'),
      JSON.stringify(first),
    );
    const { rows } = await db.query<{ table_name: string }>(
      `SELECT s.relname AS table_name FROM pg_stat_user_tables s
        WHERE s.schemaname = current_schema() AND s.last_vacuum IS NULL`,
    );
    assert.deepEqual(rows, [], 'every table was vacuumed once');
    assert.deepEqual(await maintainTables(db), { vacuumed: [], analyzed: [] });
  });

  test('alerts the webhook stores are counted for the planner; resolving them has their dead rows removed', async () => {
    await maintainTables(db);
    await postNotification(
      server,
      admin,
      notificationOfSize(100, { name: 'Maintained', groupKey: 'maintained' }),
    );
    assert.notEqual(await plannerRowCount(db, 'alerts'), 100, 'not known before the pass');

    const afterIntake = await maintainTables(db);
    assert.ok(
      [...afterIntake.analyzed, ...afterIntake.vacuumed].includes('alerts'),
      JSON.stringify(afterIntake),
    );
    assert.equal(await plannerRowCount(db, 'alerts'), 100);

    await postNotification(
      server,
      admin,
      notificationOfSize(100, { name: 'Maintained', groupKey: 'maintained', status: 'resolved' }),
    );
    assert.ok((await deadRows(db, 'alerts')) >= 100, 'resolving 100 alerts leaves their old versions behind');
    const afterResolve = await maintainTables(db);
    assert.ok(afterResolve.vacuumed.includes('alerts'), JSON.stringify(afterResolve));
    assert.equal(await deadRows(db, 'alerts'), 0);
  });
});

test('on PostgreSQL the server runs no maintenance job: autovacuum does it', async () => {
  const postgres = await createTestPostgres();
  try {
    assert.deepEqual(embeddedDatabaseJobs(postgres.db), []);
  } finally {
    await postgres.drop();
  }
  const pglite = await createTestPglite();
  try {
    assert.deepEqual(
      embeddedDatabaseJobs(pglite).map((job) => job.name),
      ['embedded-maintenance'],
    );
  } finally {
    await pglite.close();
  }
});
