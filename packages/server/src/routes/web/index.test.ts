import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../app.ts';
import type { Database } from '../../db/database.ts';
import { createTestPglite, startTestApp, testConfig } from '@terdut/test-support';

// What the web routes serve does not depend on the database: one PGlite is enough here.
let db: Database;
let app: FastifyInstance;
let missing: FastifyInstance;
let webDir: string;

before(async () => {
  db = await createTestPglite();
  webDir = mkdtempSync(join(tmpdir(), 'terdut-web-dist-'));
  mkdirSync(join(webDir, 'assets'));
  writeFileSync(
    join(webDir, 'index.html'),
    '<!doctype html><title>terdut</title><script src="/assets/app-ABC.js"></script>',
  );
  writeFileSync(join(webDir, 'assets', 'app-ABC.js'), 'console.log(1)');
  app = await buildApp({ db, config: testConfig({ TERDUT_TIMEZONE: 'Europe/Berlin' }), webDir });
  missing = await buildApp({ db, config: testConfig(), webDir: join(webDir, 'nothing-here') });
});
after(async () => {
  await app.close();
  await missing.close();
  await db.close();
  rmSync(webDir, { recursive: true, force: true });
});

test('/ and deep links answer the app’s HTML, uncached, with a strict CSP that forbids framing', async () => {
  for (const url of ['/', '/incidents/42', '/schedule?month=2026-12', '/no/such/page']) {
    const response = await app.inject({ method: 'GET', url });
    assert.equal(response.statusCode, 200, url);
    assert.match(response.headers['content-type'] as string, /text\/html/);
    assert.match(response.body, /<title>terdut<\/title>/);
    assert.equal(response.headers['cache-control'], 'no-cache');
    const csp = response.headers['content-security-policy'] as string;
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(response.headers['referrer-policy'], 'no-referrer');
  }
});

test('hashed assets are cached for a year as immutable; unknown ones are 404', async () => {
  const asset = await app.inject({ method: 'GET', url: '/assets/app-ABC.js' });
  assert.equal(asset.statusCode, 200);
  assert.equal(asset.headers['cache-control'], 'public, max-age=31536000, immutable');
  assert.match(asset.headers['content-type'] as string, /text\/javascript/);
  assert.equal((await app.inject({ method: 'GET', url: '/assets/app-OLD.js' })).statusCode, 404);
  assert.equal((await app.inject({ method: 'GET', url: '/assets/..%2Findex.html' })).statusCode, 404);
});

test('unknown /api and /auth paths in any spelling are never the app: 401 to anonymous callers, else 404 JSON', async () => {
  const spellings = [
    '/api/no-such-thing',
    '/api',
    '/auth/nope',
    '/API/ME',
    '//api/me',
    '/api%2Fme',
    '/x/../api/me',
    '/api\\users',
    '/api%5Cme',
  ];
  for (const url of spellings) {
    const anonymous = await app.inject({ method: 'GET', url });
    assert.equal(anonymous.statusCode, 401, url);
    assert.doesNotMatch(anonymous.headers['content-type'] ?? '', /html/, url);
  }
  // Signed in (a database of its own, so the server-info test below still sees a fresh instance).
  const signedInDb = await createTestPglite();
  const signedIn = await startTestApp(signedInDb);
  const member = await signedIn.createUser('mallory');
  try {
    for (const url of ['/api/no-such-thing', '/api', '/auth/nope']) {
      const response = await signedIn.request({ method: 'GET', url, as: member });
      assert.equal(response.status, 404, url);
      assert.deepEqual(response.body, { error: `no route for GET ${url}` });
    }
  } finally {
    await signedIn.close();
    await signedInDb.close();
  }
});

test('without a built bundle, / says how to build it (503) and the API still works', async () => {
  const page = await missing.inject({ method: 'GET', url: '/' });
  assert.equal(page.statusCode, 503);
  assert.match(page.body, /npm run build:web/);
  assert.equal((await missing.inject({ method: 'GET', url: '/api/server-info' })).statusCode, 200);
});

test('GET /api/server-info tells anyone the version, time zone, SSO and bootstrap state', async () => {
  const response = await app.inject({ method: 'GET', url: '/api/server-info' });
  assert.equal(response.statusCode, 200);
  const info = response.json();
  assert.match(info.version, /^\d+\.\d+\.\d+/);
  assert.equal(info.time_zone, 'Europe/Berlin');
  assert.equal(info.oidc, false);
  assert.equal(info.bootstrapped, false);
});
