import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { forEachDatabase, startTestApp, type TestApp, type TestUser } from '@terdut/test-support';

forEachDatabase('audit log', (database) => {
  let server: TestApp;
  let admin: TestUser;
  let member: TestUser;
  before(async () => {
    server = await startTestApp(database());
    admin = await server.createUser('audrey', 'admin');
    member = await server.createUser('milo');
  });
  after(() => server.close());

  const audit = (query = '', as: TestUser = admin) =>
    server.request({ method: 'GET', url: `/api/audit${query}`, as });

  test('identity changes appear newest first with who, what, on whom and from where', async () => {
    const created = await server.request({
      method: 'POST',
      url: '/api/users',
      as: admin,
      remoteAddress: '192.0.2.7',
      payload: { username: 'carol', email: 'carol@example.com' },
    });
    await server.request({
      method: 'PUT',
      url: `/api/users/${created.body.id}/role`,
      as: admin,
      payload: { role: 'admin' },
    });
    const response = await audit('?limit=2');
    assert.equal(response.status, 200);
    assert.equal(response.body.length, 2);
    const [roleChange, creation] = response.body;
    assert.equal(roleChange.action, 'user.role_changed');
    assert.deepEqual(roleChange.detail, { username: 'carol', from: 'member', to: 'admin' });
    assert.deepEqual(Object.keys(creation).sort(), [
      'action',
      'actor',
      'actor_user_id',
      'client_address',
      'created_at',
      'detail',
      'id',
      'target',
    ]);
    assert.equal(creation.action, 'user.created');
    assert.equal(creation.actor, 'audrey');
    assert.equal(creation.actor_user_id, admin.id);
    assert.equal(creation.target, `user:${created.body.id}`);
    assert.equal(creation.client_address, '192.0.2.7');
    assert.ok(roleChange.id > creation.id);
  });

  test('entries without an actor user or target omit those fields', async () => {
    await database().query(
      "INSERT INTO audit_log (actor, action, detail) VALUES ('cli', 'bootstrap.recover', '{}'::jsonb)",
    );
    const [entry] = (await audit('?limit=1')).body;
    assert.equal(entry.actor, 'cli');
    assert.equal('actor_user_id' in entry, false);
    assert.equal('target' in entry, false);
    assert.equal('client_address' in entry, false);
    assert.deepEqual(entry.detail, {});
  });

  test('every identity change is recorded: users, roles, keys, service accounts', async () => {
    const before = (await audit('?limit=1')).body[0]?.id ?? 0;
    const user = await server.request({
      method: 'POST',
      url: '/api/users',
      as: admin,
      payload: { username: 'dora', email: 'dora@example.com' },
    });
    const role = { method: 'PUT', url: `/api/users/${user.body.id}/role`, as: admin } as const;
    await server.request({ ...role, payload: { role: 'admin' } });
    const key = await server.request({
      method: 'POST',
      url: `/api/users/${user.body.id}/api-keys`,
      as: admin,
      payload: { name: 'k' },
    });
    await server.request({
      method: 'DELETE',
      url: `/api/users/${user.body.id}/api-keys/${key.body.id}`,
      as: admin,
    });
    await server.request({ method: 'DELETE', url: `/api/users/${user.body.id}`, as: admin });
    const account = await server.request({
      method: 'POST',
      url: '/api/service-accounts',
      as: admin,
      payload: { name: 'audited-robot', scope: 'instance' },
    });
    const id = account.body.service_account.id;
    const extra = await server.request({
      method: 'POST',
      url: `/api/service-accounts/${id}/keys`,
      as: admin,
      payload: { name: 'second' },
    });
    await server.request({
      method: 'DELETE',
      url: `/api/service-accounts/${id}/keys/${extra.body.id}`,
      as: admin,
    });
    await server.request({ method: 'DELETE', url: `/api/service-accounts/${id}`, as: admin });

    const entries = (await audit('?limit=50')).body.filter((entry: { id: number }) => entry.id > before);
    assert.deepEqual(entries.map((entry: { action: string }) => entry.action).reverse(), [
      'user.created',
      'user.role_changed',
      'api_key.created',
      'api_key.deleted',
      'user.deleted',
      'service_account.created',
      'service_account.key_created',
      'service_account.key_deleted',
      'service_account.deleted',
    ]);
    const secrets = [key.body.key, account.body.key.key, extra.body.key];
    assert.ok(!secrets.some((secret) => JSON.stringify(entries).includes(secret)), 'no key in the audit log');
  });

  test("where a person's pages go is recorded: contact methods and the ntfy topic, without targets or secrets", async () => {
    const before = (await audit('?limit=1')).body[0]?.id ?? 0;
    const methods = `/api/users/${member.id}/contact-methods`;
    // An admin pointing someone's pages (and the Acknowledge that acts as them) somewhere else.
    const hook = await server.request({
      method: 'POST',
      url: methods,
      as: admin,
      payload: { kind: 'webhook', target: 'https://hooks.example.com/milo', name: 'relay' },
    });
    assert.equal(hook.status, 201);
    const phone = await server.request({
      method: 'POST',
      url: methods,
      as: member,
      payload: { kind: 'ntfy', target: 'milo-pager-q8z3', name: 'phone' },
    });
    const method = (id: number) => `${methods}/${id}`;
    await server.request({
      method: 'PATCH',
      url: method(phone.body.id),
      as: member,
      payload: { enabled: false },
    });
    await server.request({ method: 'DELETE', url: method(hook.body.id), as: member });
    const notify = { method: 'PUT', url: `/api/users/${member.id}/notify`, as: admin } as const;
    await server.request({ ...notify, payload: { ntfy_topic: 'milo-legacy-k2p9' } });
    await server.request({ ...notify, payload: { ntfy_topic: '' } });

    const entries = (await audit('?limit=50')).body.filter((entry: { id: number }) => entry.id > before);
    assert.deepEqual(entries.map((entry: any) => [entry.action, entry.actor, entry.target]).reverse(), [
      ['contact_method.created', 'audrey', `contact_method:${hook.body.id}`],
      ['contact_method.created', 'milo', `contact_method:${phone.body.id}`],
      ['contact_method.disabled', 'milo', `contact_method:${phone.body.id}`],
      ['contact_method.deleted', 'milo', `contact_method:${hook.body.id}`],
      ['user.ntfy_topic_set', 'audrey', `user:${member.id}`],
      ['user.ntfy_topic_cleared', 'audrey', `user:${member.id}`],
    ]);
    assert.deepEqual(entries.at(-1).detail, { user_id: member.id, kind: 'webhook', name: 'relay' });
    const text = JSON.stringify(entries);
    for (const secret of ['hooks.example.com', hook.body.secret, 'milo-pager-q8z3', 'milo-legacy-k2p9']) {
      assert.ok(!text.includes(secret), `${secret} is not in the audit log`);
    }
  });

  test('members may not read the audit log (403)', async () => {
    const response = await audit('', member);
    assert.equal(response.status, 403);
  });

  test('a limit outside 1-1000 is 400 naming limit', async () => {
    for (const limit of ['0', '1001', 'many']) {
      const response = await audit(`?limit=${limit}`);
      assert.equal(response.status, 400, limit);
      assert.match(response.body.error, /limit/);
    }
  });

  test('older entries are reached page by page with before=<the last id>, none skipped or repeated', async () => {
    for (const name of ['page1', 'page2', 'page3', 'page4', 'page5']) {
      await server.request({
        method: 'POST',
        url: '/api/users',
        as: admin,
        payload: { username: name, email: `${name}@example.com` },
      });
    }
    const everything = (await audit('?limit=1000')).body.map((entry: any) => entry.id);
    assert.ok(everything.length > 6, 'enough entries for three pages');
    const paged: number[] = [];
    let query = '?limit=3';
    for (;;) {
      const page = await audit(query);
      assert.equal(page.status, 200, JSON.stringify(page.body));
      if (page.body.length === 0) break;
      paged.push(...page.body.map((entry: any) => entry.id));
      query = `?limit=3&before=${page.body.at(-1).id}`;
    }
    assert.deepEqual(paged, everything);
  });

  test('before= naming no entry is 400 naming before, not an empty page', async () => {
    const response = await audit('?before=987654321');
    assert.equal(response.status, 400);
    assert.match(response.body.error, /"before".*not the id of an audit entry/);
    for (const before of ['0', '34527000084795490000', '9007199254740993', 'latest']) {
      const refused = await audit(`?before=${before}`);
      assert.equal(refused.status, 400, before);
      assert.match(refused.body.error, /before/, before);
    }
  });
});
