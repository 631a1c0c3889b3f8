import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, symlink, rename, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { forEachDatabase, ManualClock, startTestApp, testConfig, type TestApp } from '@terdut/test-support';
import { loadConfig } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { insertUser } from '../../repositories/users.ts';

const TOKEN = testConfig().bootstrapToken!;

/** Back to a never-bootstrapped database, without a new database per test. */
async function forgetEveryone(db: Database): Promise<void> {
  await db.query(
    'TRUNCATE audit_log, bootstrap_state, api_keys, service_accounts, users RESTART IDENTITY CASCADE',
  );
}

// Each test calls from its own address, so the per-address rate limit of one
// test never refuses another's requests.
let addresses = 0;
const freshAddress = () => `10.0.${Math.floor(++addresses / 250)}.${addresses % 250}`;

forEachDatabase('bootstrap', (database, kind) => {
  let server: TestApp;
  let clock: ManualClock;
  let address: string;
  before(async () => {
    clock = new ManualClock();
    server = await startTestApp(database(), { clock });
  });
  after(() => server.close());
  beforeEach(async () => {
    await forgetEveryone(database());
    address = freshAddress();
  });

  const bootstrap = (
    token: string | undefined,
    payload: object = { username: 'root', email: 'root@example.com' },
  ) =>
    server.request({
      method: 'POST',
      url: '/api/bootstrap',
      remoteAddress: address,
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      payload,
    });
  const recover = (token: string | undefined, payload: object) =>
    server.request({
      method: 'POST',
      url: '/api/bootstrap/recover',
      remoteAddress: address,
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      payload,
    });
  const status = async () => (await server.request({ method: 'GET', url: '/api/bootstrap' })).body;

  test('a fresh instance says it is not bootstrapped, without credentials', async () => {
    assert.deepEqual(await status(), { bootstrapped: false });
  });

  test('bootstrap with the token creates an admin and a working key: 201 {user, api_key}', async () => {
    const response = await bootstrap(TOKEN);
    assert.equal(response.status, 201);
    assert.deepEqual(Object.keys(response.body).sort(), ['api_key', 'user']);
    assert.deepEqual(Object.keys(response.body.user).sort(), [
      'created_at',
      'email',
      'id',
      'role',
      'username',
    ]);
    assert.equal(response.body.user.username, 'root');
    assert.equal(response.body.user.role, 'admin');
    assert.deepEqual(Object.keys(response.body.api_key).sort(), [
      'created_at',
      'id',
      'key',
      'last_used_at',
      'name',
      'user_id',
    ]);
    assert.match(response.body.api_key.key, /^[0-9a-f]{64}$/);
    assert.equal(response.body.api_key.user_id, response.body.user.id);
    assert.equal(response.body.api_key.last_used_at, null);

    const me = await server.request({ method: 'GET', url: '/api/me', as: response.body.api_key.key });
    assert.equal(me.status, 200);
    assert.equal(me.body.user.role, 'admin');
    assert.deepEqual(await status(), { bootstrapped: true });
    const record = await database().query<{ user_id: number }>('SELECT user_id FROM bootstrap_state');
    assert.deepEqual(record.rows, [{ user_id: response.body.user.id }]);
  });

  test('a second bootstrap is refused with 403 "already bootstrapped"', async () => {
    assert.equal((await bootstrap(TOKEN)).status, 201);
    const second = await bootstrap(TOKEN, { username: 'intruder', email: 'intruder@example.com' });
    assert.equal(second.status, 403);
    assert.deepEqual(second.body, { error: 'already bootstrapped' });
    const users = await database().query("SELECT id FROM users WHERE username = 'intruder'");
    assert.equal(users.rows.length, 0);
  });

  test('a missing token is 401 and creates nothing', async () => {
    const response = await bootstrap(undefined);
    assert.equal(response.status, 401);
    assert.match(response.body.error, /bootstrap token required/);
    assert.deepEqual(await status(), { bootstrapped: false });
  });

  test('a wrong token is 401; the answer never contains the real token', async () => {
    const response = await bootstrap('0'.repeat(64));
    assert.equal(response.status, 401);
    assert.deepEqual(response.body, { error: 'invalid bootstrap token' });
    assert.ok(!JSON.stringify(response.headers).includes(TOKEN));
    assert.deepEqual(await status(), { bootstrapped: false });
  });

  test('a blank email is accepted (an operator admin has no mailbox)', async () => {
    const response = await bootstrap(TOKEN, { username: 'terdut-operator', email: '' });
    assert.equal(response.status, 201);
    assert.equal(response.body.user.email, '');
  });

  test('an API key is not a bootstrap token (401)', async () => {
    const first = await bootstrap(TOKEN);
    const withKey = await recover(first.body.api_key.key, { username: 'root' });
    assert.equal(withKey.status, 401);
  });

  test('without the token, a bad body still answers 401, not 400', async () => {
    const response = await bootstrap('wrong', { username: 'has space' });
    assert.equal(response.status, 401);
  });

  test('with the token, a bad body is 400 naming the field', async () => {
    const missing = await bootstrap(TOKEN, { username: 'root' });
    assert.equal(missing.status, 400);
    assert.match(missing.body.error, /"email" is required/);
    const badEmail = await bootstrap(TOKEN, { username: 'root', email: 'nowhere' });
    assert.equal(badEmail.status, 400);
    assert.match(badEmail.body.error, /"email" must be an email address/);
    const badName = await bootstrap(TOKEN, { username: 'has space', email: 'root@example.com' });
    assert.equal(badName.status, 400);
    assert.match(badName.body.error, /"username"/);
    assert.deepEqual(await status(), { bootstrapped: false });
  });

  test('refused attempts and the bootstrap itself are audited', async () => {
    await bootstrap('0'.repeat(64));
    const done = await bootstrap(TOKEN);
    const rows = await database().query<{
      action: string;
      actor: string;
      target: string | null;
      client_address: string;
    }>('SELECT action, actor, target, client_address FROM audit_log ORDER BY id');
    assert.deepEqual(rows.rows, [
      { action: 'bootstrap.denied', actor: 'anonymous', target: null, client_address: address },
      {
        action: 'bootstrap',
        actor: 'bootstrap token',
        target: `user:${done.body.user.id}`,
        client_address: address,
      },
    ]);
  });

  test('a flood of refused attempts from one address costs one audit row per minute, with a count', async () => {
    for (let i = 0; i < 8; i++) {
      const refused = await server.app.inject({
        method: 'POST',
        url: '/api/bootstrap',
        remoteAddress: address,
        headers: { authorization: `Bearer wrong-token-${i}` },
        payload: { username: 'x', email: '' },
      });
      assert.equal(refused.statusCode, 401);
    }
    const rows = await database().query<{ action: string; detail: { reason: string; count: number } }>(
      'SELECT action, detail FROM audit_log ORDER BY id',
    );
    // Two rows only if the attempts straddled a minute boundary.
    assert.ok(rows.rows.length <= 2, `${rows.rows.length} rows`);
    assert.ok(
      rows.rows.every((row) => row.action === 'bootstrap.denied' && row.detail.reason === 'wrong token'),
    );
    assert.equal(
      rows.rows.reduce((sum, row) => sum + row.detail.count, 0),
      8,
    );
  });

  test('attempts from one IPv6 network (a /64) share one limit and one audit row, whatever address each uses', async () => {
    // A subscriber holds a whole /64 (RFC 6177): counted per address, each of its 2^64 addresses
    // had 10 tries a minute of its own and wrote audit rows of its own, without bound.
    const network = `2001:db8:${(++addresses).toString(16)}:1`;
    const fromNetwork = (host: number) =>
      server.request({
        method: 'POST',
        url: '/api/bootstrap',
        remoteAddress: `${network}:${host.toString(16)}::1`,
        headers: { authorization: `Bearer wrong-token-${host}` },
        payload: { username: 'x', email: '' },
      });
    for (let host = 1; host <= 10; host++) assert.equal((await fromNetwork(host)).status, 401);
    const limited = await fromNetwork(11);
    assert.equal(limited.status, 429, JSON.stringify(limited.body));
    const rows = await database().query<{ client_address: string; detail: { count: number } }>(
      "SELECT client_address, detail FROM audit_log WHERE action = 'bootstrap.denied' ORDER BY id",
    );
    // Two rows only if the attempts straddled a minute boundary.
    assert.ok(rows.rows.length <= 2, `${rows.rows.length} rows: ${JSON.stringify(rows.rows)}`);
    assert.deepEqual(new Set(rows.rows.map((row) => row.client_address)), new Set([`${network}::/64`]));
    assert.equal(
      rows.rows.reduce((sum, row) => sum + row.detail.count, 0),
      10,
    );

    const elsewhere = await server.request({
      method: 'POST',
      url: '/api/bootstrap',
      remoteAddress: `2001:db8:${(++addresses).toString(16)}:1::1`,
      headers: { authorization: `Bearer ${TOKEN}` },
      payload: { username: 'root', email: 'root@example.com' },
    });
    assert.equal(elsewhere.status, 201, 'another /64 is not affected');
  });

  test('a database with people but no bootstrap record (pre-protocol) counts as bootstrapped', async () => {
    const veteran = await insertUser(database(), {
      username: 'veteran',
      email: 'v@example.com',
      role: 'member',
    });
    assert.deepEqual(await status(), { bootstrapped: true });
    const response = await bootstrap(TOKEN);
    assert.equal(response.status, 403);
    assert.deepEqual(response.body, { error: 'already bootstrapped' });

    const recovered = await recover(TOKEN, { username: 'veteran' });
    assert.equal(recovered.status, 201);
    assert.equal(recovered.body.user.id, veteran.id);
    assert.equal(recovered.body.user.role, 'admin');
    const me = await server.request({ method: 'GET', url: '/api/me', as: recovered.body.api_key.key });
    assert.equal(me.status, 200);
  });

  test('recover before bootstrap is 409 and points at POST /api/bootstrap', async () => {
    const response = await recover(TOKEN, { username: 'root', email: 'root@example.com' });
    assert.equal(response.status, 409);
    assert.deepEqual(response.body, { error: 'not bootstrapped yet; use POST /api/bootstrap' });
  });

  test('recover mints a fresh key for an existing admin; the old key keeps working', async () => {
    const first = await bootstrap(TOKEN);
    const recovered = await recover(TOKEN, { username: 'root', email: 'root@example.com' });
    assert.equal(recovered.status, 201);
    assert.deepEqual(Object.keys(recovered.body).sort(), ['api_key', 'user']);
    assert.equal(recovered.body.user.id, first.body.user.id);
    assert.notEqual(recovered.body.api_key.key, first.body.api_key.key);
    for (const key of [first.body.api_key.key, recovered.body.api_key.key]) {
      assert.equal((await server.request({ method: 'GET', url: '/api/me', as: key })).status, 200);
    }
  });

  test('recover promotes a member, restores a deleted user and creates a missing one', async () => {
    const first = await bootstrap(TOKEN);
    const admin = first.body.api_key.key;
    const member = await server.request({
      method: 'POST',
      url: '/api/users',
      as: admin,
      payload: { username: 'mia', email: 'mia@example.com' },
    });
    const promoted = await recover(TOKEN, { username: 'mia' });
    assert.equal(promoted.body.user.id, member.body.id);
    assert.equal(promoted.body.user.role, 'admin');

    await server.request({
      method: 'PUT',
      url: `/api/users/${member.body.id}/role`,
      as: admin,
      payload: { role: 'member' },
    });
    const password = await server.request({
      method: 'PUT',
      url: `/api/users/${member.body.id}/password`,
      as: admin,
      payload: { password: 'correct horse battery staple' },
    });
    assert.equal(password.status, 204);
    await server.request({ method: 'DELETE', url: `/api/users/${member.body.id}`, as: admin });
    const restored = await recover(TOKEN, { username: 'mia' });
    assert.equal(restored.status, 201);
    assert.equal(restored.body.user.id, member.body.id, 'the same person comes back, history intact');
    assert.equal(restored.body.user.role, 'admin');
    const me = await server.request({ method: 'GET', url: '/api/me', as: restored.body.api_key.key });
    assert.equal(
      me.body.has_password,
      false,
      'the password from before the deletion no longer opens the account',
    );

    const created = await recover(TOKEN, { username: 'newcomer', email: 'new@example.com' });
    assert.equal(created.status, 201);
    assert.equal(created.body.user.email, 'new@example.com');
    assert.equal(created.body.user.role, 'admin');

    const outcomes = await database().query<{ outcome: string }>(
      "SELECT detail->>'outcome' AS outcome FROM audit_log WHERE action = 'bootstrap.recover' ORDER BY id",
    );
    assert.deepEqual(
      outcomes.rows.map((row) => row.outcome),
      ['promoted', 'restored', 'created'],
    );
  });

  test('recover with a wrong or missing token is 401', async () => {
    await bootstrap(TOKEN);
    assert.equal((await recover('x'.repeat(64), { username: 'root' })).status, 401);
    assert.equal((await recover(undefined, { username: 'root' })).status, 401);
  });

  test('a request without a token is told so (401) even when the address is limited, and spends none of its attempts', async () => {
    for (let attempt = 0; attempt < 15; attempt++) {
      const missing = await bootstrap(undefined);
      assert.equal(missing.status, 401);
      assert.match(missing.body.error, /bootstrap token required/);
    }
    for (let attempt = 0; attempt < 10; attempt++) assert.equal((await bootstrap('wrong')).status, 401);
    assert.equal((await bootstrap('wrong')).status, 429);
    assert.equal((await recover(undefined, { username: 'root' })).status, 401);
  });

  test('more than 10 attempts a minute from one address get 429 with Retry-After', async () => {
    for (let attempt = 0; attempt < 10; attempt++) {
      assert.equal((await bootstrap('wrong')).status, 401);
    }
    const limited = await bootstrap(TOKEN);
    assert.equal(limited.status, 429);
    assert.match(limited.body.error, /too many/);
    const retryAfter = Number(limited.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After: ${String(limited.headers['retry-after'])}`);
    assert.equal((await recover(TOKEN, { username: 'root' })).status, 429, 'both endpoints share the limit');

    const elsewhere = await server.request({
      method: 'POST',
      url: '/api/bootstrap',
      remoteAddress: freshAddress(),
      headers: { authorization: `Bearer ${TOKEN}` },
      payload: { username: 'root', email: 'root@example.com' },
    });
    assert.equal(elsewhere.status, 201, 'another address is not affected');

    clock.advance(60_000);
    assert.equal((await bootstrap(TOKEN)).status, 403, 'a minute later the address may try again');
  });

  if (kind === 'postgres') {
    test('ten concurrent bootstraps: exactly one 201, nine 403, one admin', async () => {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, index) =>
          server.request({
            method: 'POST',
            url: '/api/bootstrap',
            remoteAddress: freshAddress(),
            headers: { authorization: `Bearer ${TOKEN}` },
            payload: { username: `racer${index}`, email: `racer${index}@example.com` },
          }),
        ),
      );
      const statuses = answers.map((answer) => answer.status).sort();
      assert.deepEqual(statuses, [201, 403, 403, 403, 403, 403, 403, 403, 403, 403]);
      const admins = await database().query("SELECT id FROM users WHERE role = 'admin'");
      assert.equal(admins.rows.length, 1);
      const records = await database().query('SELECT user_id FROM bootstrap_state');
      assert.equal(records.rows.length, 1);
    });
  }
});

forEachDatabase('bootstrap token sources', (database) => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'terdut-token-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));
  beforeEach(() => forgetEveryone(database()));

  /** Admitted requests with an empty body get 400; refused ones 401 or 503. */
  const probe = (server: TestApp, token: string) =>
    server.request({
      method: 'POST',
      url: '/api/bootstrap',
      remoteAddress: freshAddress(),
      headers: { authorization: `Bearer ${token}` },
      payload: {},
    });
  const newToken = () => randomBytes(32).toString('hex');

  test('a rotated token file is picked up without a restart (Kubernetes symlink swap)', async () => {
    // The layout kubelet gives a Secret volume: token -> ..data/token, ..data -> ..<timestamp>.
    const volume = join(dir, 'volume');
    await mkdir(join(volume, '..v1'), { recursive: true });
    const first = newToken();
    await writeFile(join(volume, '..v1', 'token'), first);
    await symlink('..v1', join(volume, '..data'));
    await symlink(join('..data', 'token'), join(volume, 'token'));
    const server = await startTestApp(database(), {
      config: loadConfig({ TERDUT_BOOTSTRAP_TOKEN_FILE: join(volume, 'token') }),
    });
    try {
      assert.equal((await probe(server, first)).status, 400);

      const second = newToken();
      await mkdir(join(volume, '..v2'));
      await writeFile(join(volume, '..v2', 'token'), `${second}\n`);
      await symlink('..v2', join(volume, '..data_tmp'));
      await rename(join(volume, '..data_tmp'), join(volume, '..data'));

      assert.equal((await probe(server, first)).status, 401, 'the old token stops working');
      assert.equal(
        (await probe(server, second)).status,
        400,
        'the new token works, trailing newline ignored',
      );
    } finally {
      await server.close();
    }
  });

  test('a token file rewritten in place is picked up too', async () => {
    const file = join(dir, 'plain-token');
    const first = newToken();
    await writeFile(file, first);
    const server = await startTestApp(database(), {
      config: loadConfig({ TERDUT_BOOTSTRAP_TOKEN_FILE: file }),
    });
    try {
      assert.equal((await probe(server, first)).status, 400);
      const second = newToken();
      await writeFile(file, second);
      assert.equal((await probe(server, second)).status, 400);
      assert.equal((await probe(server, first)).status, 401);
    } finally {
      await server.close();
    }
  });

  test('an unreadable token file answers 503 naming the file, never a token', async () => {
    const file = join(dir, 'missing-token');
    const server = await startTestApp(database(), {
      config: loadConfig({ TERDUT_BOOTSTRAP_TOKEN_FILE: file }),
    });
    try {
      const response = await probe(server, TOKEN);
      assert.equal(response.status, 503);
      assert.ok(response.body.error.includes(file), response.body.error);
      assert.match(response.body.error, /TERDUT_BOOTSTRAP_TOKEN_FILE/);
      assert.ok(!response.body.error.includes(TOKEN));

      await writeFile(file, '   \n');
      const empty = await probe(server, TOKEN);
      assert.equal(empty.status, 503);
      assert.match(empty.body.error, /empty/);
    } finally {
      await server.close();
    }
  });

  test('with no token configured, a random 64-hex token is generated and accepted', async () => {
    const server = await startTestApp(database(), { config: loadConfig({}) });
    try {
      const generated = server.app.services.bootstrap.generatedToken;
      assert.match(generated ?? '', /^[0-9a-f]{64}$/);
      assert.equal((await probe(server, generated!)).status, 400);
      assert.equal((await probe(server, TOKEN)).status, 401);
    } finally {
      await server.close();
    }
  });

  test('a configured token is never reported as generated', async () => {
    const server = await startTestApp(database());
    try {
      assert.equal(server.app.services.bootstrap.generatedToken, undefined);
    } finally {
      await server.close();
    }
  });
});
