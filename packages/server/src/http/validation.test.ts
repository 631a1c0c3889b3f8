import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createTestPglite, startTestApp, type TestApp, type TestUser } from '@terdut/test-support';

let server: TestApp;
let admin: TestUser;
before(async () => {
  server = await startTestApp(await createTestPglite());
  admin = await server.createUser('validation-admin', 'admin');
});
after(async () => {
  await server.close();
  await server.db.close();
});

test('a JSON body with a number where text belongs is refused with 400 naming the field, not converted', async () => {
  const response = await server.request({
    method: 'POST',
    url: '/api/users',
    as: admin,
    payload: { username: 4242, email: 'n@example.com' },
  });
  assert.equal(response.status, 400);
  assert.match(response.body.error, /username/);
  const users = await server.request({ method: 'GET', url: '/api/users', as: admin });
  assert.ok(
    !users.body.some((user: { username: string }) => user.username === '4242'),
    'nothing was created',
  );
});

test('query parameters arrive as text and are still read as numbers', async () => {
  const response = await server.request({ method: 'GET', url: '/api/audit?limit=1', as: admin });
  assert.equal(response.status, 200);
  assert.ok(Array.isArray(response.body));
  assert.ok(response.body.length <= 1);
});

test('a value outside a list of choices is 400 naming the field, the choices and what was sent', async () => {
  const list = await server.request({ method: 'GET', url: '/api/incidents?status=open', as: admin });
  assert.equal(list.status, 400);
  assert.equal(
    list.body.error,
    'querystring field "status" must be one of "triggered", "acknowledged", "resolved", got "open"',
  );
  const role = await server.request({
    method: 'PUT',
    url: `/api/users/${admin.id}/role`,
    as: admin,
    payload: { role: 'owner' },
  });
  assert.equal(role.status, 400);
  assert.equal(role.body.error, 'field "role" must be one of "admin", "member", got "owner"');
  const account = await server.request({
    method: 'POST',
    url: '/api/service-accounts',
    as: admin,
    payload: { name: 'choices', scope: 'global' },
  });
  assert.equal(account.status, 400);
  assert.equal(account.body.error, 'field "scope" must be "instance", got "global"');
  // One of several kinds of object: the first kind's value is not the only one allowed.
  const policy = await server.request({
    method: 'POST',
    url: '/api/escalation-policies',
    as: admin,
    payload: { name: 'choices', steps: [{ targets: [{ type: 'team' }] }] },
  });
  assert.equal(policy.status, 400);
  assert.doesNotMatch(policy.body.error, /must be "on_call"/);
});
