/**
 * Authentication cannot be skipped by spelling a URL differently. The routes
 * come from the app itself (every route registered, with its declaration), so
 * a route added tomorrow is covered without anyone remembering to; requests go
 * over a raw TCP socket, so no HTTP client normalises the request target.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import {
  ManualClock,
  createTestPglite,
  startTestApp,
  testConfig,
  type TestApp,
  type TestUser,
} from '@terdut/test-support';
import type { Database } from '../db/database.ts';
import { isPublic } from './route-auth.ts';
import { installAuthentication, capabilityOf } from './authentication.ts';
import { access } from './route-auth.ts';
import { CapabilityService } from '../services/capabilities.ts';
import type { DeclaredRoute } from './authentication.ts';

/** Sends one request exactly as written and answers the status code and headers. */
function rawRequest(
  port: number,
  requestLine: string,
  headers: Record<string, string> = {},
  body = '',
): Promise<{ status: number; head: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer to ${requestLine}`)));
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => {
      const match = /^HTTP\/1\.1 (\d{3})/.exec(received);
      if (!match) return reject(new Error(`no status line for ${requestLine}: ${received.slice(0, 200)}`));
      resolve({ status: Number(match[1]), head: received.split('\r\n\r\n')[0]! });
    });
    const lines = [
      requestLine,
      'Host: terdut.test',
      'Connection: close',
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
      ...(body ? ['Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`] : []),
    ];
    // No half-close: like a real client, wait for the server to close (Connection: close).
    socket.write(lines.join('\r\n') + '\r\n\r\n' + body);
  });
}

/** A concrete path for a route pattern: every parameter becomes 1. */
const concrete = (url: string) => url.replace(/:[A-Za-z_]+/g, '1');

/** One letter percent-encoded in segment `index` (the first letter found). */
function encodeLetterInSegment(path: string, index: number): string | undefined {
  const segments = path.split('/');
  const segment = segments[index]!;
  const at = segment.search(/[A-Za-z]/);
  if (at < 0) return undefined;
  const hex = segment.charCodeAt(at).toString(16);
  segments[index] = segment.slice(0, at) + `%${at % 2 ? hex.toUpperCase() : hex}` + segment.slice(at + 1);
  return segments.join('/');
}

