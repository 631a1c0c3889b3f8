/**
 * A key asked for while its owner is being deleted must not outlive the
 * deletion: recovering the person later (`admin recover`) would bring it
 * back. On PostgreSQL, with a second connection in the middle of deleting
 * the person (PGlite has one connection).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startTestApp, type TestApp, type TestUser } from '@terdut/test-support';
import { createTestPostgres } from '../../../../../test/support/databases.ts';

let postgres: Awaited<ReturnType<typeof createTestPostgres>>;
let server: TestApp;
let admin: TestUser;
let deleter: pg.Client;

before(async () => {
  postgres = await createTestPostgres();
  server = await startTestApp(postgres.db);
  admin = await server.createUser('key-admin', 'admin');
  deleter = new pg.Client({ connectionString: postgres.url });
  await deleter.connect();
});
after(async () => {
  await deleter.end();
  await server.close();
  await postgres.drop();
});

test('a key asked for while its owner is being deleted is refused once the deletion commits, and none is left', async () => {
  const person = await server.createUser('leaving');
  await deleter.query('BEGIN');
  await deleter.query('UPDATE users SET deleted_at = now() WHERE id = $1', [person.id]);
  const asking = server.request({
    method: 'POST',
    url: `/api/users/${person.id}/api-keys`,
    as: admin,
    payload: { name: 'late' },
  });
  // The request waits for the deletion (it holds the person's row) instead of minting beside it.
  for (let waited = 0; ; waited += 10) {
    const { rows } = await deleter.query<{ waiting: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype IN ('transactionid', 'tuple') AND NOT granted) AS waiting`,
    );
    if (rows[0]!.waiting) break;
    assert.ok(waited < 5000, 'the key request never waited for the deletion');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await deleter.query('DELETE FROM api_keys WHERE user_id = $1', [person.id]);
  await deleter.query('COMMIT');
  const answer = await asking;
  assert.equal(answer.status, 404, JSON.stringify(answer.body));
  const { rows } = await deleter.query(`SELECT id FROM api_keys WHERE user_id = $1`, [person.id]);
  assert.deepEqual(rows, [], 'no key survives the deletion');
});
