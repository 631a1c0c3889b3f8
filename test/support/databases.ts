/**
 * Runs a suite against both databases the server supports: the embedded
 * PGlite (in memory) and the real PostgreSQL that global setup provides,
 * each freshly created and migrated for this test file.
 */
import { describe, before, after, test } from 'node:test';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import {
  openPglite,
  openPostgres,
  type Database,
  type Queryable,
} from '../../packages/server/src/db/database.ts';
import { migrate } from '../../packages/server/src/db/migrate.ts';

export type DatabaseKind = 'pglite' | 'postgres';

/**
 * A new, empty PostgreSQL database on the test server, migrated unless
 * `migrated: false` (a test that builds an older schema itself); dropped by `drop()`.
 */
export async function createTestPostgres(
  options: { migrated?: boolean } = {},
): Promise<{ db: Database; url: string; drop(): Promise<void> }> {
  const adminUrl = process.env.TERDUT_TEST_DATABASE_URL;
  if (!adminUrl)
    throw new Error(
      'TERDUT_TEST_DATABASE_URL is not set; run tests with npm test (its global setup starts PostgreSQL)',
    );
  const name = `terdut_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = await openPostgres(url.toString(), { max: 20 });
  if (options.migrated !== false) await migrate(db);
  return {
    db,
    url: url.toString(),
    async drop() {
      await db.close().catch(() => {});
      const cleanup = new pg.Client({ connectionString: adminUrl });
      await cleanup.connect();
      await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await cleanup.end();
    },
  };
}

/** A new in-memory PGlite, migrated. */
export async function createTestPglite(): Promise<Database> {
  const db = await openPglite(undefined);
  await migrate(db);
  return db;
}

/**
 * `describe`s `suite` once per database kind. `suite` receives a getter for
 * the database of that kind (ready inside tests and `before` hooks).
 *
 * @example
 * forEachDatabase('incidents', (database) => {
 *   test('a resolved incident cannot be resolved again', async () => { ... database() ... });
 * });
 */
export function forEachDatabase(
  name: string,
  suite: (database: () => Database, kind: DatabaseKind) => void,
): void {
  for (const kind of ['pglite', 'postgres'] as const) {
    void describe(`${name} [${kind}]`, () => {
      let db: Database | undefined;
      let drop: (() => Promise<void>) | undefined;
      before(async () => {
        if (kind === 'pglite') {
          db = await createTestPglite();
          const opened = db;
          drop = () => opened.close();
        } else {
          const created = await createTestPostgres();
          db = created.db;
          drop = () => created.drop();
        }
      });
      after(async () => {
        await drop?.();
      });
      suite(() => {
        if (!db) throw new Error('database not ready: use it inside a test or a before hook');
        return db;
      }, kind);
    });
  }
}

/**
 * `test`s `check` once per database kind, each on a fresh migrated database
 * with a single connection: PGlite has one anyway, and PostgreSQL gets a
 * pool of one, so what a connection keeps from its first statements (their
 * plans) is what its later statements use. Titles: `on PGlite, <title>`
 * and `on PostgreSQL, one connection: <title>`.
 */
export function testOnOneConnectionOfEach(title: string, check: (db: Database) => Promise<void>): void {
  void test(`on PGlite, ${title}`, async () => {
    const db = await createTestPglite();
    try {
      await check(db);
    } finally {
      await db.close();
    }
  });
  void test(`on PostgreSQL, one connection: ${title}`, async () => {
    const created = await createTestPostgres();
    const db = await openPostgres(created.url, { max: 1 });
    try {
      await check(db);
    } finally {
      await db.close();
      await created.drop();
    }
  });
}

/**
 * How much `counted` (an expression over one row of
 * pg_stat_xact_user_tables) grew for `table` while `work` ran, in one
 * transaction of `db`: the connection's own counts (not yet reported, so
 * no one else's), before and after.
 */
async function tableCountDuring(
  db: Database,
  table: string,
  counted: string,
  work: (tx: Queryable) => Promise<void>,
): Promise<number> {
  return db.transaction(async (tx) => {
    const count = async () =>
      (
        await tx.query<{ count: number }>(
          `SELECT (${counted})::int AS count FROM pg_stat_xact_user_tables WHERE relname = $1`,
          [table],
        )
      ).rows[0]!.count;
    const before = await count();
    await work(tx);
    return (await count()) - before;
  });
}

/**
 * Whole-table scans of `table` while `work` runs, in one transaction of
 * `db`. A test that a statement finds its rows by index.
 */
export function wholeTableScansDuring(
  db: Database,
  table: string,
  work: (tx: Queryable) => Promise<void>,
): Promise<number> {
  return tableCountDuring(db, table, 'seq_scan', work);
}

/**
 * Rows of `table` read while `work` runs (by whole-table scans and through
 * indexes), in one transaction of `db`. A test that a statement reads only
 * the rows it needs.
 */
export function rowsReadDuring(
  db: Database,
  table: string,
  work: (tx: Queryable) => Promise<void>,
): Promise<number> {
  return tableCountDuring(db, table, 'coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)', work);
}
