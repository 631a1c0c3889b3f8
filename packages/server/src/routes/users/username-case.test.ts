import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { forEachDatabase, startTestApp, type TestApp, type TestUser } from '@terdut/test-support';
import { migrate } from '../../db/migrate.ts';

forEachDatabase('usernames are unique regardless of case', (database) => {
  let server: TestApp;
  let admin: TestUser;
  before(async () => {
    server = await startTestApp(database());
    admin = await server.createUser('root', 'admin');
  });
  after(() => server.close());

  test('"ADMIN" next to "admin" is refused with 409', async () => {
    const create = (username: string) =>
      server.request({
        method: 'POST',
        url: '/api/users',
        as: admin,
        payload: { username, email: `${username.toLowerCase()}@example.com` },
      });
    assert.equal((await create('grace')).status, 201);
    const again = await create('GRACE');
    assert.equal(again.status, 409);
    assert.match(again.body.error, /username "GRACE" is taken/);
  });

  test('the migration refuses clearly, naming the users, while live users collide', async () => {
    const db = database();
    // Re-create the state before the migration: the index gone, two users differing in case.
    await db.exec(`DROP INDEX users_username_live_ci;
      DELETE FROM schema_migrations WHERE name = '0500_usernames_case_insensitive.sql'`);
    await db.query(
      `INSERT INTO users (username, email, role, kind) VALUES ('Linus', '', 'member', 'person')`,
    );
    await db.query(
      `INSERT INTO users (username, email, role, kind) VALUES ('LINUS', '', 'member', 'person')`,
    );
    await assert.rejects(
      migrate(db),
      /usernames must be unique regardless of case, but these live users collide: Linus, LINUS\. Rename or delete/,
    );
    await db.query(`UPDATE users SET deleted_at = now() WHERE username = 'LINUS'`);
    await migrate(db);
    const index = await db.query(`SELECT 1 FROM pg_indexes WHERE indexname = 'users_username_live_ci'`);
    assert.equal(index.rows.length, 1, 'applies once the collision is resolved');
  });
});
