import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestPostgres, startTestApp, testConfig, runMain } from '@terdut/test-support';
import { openPglite, type Database } from '../db/database.ts';
import { migrate } from '../db/migrate.ts';

const TOKEN = testConfig().bootstrapToken!;
const KEY_LINE = /^([0-9a-f]{64})$/m;

/** Bootstraps the instance through the API, as an operator or a person would. */
async function bootstrapThroughApi(db: Database): Promise<void> {
  const server = await startTestApp(db);
  try {
    const response = await server.request({
      method: 'POST',
      url: '/api/bootstrap',
      headers: { authorization: `Bearer ${TOKEN}` },
      payload: { username: 'founder', email: 'founder@example.com' },
    });
    assert.equal(response.status, 201);
  } finally {
    await server.close();
  }
}

/** Uses a printed key against an app on the same database; answers /api/me. */
async function whoHasKey(db: Database, key: string) {
  const server = await startTestApp(db);
  try {
    return await server.request({ method: 'GET', url: '/api/me', as: key });
  } finally {
    await server.close();
  }
}

describe('terdut-server admin recover [pglite data directory]', () => {
  let dataDir: string;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'terdut-recover-'));
  });
  after(() => rm(dataDir, { recursive: true, force: true }));

  // PGlite allows one process per data directory, so the test closes its own
  // handle before each command runs.
  const withDatabase = async <T>(work: (db: Database) => Promise<T>): Promise<T> => {
    const db = await openPglite(dataDir);
    try {
      await migrate(db);
      return await work(db);
    } finally {
      await db.close();
    }
  };

  test('before bootstrap it refuses, points at POST /api/bootstrap and names the database it looked in', async () => {
    const result = await runMain(['admin', 'recover', '--username', 'founder'], { TERDUT_DATA_DIR: dataDir });
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /not bootstrapped yet; use POST \/api\/bootstrap/);
    assert.ok(result.stderr.includes(`(in embedded PostgreSQL (PGlite) in ${dataDir})`), result.stderr);
    assert.doesNotMatch(result.stdout, KEY_LINE);
  });

  test('after bootstrap it prints a fresh admin key once, and that key works', async () => {
    await withDatabase(bootstrapThroughApi);
    const result = await runMain(
      ['admin', 'recover', '--username', 'lost-admin', '--email', 'lost@example.com'],
      {
        TERDUT_DATA_DIR: dataDir,
      },
    );
    assert.equal(result.code, 0, result.stderr);
    const key = KEY_LINE.exec(result.stdout)?.[1];
    assert.ok(key, result.stdout);
    assert.equal(result.stdout.split(key).length, 2, 'the key is printed exactly once');
    assert.match(result.stdout, /"lost-admin".*was created as an admin/);

    await withDatabase(async (db) => {
      const me = await whoHasKey(db, key);
      assert.equal(me.status, 200);
      assert.equal(me.body.user.username, 'lost-admin');
      assert.equal(me.body.user.email, 'lost@example.com');
      assert.equal(me.body.user.role, 'admin');
      const audit = await db.query<{ actor: string; actor_user_id: number | null }>(
        "SELECT actor, actor_user_id FROM audit_log WHERE action = 'bootstrap.recover'",
      );
      assert.deepEqual(audit.rows, [{ actor: 'cli', actor_user_id: null }]);
    });
  });

  test('run where no embedded database is, it refuses and makes none there', async () => {
    const elsewhere = join(dataDir, 'not-the-servers-directory');
    const result = await runMain(['admin', 'recover', '--username', 'founder'], {
      TERDUT_DATA_DIR: elsewhere,
    });
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /not bootstrapped yet; use POST \/api\/bootstrap/);
    assert.match(result.stderr, /No embedded database is there, and none was made/);
    assert.match(result.stderr, /set TERDUT_DATA_DIR to its data directory/);
    assert.equal(existsSync(elsewhere), false, 'admin recover made a data directory');
  });

  test('--help explains the command and exits 0 without reading the configuration or the database', async () => {
    const elsewhere = join(dataDir, 'help-only');
    for (const args of [
      ['admin', 'recover', '--help'],
      ['admin', 'recover', '--username', 'founder', '-h'],
    ]) {
      const result = await runMain(args, { TERDUT_DATA_DIR: elsewhere, PORT: 'not-a-port' });
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /^Usage: terdut-server admin recover --username NAME/);
      assert.match(result.stdout, /Exit codes: 0/);
      assert.equal(result.stderr, '');
    }
    const admin = await runMain(['admin', '--help'], { PORT: 'not-a-port' });
    assert.equal(admin.code, 0, admin.stderr);
    assert.match(admin.stdout, /Usage: terdut-server admin recover/);
    const bare = await runMain(['admin'], { PORT: 'not-a-port' });
    assert.equal(bare.code, 2);
    assert.match(bare.stderr, /unknown admin command; usage: terdut-server admin recover/);
    assert.equal(existsSync(elsewhere), false, '--help opened the database');
  });

  test('without --username it prints usage and exits 2', async () => {
    const result = await runMain(['admin', 'recover'], { TERDUT_DATA_DIR: dataDir });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--username is required/);
    assert.match(result.stderr, /usage: terdut-server admin recover --username NAME/);
  });

  test('a bad username is refused naming the field', async () => {
    const result = await runMain(['admin', 'recover', '--username', 'no spaces'], {
      TERDUT_DATA_DIR: dataDir,
    });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /"username" must be/);
  });
});

describe('terdut-server admin recover [postgres DATABASE_URL]', () => {
  let database: Awaited<ReturnType<typeof createTestPostgres>>;
  before(async () => {
    database = await createTestPostgres();
    await bootstrapThroughApi(database.db);
  });
  after(() => database.drop());

  test('it promotes an existing member and prints a key for them', async () => {
    const server = await startTestApp(database.db);
    const member = await server.createUser('demoted-dana');
    await server.close();

    const result = await runMain(['admin', 'recover', '--username', 'demoted-dana'], {
      DATABASE_URL: database.url,
    });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /is now an admin/);
    const key = KEY_LINE.exec(result.stdout)?.[1];
    assert.ok(key, result.stdout);
    const me = await whoHasKey(database.db, key);
    assert.equal(me.status, 200);
    assert.equal(me.body.user.id, member.id);
    assert.equal(me.body.user.role, 'admin');
  });

  test('a connection URL with a password is never echoed', async () => {
    const result = await runMain(['admin', 'recover', '--username', 'someone'], {
      DATABASE_URL: database.url,
    });
    const password = new URL(database.url).password;
    if (password) assert.ok(!result.stdout.includes(password) && !result.stderr.includes(password));
  });
});
