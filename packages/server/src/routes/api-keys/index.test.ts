import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { forEachDatabase, startTestApp, type TestApp, type TestUser } from '@terdut/test-support';

forEachDatabase('API keys', (database) => {
  let server: TestApp;
  let admin: TestUser;
  let member: TestUser;
  let other: TestUser;
  before(async () => {
    server = await startTestApp(database());
    admin = await server.createUser('kim', 'admin');
    member = await server.createUser('lee');
    other = await server.createUser('pat');
  });
  after(() => server.close());

  const createKey = (owner: TestUser, as: TestUser, name = 'laptop') =>
    server.request({ method: 'POST', url: `/api/users/${owner.id}/api-keys`, as, payload: { name } });

  test('creating a key answers 201 with the key shown once: 64 hex characters', async () => {
    const response = await createKey(member, member, 'terminal');
    assert.equal(response.status, 201);
    assert.deepEqual(Object.keys(response.body).sort(), [
      'created_at',
      'id',
      'key',
      'last_used_at',
      'name',
      'user_id',
    ]);
    assert.match(response.body.key, /^[0-9a-f]{64}$/);
    assert.equal(response.body.user_id, member.id);
    assert.equal(response.body.name, 'terminal');
    assert.equal(response.body.last_used_at, null);

    const list = await server.request({ method: 'GET', url: `/api/users/${member.id}/api-keys`, as: member });
    const listed = list.body.find((key: { id: number }) => key.id === response.body.id);
    assert.equal('key' in listed, false, 'a listed key never carries the secret');
  });

  test('only a hash of the key is stored', async () => {
    const response = await createKey(member, member, 'hash-check');
    const stored = await database().query<{ key_hash: string }>(
      'SELECT key_hash FROM api_keys WHERE id = $1',
      [response.body.id],
    );
    assert.notEqual(stored.rows[0]!.key_hash, response.body.key);
    assert.match(stored.rows[0]!.key_hash, /^[0-9a-f]{64}$/);
  });

  test('a new key works at once; last_used_at is null until it is used, then set', async () => {
    const created = await createKey(member, member, 'fresh');
    const me = await server.request({ method: 'GET', url: '/api/me', as: created.body.key });
    assert.equal(me.status, 200);
    assert.equal(me.body.user.id, member.id);
    const list = await server.request({ method: 'GET', url: `/api/users/${member.id}/api-keys`, as: member });
    const used = list.body.find((key: { id: number }) => key.id === created.body.id);
    assert.match(used.last_used_at, /^\d{4}-\d\d-\d\dT.*Z$/);
  });

  test('keys are listed newest first', async () => {
    const first = await createKey(other, other, 'older');
    const second = await createKey(other, other, 'newer');
    const list = await server.request({ method: 'GET', url: `/api/users/${other.id}/api-keys`, as: other });
    assert.equal(list.status, 200);
    const ids = list.body.map((key: { id: number }) => key.id);
    assert.ok(ids.indexOf(second.body.id) < ids.indexOf(first.body.id));
  });

  test("a member may not list, create or delete someone else's keys (403)", async () => {
    const list = await server.request({ method: 'GET', url: `/api/users/${other.id}/api-keys`, as: member });
    assert.equal(list.status, 403);
    assert.equal((await createKey(other, member)).status, 403);
    const target = await createKey(other, other, 'target');
    const deleted = await server.request({
      method: 'DELETE',
      url: `/api/users/${other.id}/api-keys/${target.body.id}`,
      as: member,
    });
    assert.equal(deleted.status, 403);
  });

  test("an admin lists, creates and deletes anyone's keys", async () => {
    const created = await createKey(other, admin, 'issued-by-admin');
    assert.equal(created.status, 201);
    const list = await server.request({ method: 'GET', url: `/api/users/${other.id}/api-keys`, as: admin });
    assert.ok(list.body.some((key: { id: number }) => key.id === created.body.id));
    const deleted = await server.request({
      method: 'DELETE',
      url: `/api/users/${other.id}/api-keys/${created.body.id}`,
      as: admin,
    });
    assert.equal(deleted.status, 204);
  });

  test('a deleted key stops working at once', async () => {
    const created = await createKey(member, member, 'short-lived');
    const deleted = await server.request({
      method: 'DELETE',
      url: `/api/users/${member.id}/api-keys/${created.body.id}`,
      as: member,
    });
    assert.equal(deleted.status, 204);
    const me = await server.request({ method: 'GET', url: '/api/me', as: created.body.key });
    assert.equal(me.status, 401);
  });

  test("deleting a key that is not that user's is 404", async () => {
    const otherKey = await createKey(other, other, 'not-yours');
    const wrongOwner = await server.request({
      method: 'DELETE',
      url: `/api/users/${member.id}/api-keys/${otherKey.body.id}`,
      as: member,
    });
    assert.equal(wrongOwner.status, 404);
    const missing = await server.request({
      method: 'DELETE',
      url: `/api/users/${member.id}/api-keys/999999`,
      as: member,
    });
    assert.equal(missing.status, 404);
    assert.match(missing.body.error, /API key 999999/);
  });

  test('an unknown user is 404 for admins', async () => {
    const list = await server.request({ method: 'GET', url: '/api/users/999999/api-keys', as: admin });
    assert.equal(list.status, 404);
    const created = await server.request({
      method: 'POST',
      url: '/api/users/999999/api-keys',
      as: admin,
      payload: { name: 'x' },
    });
    assert.equal(created.status, 404);
  });

  test('a missing or blank key name is 400 naming the field', async () => {
    const missing = await server.request({
      method: 'POST',
      url: `/api/users/${member.id}/api-keys`,
      as: member,
      payload: {},
    });
    assert.equal(missing.status, 400);
    assert.match(missing.body.error, /"name" is required/);
    const blank = await createKey(member, member, '   ');
    assert.equal(blank.status, 400);
    assert.match(blank.body.error, /"name"/);
  });

  test('creating and deleting keys is audited without the secret', async () => {
    const created = await createKey(member, member, 'audited');
    await server.request({
      method: 'DELETE',
      url: `/api/users/${member.id}/api-keys/${created.body.id}`,
      as: member,
    });
    const rows = await database().query<{ action: string; detail: unknown }>(
      'SELECT action, detail FROM audit_log WHERE target = $1 ORDER BY id',
      [`api_key:${created.body.id}`],
    );
    assert.deepEqual(
      rows.rows.map((row) => row.action),
      ['api_key.created', 'api_key.deleted'],
    );
    assert.ok(!JSON.stringify(rows.rows).includes(created.body.key));
  });
});
