import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import {
  createTestPglite,
  firingAlert,
  notification,
  startTestApp,
  type TestApp,
  type TestUser,
} from '@terdut/test-support';

let server: TestApp;
let admin: TestUser;
before(async () => {
  server = await startTestApp(await createTestPglite());
  admin = await server.createUser('json-bodies-admin', 'admin');
});
after(async () => {
  await server.close();
  await server.db.close();
});

const json = { 'content-type': 'application/json' };

test('a DELETE with the JSON header and no body deletes (the README sets the header on every call)', async () => {
  const created = await server.request({
    method: 'POST',
    url: '/api/maintenance-windows',
    as: admin,
    payload: { starts_at: '2030-01-01T00:00:00Z', ends_at: '2030-01-01T01:00:00Z', reason: 'empty body' },
  });
  assert.equal(created.status, 201);
  const deleted = await server.request({
    method: 'DELETE',
    url: `/api/maintenance-windows/${created.body.id}`,
    headers: json,
    payload: '',
    as: admin,
  });
  assert.equal(deleted.status, 204, JSON.stringify(deleted.body));
  const list = await server.request({ method: 'GET', url: '/api/maintenance-windows', as: admin });
  assert.ok(!list.body.some((window: { id: number }) => window.id === created.body.id));
});

test('a route that needs a body still refuses an empty one with 400, and creates nothing', async () => {
  const before = (await server.request({ method: 'GET', url: '/api/users', as: admin })).body.length;
  const response = await server.request({
    method: 'POST',
    url: '/api/users',
    headers: json,
    payload: '',
    as: admin,
  });
  assert.equal(response.status, 400);
  assert.match(response.body.error, /body/);
  const after = (await server.request({ method: 'GET', url: '/api/users', as: admin })).body.length;
  assert.equal(after, before);
});

test('other JSON is parsed as before: invalid JSON and a __proto__ key are 400, the key named', async () => {
  const invalid = await server.request({
    method: 'POST',
    url: '/api/users',
    headers: json,
    payload: '{"username": ',
    as: admin,
  });
  assert.equal(invalid.status, 400);
  for (const key of ['__proto__', '\\u005f_proto__']) {
    const payload = `{"username":"p","email":"p@example.com","${key}":{"role":"admin"}}`;
    const response = await server.request({
      method: 'POST',
      url: '/api/users',
      headers: json,
      payload,
      as: admin,
    });
    assert.equal(response.status, 400, payload);
    assert.match(response.body.error, /a key named "__proto__", which is not accepted; rename it/);
  }
});

test('a compressed body is 415 saying so, after authentication; plain JSON labelled compressed is not read', async () => {
  const body = JSON.stringify({ username: 'zipped', email: 'z@example.com' });
  const gzipped = await server.request({
    method: 'POST',
    url: '/api/users',
    headers: { ...json, 'content-encoding': 'gzip' },
    payload: gzipSync(body),
    as: admin,
  });
  assert.equal(gzipped.status, 415);
  assert.match(gzipped.body.error, /Content-Encoding "gzip" is not supported; send the body uncompressed/);
  const mislabelled = await server.request({
    method: 'POST',
    url: '/api/users',
    headers: { ...json, 'content-encoding': 'br' },
    payload: body,
    as: admin,
  });
  assert.equal(mislabelled.status, 415);
  const anonymous = await server.request({
    method: 'POST',
    url: '/api/users',
    headers: { ...json, 'content-encoding': 'gzip' },
    payload: gzipSync(body),
  });
  assert.equal(anonymous.status, 401);
  const users = (await server.request({ method: 'GET', url: '/api/users', as: admin })).body;
  assert.ok(!users.some((user: { username: string }) => user.username === 'zipped'), 'nothing was created');
});

test('a text/plain body is 415 (the API reads JSON), and creates nothing', async () => {
  const before = (await server.request({ method: 'GET', url: '/api/maintenance-windows', as: admin })).body
    .length;
  const refused = await server.request({
    method: 'POST',
    url: '/api/maintenance-windows',
    as: admin,
    headers: { 'content-type': 'text/plain' },
    payload: JSON.stringify({
      starts_at: '2030-02-01T00:00:00Z',
      ends_at: '2030-02-01T01:00:00Z',
      reason: 'text',
    }),
  });
  assert.equal(refused.status, 415, JSON.stringify(refused.body));
  assert.match(refused.body.error, /text\/plain/);
  const after = (await server.request({ method: 'GET', url: '/api/maintenance-windows', as: admin })).body
    .length;
  assert.equal(after, before);
});

test('an empty text/plain body is no body: fetch() labels even body "" so, and an action without a body still runs', async () => {
  const opened = await server.request({
    method: 'POST',
    url: '/api/webhook/alertmanager',
    as: admin,
    payload: notification({
      groupKey: 'text-plain-empty',
      alerts: [firingAlert({ name: 'TextPlainEmpty' })],
    }),
  });
  assert.equal(opened.status, 200, JSON.stringify(opened.body));
  const acknowledged = await server.request({
    method: 'POST',
    url: `/api/incidents/${opened.body.incident_id}/acknowledge`,
    as: admin,
    headers: { 'content-type': 'text/plain;charset=UTF-8' },
    payload: '',
  });
  assert.equal(acknowledged.status, 200, JSON.stringify(acknowledged.body));
  assert.equal(acknowledged.body.status, 'acknowledged');
});