/** The same target spelt a dozen and more ways; only some of them route, none may skip authentication. */
function spellings(path: string): string[] {
  const segments = path.split('/');
  const variants = [
    path,
    ...segments.map((_, index) => encodeLetterInSegment(path, index)).filter((v) => v !== undefined),
    segments.map((segment) => segment.replace(/[a-z]/g, (c) => `%${c.charCodeAt(0).toString(16)}`)).join('/'),
    `/${path}`,
    path.replace(/\/([^/]+)$/, '//$1'),
    path.replace(/^\/([^/]+)\//, '/$1/./'),
    path.replace(/^\/([^/]+)\//, '/$1/x/../'),
    `${path}/`,
    path.toUpperCase(),
    path.replace(/\/([a-z])/g, (_, c: string) => `/${c.toUpperCase()}`),
    `http://terdut.test${path}`,
    `HTTP://other.example:8080${path}`,
    `http://terdut.test//${path.slice(1)}`,
    `${path}?authenticated=true`,
    `${path};public`,
    path.replace(/\//g, '%2F').replace(/^%2F/, '/'),
  ];
  return [...new Set(variants)];
}

describe('authentication of every registered route, under every spelling of its URL', () => {
  let db: Database;
  let server: TestApp;
  let port: number;
  let member: TestUser;
  let admin: TestUser;
  let routes: DeclaredRoute[];

  before(async () => {
    db = await createTestPglite();
    server = await startTestApp(db);
    member = await server.createUser('mallory');
    admin = await server.createUser('alice', 'admin');
    await server.app.listen({ host: '127.0.0.1', port: 0 });
    port = (server.app.server.address() as AddressInfo).port;
    routes = server.app.declaredRoutes;
  });
  after(async () => {
    await server.close();
    await db.close();
  });

  test('the app registers its routes, and protected ones are the majority', () => {
    const isProtected = routes.filter((route) => !isPublic(route.auth, false));
    assert.ok(routes.length >= 40, `only ${routes.length} routes seen`);
    assert.ok(isProtected.length >= 35, `only ${isProtected.length} protected routes seen`);
  });

  test('no credentials: 401 on every protected route under every spelling (never the handler)', async () => {
    const failures: string[] = [];
    for (const route of routes.filter((r) => !isPublic(r.auth, false))) {
      const body = ['POST', 'PUT'].includes(route.method) ? '{}' : '';
      for (const target of spellings(concrete(route.url))) {
        const { status } = await rawRequest(port, `${route.method} ${target} HTTP/1.1`, {}, body);
        // The bootstrap token's rate limit may answer first: still refused, never the handler.
        const refused = status === 401 || (route.auth.kind === 'bootstrap_token' && status === 429);
        if (!refused) failures.push(`${route.method} ${target} (route ${route.url}) → ${status}`);
      }
    }
    assert.deepEqual(failures, []);
  });

  test("a member's key: 403 on every admin route under every spelling that reaches it, never the handler", async () => {
    const adminRoutes = routes.filter((r) => r.auth.kind === 'principal' && r.auth.role === 'admin');
    assert.ok(adminRoutes.length >= 10, `only ${adminRoutes.length} admin routes`);
    const failures: string[] = [];
    for (const route of adminRoutes) {
      const body = ['POST', 'PUT'].includes(route.method) ? '{}' : '';
      const path = concrete(route.url);
      for (const target of spellings(path)) {
        const { status } = await rawRequest(
          port,
          `${route.method} ${target} HTTP/1.1`,
          { Authorization: `Bearer ${member.key}` },
          body,
        );
        // A spelling the router does not match is "no route" (404); one it matches is refused (403).
        const expected = target === path ? [403] : [403, 404];
        if (!expected.includes(status)) failures.push(`${route.method} ${target} → ${status}`);
      }
    }
    assert.deepEqual(failures, []);
  });

  test('the spellings that route do reach the same handler for a caller allowed there', async () => {
    for (const target of ['/%61pi/users', '/ap%69/users', 'http://terdut.test/api/users', '/api/us%65rs']) {
      const { status } = await rawRequest(port, `GET ${target} HTTP/1.1`, {
        Authorization: `Bearer ${admin.key}`,
      });
      assert.equal(status, 200, target);
    }
  });

  test('TRACE and other methods no route serves are 405 with Allow', async () => {
    for (const target of ['/api/users', '/healthz', '/nowhere']) {
      const { status, head } = await rawRequest(port, `TRACE ${target} HTTP/1.1`);
      assert.equal(status, 405, target);
      const allow = /\r\nallow: ([^\r]*)/i.exec(head)?.[1]?.split(', ') ?? [];
      assert.deepEqual(
        allow.toSorted(),
        ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT'],
        target,
      );
    }
  });

  test('a method a path does not serve is 405 naming the ones it does, for every registered path, once the caller may know the path', async () => {
    const allowHeader = (head: string) => /\r\nallow: ([^\r]*)/i.exec(head)?.[1]?.split(', ') ?? [];
    const failures: string[] = [];
    const paths = [...new Set(routes.filter((route) => !route.url.includes('*')).map((route) => route.url))];
    assert.ok(paths.length >= 40, `only ${paths.length} paths`);
    for (const url of paths) {
      const path = concrete(url);
      const served = routes.filter((route) => route.url === url).map((route) => route.method);
      const unserved = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter(
        (method) =>
          !served.includes(method) &&
          // Another route may serve the same concrete path with this method (/api/schedule/current
          // is also /api/schedule/:id): the router takes it there.
          !routes.some(
            (route) =>
              route.method === method &&
              !route.url.includes('*') &&
              new RegExp(`^${route.url.replace(/:[A-Za-z_]+/g, '[^/]+')}$`).test(path),
          ),
      );
      for (const method of unserved) {
        const body = ['POST', 'PUT', 'PATCH'].includes(method) ? '{}' : '';
        const { status, head } = await rawRequest(
          port,
          `${method} ${path} HTTP/1.1`,
          { Authorization: `Bearer ${admin.key}` },
          body,
        );
        const allow = allowHeader(head);
        if (status !== 405 || !served.every((m) => allow.includes(m)) || allow.includes(method)) {
          failures.push(
            `${method} ${path} → ${status}, Allow: ${allow.join(', ')} (served: ${served.join(', ')})`,
          );
        }
      }
    }
    assert.deepEqual(failures, []);

    // Without credentials a protected path stays 401 (nobody learns it exists); a public one says 405.
    assert.equal((await rawRequest(port, 'PUT /api/incidents HTTP/1.1', {}, '{}')).status, 401);
    assert.equal((await rawRequest(port, 'GET /api/webhook/alertmanager HTTP/1.1')).status, 401);
    const login = await rawRequest(port, 'PUT /auth/login HTTP/1.1', {}, '{}');
    assert.equal(login.status, 405);
    assert.deepEqual(allowHeader(login.head), ['POST']);
    const webhook = await rawRequest(port, 'GET /api/webhook/alertmanager HTTP/1.1', {
      Authorization: `Bearer ${admin.key}`,
    });
    assert.equal(webhook.status, 405);
    assert.deepEqual(allowHeader(webhook.head), ['POST']);
    // The resource a static path names is its own, not the parametric route's beside it.
    const current = await rawRequest(port, 'OPTIONS /api/schedule/current HTTP/1.1', {
      Authorization: `Bearer ${admin.key}`,
    });
    assert.equal(current.status, 405);
    assert.deepEqual(allowHeader(current.head), ['GET', 'HEAD']);
    // …and so does a parametric route that would take the static name for its parameter.
    const deleteCurrent = await rawRequest(port, 'DELETE /api/schedule/current HTTP/1.1', {
      Authorization: `Bearer ${admin.key}`,
    });
    assert.equal(deleteCurrent.status, 405);
    assert.deepEqual(allowHeader(deleteCurrent.head), ['GET', 'HEAD']);
    assert.equal((await rawRequest(port, 'DELETE /api/schedule/current HTTP/1.1')).status, 401);
    // A path the router refused for another reason (a parameter over its length) is still "no route".
    const longToken = await rawRequest(port, `GET /api/calendar/${'0'.repeat(101)} HTTP/1.1`, {
      Authorization: `Bearer ${admin.key}`,
    });
    assert.equal(longToken.status, 404);
    // A path no route has is still "no route".
    assert.equal(
      (await rawRequest(port, 'PUT /api/nowhere HTTP/1.1', { Authorization: `Bearer ${admin.key}` }, '{}'))
        .status,
      404,
    );
  });

  test('every answer carries the security headers, errors and 404s included', async () => {
    for (const [target, auth] of [
      ['/healthz', undefined],
      ['/api/users', undefined],
      ['/api/nowhere', admin.key],
      // Not percent-encoded UTF-8: Fastify answers before any hook.
      ['/api/incidents/%FF', undefined],
    ] as const) {
      const { head } = await rawRequest(
        port,
        `GET ${target} HTTP/1.1`,
        auth ? { Authorization: `Bearer ${auth}` } : {},
      );
      assert.match(head, /\r\nx-content-type-options: nosniff/i, target);
      assert.match(head, /\r\nreferrer-policy: no-referrer/i, target);
      assert.match(head, /\r\nx-frame-options: DENY/i, target);
      assert.match(head, /\r\ncontent-security-policy: frame-ancestors 'none'/i, target);
    }
    const undecodable = await rawRequest(port, 'GET /api/incidents/%FF HTTP/1.1');
    assert.equal(undecodable.status, 400);
  });

  test('the OpenAPI document declares 401 on every protected operation and 403 on every admin one', async () => {
    const response = await server.request({ method: 'GET', url: '/api/openapi.json' });
    const paths = response.body.paths as Record<
      string,
      Record<string, { responses: Record<string, unknown>; security: unknown[] }>
    >;
    let checked = 0;
    for (const route of routes) {
      // HEAD and OPTIONS (a CORS preflight) are HTTP's plumbing, not operations of the API.
      if (
        route.method === 'HEAD' ||
        route.method === 'OPTIONS' ||
        route.url === '/api/openapi.json' ||
        !route.url.startsWith('/api/')
      )
        continue;
      const operation = paths[route.url.replace(/:([A-Za-z_]+)/g, '{$1}')]?.[route.method.toLowerCase()];
      assert.ok(operation, `${route.method} ${route.url} is missing from the document`);
      if (!isPublic(route.auth, false)) {
        assert.ok(operation.responses['401'], `${route.method} ${route.url} lacks 401`);
        assert.ok(operation.security.length > 0, `${route.method} ${route.url} has no security requirement`);
      } else {
        assert.deepEqual(operation.security, [], `${route.method} ${route.url} is public`);
      }
      if (route.auth.kind === 'principal' && route.auth.role === 'admin') {
        assert.ok(operation.responses['403'], `${route.method} ${route.url} lacks 403`);
      }
      checked++;
    }
    assert.ok(checked >= 35);
  });
});

test('a route that declares no authentication is refused at start-up', async () => {
  const app = Fastify();
  installAuthentication(app, {} as never);
  assert.throws(
    () => app.get('/api/forgotten', async () => 'open'),
    /route GET \/api\/forgotten declares no authentication/,
  );
  await app.close();
});

test('a capability route admits exactly one incident, action and person until the link expires', async () => {
  const db = await createTestPglite();
  const clock = new ManualClock('2026-12-03T08:00:00Z');
  const capabilities = new CapabilityService({ db, clock });
  const app = Fastify();
  installAuthentication(app, { capabilities } as never);
  app.post(
    '/api/incidents/:id/acknowledge-by-link',
    { config: { auth: access.capability('incident.acknowledge') } },
    async (request) => ({ acting_as: capabilityOf(request).userId }),
  );
  const issue = (
    incidentId: number,
    action: 'incident.acknowledge' | 'incident.resolve' = 'incident.acknowledge',
  ) => capabilities.issue({ action, incidentId, userId: 7, ttlMs: 15 * 60_000 });
  const ack = (incident: number, token?: string) =>
    app.inject({
      method: 'POST',
      url: `/api/incidents/${incident}/acknowledge-by-link`,
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
  try {
    const token = await issue(42);
    assert.equal((await ack(42)).statusCode, 401, 'no link');
    assert.equal(
      (
        await ack(
          42,
          token.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')),
        )
      ).statusCode,
      401,
      'forged',
    );
    assert.equal((await ack(42, await issue(42, 'incident.resolve'))).statusCode, 401, 'another action');
    assert.equal((await ack(43, token)).statusCode, 403, 'another incident');
    const allowed = await ack(42, token);
    assert.equal(allowed.statusCode, 200);
    assert.deepEqual(allowed.json(), { acting_as: 7 });
    clock.advance(16 * 60_000);
    assert.equal((await ack(42, token)).statusCode, 401, 'expired');
  } finally {
    await app.close();
    await db.close();
  }
});

test('no public route answers 5xx to any spelling of its URL, with a TERDUT_PUBLIC_URL that names a port', async () => {
  // The OIDC callback appended the request target to TERDUT_PUBLIC_URL: an absolute-form
  // target (`GET http://x/auth/oidc/callback`) made `http://terdut.test:8080http://x/…`, no URL.
  const db = await createTestPglite();
  // A web app of its own: without a build in the checkout (CI builds it later, for the browser
  // tests) every path the web app serves answers 503 "not built", which is not what is tested here.
  const webDir = mkdtempSync(join(tmpdir(), 'terdut-web-build-'));
  writeFileSync(join(webDir, 'index.html'), '<!doctype html><title>terdut</title>');
  const server = await startTestApp(db, {
    config: testConfig({ TERDUT_PUBLIC_URL: 'http://terdut.test:8080' }),
    webDir,
  });
  try {
    await server.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (server.app.server.address() as AddressInfo).port;
    const failures: string[] = [];
    for (const route of server.app.declaredRoutes.filter((r) => isPublic(r.auth, false))) {
      const body = ['POST', 'PUT'].includes(route.method) ? '{}' : '';
      for (const target of spellings(concrete(route.url))) {
        const { status } = await rawRequest(port, `${route.method} ${target} HTTP/1.1`, {}, body);
        if (status >= 500) failures.push(`${route.method} ${target} (route ${route.url}) → ${status}`);
      }
    }
    assert.deepEqual(failures, []);
  } finally {
    await server.close();
    await db.close();
    rmSync(webDir, { recursive: true, force: true });
  }
});
