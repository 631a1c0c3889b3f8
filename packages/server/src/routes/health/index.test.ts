import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { forEachDatabase, startTestApp, type TestApp } from '@terdut/test-support';

forEachDatabase('health and authentication', (database) => {
  let server: TestApp;
  before(async () => {
    server = await startTestApp(database());
  });
  after(() => server.close());

  test('healthz and readyz answer 200 without credentials once migrations are applied', async () => {
    assert.equal((await server.request({ method: 'GET', url: '/healthz' })).status, 200);
    const ready = await server.request({ method: 'GET', url: '/readyz' });
    assert.equal(ready.status, 200);
  });

  test('metrics are served in Prometheus text format', async () => {
    const metrics = await server.request({ method: 'GET', url: '/metrics' });
    assert.equal(metrics.status, 200);
    assert.match(metrics.body, /terdut_http_request_duration_seconds/);
    assert.match(metrics.body, /terdut_db_pool_connections/);
  });

  test('an /api route without credentials is refused with 401 and a JSON error', async () => {
    const response = await server.request({ method: 'GET', url: '/api/me' });
    assert.equal(response.status, 401);
    assert.match(response.body.error, /Authorization: Bearer/);
    // RFC 9110: a 401 carries the challenge, for HTTP clients that answer it.
    assert.equal(response.headers['www-authenticate'], 'Bearer');
  });

  test('a wrong API key is refused with 401', async () => {
    const response = await server.request({ method: 'GET', url: '/api/me', as: 'f'.repeat(64) });
    assert.equal(response.status, 401);
    assert.deepEqual(response.body, { error: 'invalid API key' });
    assert.equal(response.headers['www-authenticate'], 'Bearer');
  });

  test('an unknown route answers 404 with a JSON error', async () => {
    const user = await server.createUser('nobody-special');
    const response = await server.request({ method: 'GET', url: '/api/no-such-thing', as: user });
    assert.equal(response.status, 404);
    assert.ok(typeof response.body.error === 'string');
  });

  test('the OpenAPI document is public and declares version 3.1', async () => {
    const response = await server.request({ method: 'GET', url: '/api/openapi.json' });
    assert.equal(response.status, 200);
    assert.equal(response.body.openapi, '3.1.0');
  });
});
