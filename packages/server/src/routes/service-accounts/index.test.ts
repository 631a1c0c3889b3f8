import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { forEachDatabase, startTestApp, type TestApp, type TestUser } from '@terdut/test-support';

forEachDatabase('service accounts', (database, kind) => {
  let server: TestApp;
  let admin: TestUser;
  let member: TestUser;
  before(async () => {
    server = await startTestApp(database());
    admin = await server.createUser('sam', 'admin');
    member = await server.createUser('mo');
  });
  after(() => server.close());

  const createAccount = (name: string, as: TestUser | string = admin) =>
    server.request({
      method: 'POST',
      url: '/api/service-accounts',
      as,
      payload: { name, scope: 'instance' },
    });

  test('creating a service account answers 201 with the account and its first key', async () => {
    const response = await createAccount('operator-prod');
    assert.equal(response.status, 201);
    assert.deepEqual(Object.keys(response.body).sort(), ['key', 'service_account']);
    const account = response.body.service_account;
    assert.deepEqual(Object.keys(account).sort(), ['created_at', 'id', 'name', 'scope']);
    assert.equal(account.name, 'operator-prod');
    assert.equal(account.scope, 'instance');
    assert.match(response.body.key.key, /^[0-9a-f]{64}$/);
    assert.equal(response.body.key.last_used_at, null);
  });

  test('a service account key acts as an admin', async () => {
    const created = await createAccount('acts-as-admin');
    const key = created.body.key.key;
    const users = await server.request({
      method: 'POST',
      url: '/api/users',
      as: key,
      payload: { username: 'made-by-robot', email: 'robot@example.com' },
    });
    assert.equal(users.status, 201);
    const me = await server.request({ method: 'GET', url: '/api/me', as: key });
    assert.equal(me.status, 200);
    assert.equal(me.body.user.username, 'service:acts-as-admin');
  });

  test('a second create with the same name is 409', async () => {
    await createAccount('taken-name');
    const again = await createAccount('taken-name');
    assert.equal(again.status, 409);
    assert.match(again.body.error, /"taken-name" exists/);
  });

  test('a name that differs only in case is the same name: 409, and the lookup it points to finds the account', async () => {
    const created = await createAccount('cased-ops');
    const again = await createAccount('CASED-OPS');
    assert.equal(again.status, 409);
    const found = await server.request({
      method: 'GET',
      url: '/api/service-accounts?name=CASED-OPS',
      as: admin,
    });
    assert.deepEqual(found.body, [created.body.service_account]);
  });

  if (kind === 'postgres') {
    test('concurrent creates of one name: exactly one 201, the rest 409', async () => {
      const answers = await Promise.all(Array.from({ length: 5 }, () => createAccount('raced')));
      const statuses = answers.map((answer) => answer.status).sort();
      assert.deepEqual(statuses, [201, 409, 409, 409, 409]);
    });
  }

  test('GET ?name= finds the account by name, and answers [] when there is none', async () => {
    const created = await createAccount('findable');
    const found = await server.request({
      method: 'GET',
      url: '/api/service-accounts?name=findable',
      as: admin,
    });
    assert.equal(found.status, 200);
    assert.deepEqual(found.body, [created.body.service_account]);
    const none = await server.request({ method: 'GET', url: '/api/service-accounts?name=nope', as: admin });
    assert.deepEqual(none.body, []);
    const all = await server.request({ method: 'GET', url: '/api/service-accounts', as: admin });
    assert.equal(all.body[0].name, 'findable', 'newest first');
  });

  test('an adopted account gets a fresh key; revoking a key stops only that key', async () => {
    const created = await createAccount('adoptable');
    const id = created.body.service_account.id;
    const minted = await server.request({
      method: 'POST',
      url: `/api/service-accounts/${id}/keys`,
      as: admin,
      payload: { name: 'after-crash' },
    });
    assert.equal(minted.status, 201);
    assert.equal(minted.body.name, 'after-crash');
    assert.match(minted.body.key, /^[0-9a-f]{64}$/);

    const revoked = await server.request({
      method: 'DELETE',
      url: `/api/service-accounts/${id}/keys/${created.body.key.id}`,
      as: admin,
    });
    assert.equal(revoked.status, 204);
    assert.equal(
      (await server.request({ method: 'GET', url: '/api/me', as: created.body.key.key })).status,
      401,
    );
    assert.equal((await server.request({ method: 'GET', url: '/api/me', as: minted.body.key })).status, 200);
  });

  test("listing an account's keys shows every key newest first, never the key itself", async () => {
    const created = await createAccount('key-lister');
    const id = created.body.service_account.id;
    const minted = await server.request({
      method: 'POST',
      url: `/api/service-accounts/${id}/keys`,
      as: admin,
      payload: { name: 'second' },
    });
    const listed = await server.request({
      method: 'GET',
      url: `/api/service-accounts/${id}/keys`,
      as: admin,
    });
    assert.equal(listed.status, 200);
    const { key: _second, ...second } = minted.body;
    const { key: _first, ...first } = created.body.key;
    assert.deepEqual(listed.body, [second, first]);
    assert.deepEqual(Object.keys(listed.body[0]).sort(), [
      'created_at',
      'id',
      'last_used_at',
      'name',
      'user_id',
    ]);
    assert.ok(!JSON.stringify(listed.body).includes(created.body.key.key), 'no secret in the list');

    // Using a key shows up in the list, the way GET /api/users/{id}/api-keys shows it.
    await server.request({ method: 'GET', url: '/api/me', as: created.body.key.key });
    const afterUse = await server.request({
      method: 'GET',
      url: `/api/service-accounts/${id}/keys`,
      as: admin,
    });
    assert.match(afterUse.body[1].last_used_at, /^\d{4}-\d\d-\d\dT.*Z$/);

    await server.request({
      method: 'DELETE',
      url: `/api/service-accounts/${id}/keys/${created.body.key.id}`,
      as: admin,
    });
    const afterRevoke = await server.request({
      method: 'GET',
      url: `/api/service-accounts/${id}/keys`,
      as: admin,
    });
    assert.deepEqual(
      afterRevoke.body.map((key: { id: number }) => key.id),
      [minted.body.id],
      'a revoked key is gone from the list',
    );
  });

  test('listing keys needs credentials (401)', async () => {
    const created = await createAccount('keys-need-credentials');
    const response = await server.request({
      method: 'GET',
      url: `/api/service-accounts/${created.body.service_account.id}/keys`,
    });
    assert.equal(response.status, 401);
  });

  test('a service account may revoke its own key (the operator finaliser does this)', async () => {
    const created = await createAccount('self-revoking');
    const response = await server.request({
      method: 'DELETE',
      url: `/api/service-accounts/${created.body.service_account.id}/keys/${created.body.key.id}`,
      as: created.body.key.key,
    });
    assert.equal(response.status, 204);
  });

  test('deleting a service account removes its keys and frees its name', async () => {
    const created = await createAccount('short-lived-robot');
    const id = created.body.service_account.id;
    const deleted = await server.request({ method: 'DELETE', url: `/api/service-accounts/${id}`, as: admin });
    assert.equal(deleted.status, 204);
    assert.equal(
      (await server.request({ method: 'GET', url: '/api/me', as: created.body.key.key })).status,
      401,
    );
    const list = await server.request({
      method: 'GET',
      url: '/api/service-accounts?name=short-lived-robot',
      as: admin,
    });
    assert.deepEqual(list.body, []);
    assert.equal((await createAccount('short-lived-robot')).status, 201);
    const again = await server.request({ method: 'DELETE', url: `/api/service-accounts/${id}`, as: admin });
    assert.equal(again.status, 404);
  });

  test('members may not touch service accounts (403)', async () => {
    const created = await createAccount('guarded');
    const id = created.body.service_account.id;
    const attempts = [
      { method: 'POST', url: '/api/service-accounts', payload: { name: 'mine', scope: 'instance' } },
      { method: 'GET', url: '/api/service-accounts' },
      { method: 'GET', url: `/api/service-accounts/${id}/keys` },
      { method: 'POST', url: `/api/service-accounts/${id}/keys`, payload: { name: 'x' } },
      { method: 'DELETE', url: `/api/service-accounts/${id}/keys/${created.body.key.id}` },
      { method: 'DELETE', url: `/api/service-accounts/${id}` },
    ] as const;
    for (const attempt of attempts) {
      const response = await server.request({ ...attempt, as: member });
      assert.equal(response.status, 403, `${attempt.method} ${attempt.url}`);
    }
  });

  test('unknown accounts and keys are 404', async () => {
    const created = await createAccount('has-keys');
    const id = created.body.service_account.id;
    const cases = [
      { method: 'GET', url: '/api/service-accounts/999999/keys' },
      { method: 'POST', url: '/api/service-accounts/999999/keys', payload: { name: 'x' } },
      { method: 'DELETE', url: '/api/service-accounts/999999/keys/1' },
      { method: 'DELETE', url: `/api/service-accounts/${id}/keys/999999` },
      { method: 'DELETE', url: '/api/service-accounts/999999' },
    ] as const;
    for (const attempt of cases) {
      const response = await server.request({ ...attempt, as: admin });
      assert.equal(response.status, 404, `${attempt.method} ${attempt.url}`);
    }
  });

  test('bad names and scopes are 400 naming the field', async () => {
    const cases = [
      [{ scope: 'instance' }, /"name" is required/],
      [{ name: 'has space', scope: 'instance' }, /"name" must be/],
      [{ name: 'ok' }, /"scope" is required/],
      [{ name: 'ok', scope: 'cluster' }, /"scope"/],
    ] as const;
    for (const [payload, error] of cases) {
      const response = await server.request({
        method: 'POST',
        url: '/api/service-accounts',
        as: admin,
        payload,
      });
      assert.equal(response.status, 400, JSON.stringify(payload));
      assert.match(response.body.error, error);
    }
  });

  test('service accounts are not listed among people', async () => {
    await createAccount('not-a-person');
    const users = await server.request({ method: 'GET', url: '/api/users', as: admin });
    assert.ok(!users.body.some((user: { username: string }) => user.username.includes('not-a-person')));
  });
});
