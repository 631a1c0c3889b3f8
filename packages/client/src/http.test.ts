import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpTransport, TerdutApiError, TerdutNetworkError, isTransientError } from './http.ts';

let server: Server;
let baseUrl: string;

before(async () => {
  server = createServer((req, res) => {
    if (req.url === '/slow') return; // never answers
    if (req.url === '/conflict') {
      res.writeHead(409, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'name is taken' }));
      return;
    }
    if (req.url === '/proxy-sign-in') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>Sign in to Example SSO</title>');
      return;
    }
    if (req.url === '/html') {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html>bad gateway</html>');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ auth: req.headers.authorization ?? null, url: req.url }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

test('a request carries the bearer credential and query, and returns the parsed body', async () => {
  const http = new HttpTransport({ baseUrl: `${baseUrl}/`, token: 'k1' });
  const body = await http.request<{ auth: string; url: string }>('GET', '/x', { query: { name: 'a b' } });
  assert.deepEqual(body, { auth: 'Bearer k1', url: '/x?name=a+b' });
  const overridden = await http.request<{ auth: string }>('GET', '/x', { token: 'bootstrap' });
  assert.equal(overridden.auth, 'Bearer bootstrap');
});

test("a non-2xx answer becomes TerdutApiError with the server's message", async () => {
  const http = new HttpTransport({ baseUrl });
  const error = await http.request('POST', '/conflict').catch((e: unknown) => e);
  assert.ok(error instanceof TerdutApiError);
  assert.equal(error.status, 409);
  assert.equal(error.serverMessage, 'name is taken');
  assert.equal(isTransientError(error), false);
  const gateway = await http.request('GET', '/html').catch((e: unknown) => e);
  assert.ok(gateway instanceof TerdutApiError && gateway.status === 502);
  assert.equal(isTransientError(gateway), true);
});

test("a 2xx that is no JSON (a proxy's sign-in page) is a TerdutApiError saying so, not a SyntaxError", async () => {
  const http = new HttpTransport({ baseUrl });
  const error = await http.request('GET', '/proxy-sign-in').catch((e: unknown) => e);
  assert.ok(error instanceof TerdutApiError, String(error));
  assert.equal(error.status, 200);
  assert.match(error.serverMessage, /not a JSON answer \(text\/html; charset=utf-8\): is a proxy/);
  assert.match(error.serverMessage, /Sign in to Example SSO/);
  assert.equal(isTransientError(error), false);
});

test('a server that does not answer in time fails with a retryable network error', async () => {
  const http = new HttpTransport({ baseUrl, timeoutMs: 200 });
  const started = Date.now();
  const error = await http.request('GET', '/slow').catch((e: unknown) => e);
  assert.ok(error instanceof TerdutNetworkError, String(error));
  assert.match(error.message, /timed out/);
  assert.ok(Date.now() - started < 2000);
  assert.equal(isTransientError(error), true);
});

test('a refused connection is a retryable network error', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const http = new HttpTransport({ baseUrl: `http://127.0.0.1:${port}` });
  const error = await http.request('GET', '/').catch((e: unknown) => e);
  assert.ok(error instanceof TerdutNetworkError);
  assert.match(error.message, /ECONNREFUSED/);
  assert.equal(isTransientError(error), true);
});

test('401, 403 and 409 are not retried; 429 and 503 are', () => {
  const at = (status: number) => new TerdutApiError(status, 'x', 'POST', '/api/bootstrap');
  assert.deepEqual(
    [401, 403, 409, 400, 429, 500, 503].map((status) => isTransientError(at(status))),
    [false, false, false, false, true, true, true],
  );
});
