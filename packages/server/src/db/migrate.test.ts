import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openPostgres } from './database.ts';
import { migrate } from './migrate.ts';

test('a database user that may not create tables gets a start-up error saying what to grant', async () => {
  const adminUrl = process.env.TERDUT_TEST_DATABASE_URL;
  assert.ok(adminUrl, 'TERDUT_TEST_DATABASE_URL is set by the global setup');
  const name = `terdut_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    // What PostgreSQL 15 and later do for every user but the database's owner.
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.query(`CREATE ROLE ${name} LOGIN`);
    const inDatabase = new URL(adminUrl);
    inDatabase.pathname = `/${name}`;
    const owner = new pg.Client({ connectionString: inDatabase.toString() });
    await owner.connect();
    await owner.query('REVOKE CREATE ON SCHEMA public FROM PUBLIC');
    await owner.end();

    const asUser = new URL(inDatabase);
    asUser.username = name;
    const db = await openPostgres(asUser.toString(), { max: 1 });
    try {
      await assert.rejects(
        migrate(db),
        /^Error: cannot create terdut's tables \(permission denied for schema public\); the DATABASE_URL user must own the database or have CREATE on its schema/,
      );
    } finally {
      await db.close();
    }
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`DROP ROLE IF EXISTS ${name}`);
    await admin.end();
  }
});
