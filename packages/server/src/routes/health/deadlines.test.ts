/**
 * Probes with a frozen database, and /metrics behind its token. The frozen
 * PostgreSQL is a stand-in: a TCP proxy in front of the real test server that
 * stops forwarding on demand (stopping the shared server itself is not an
 * option), which to the client looks exactly like a hung server or network.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket, type AddressInfo } from 'node:net';
import {
  createTestPostgres,
  createTestPglite,
  startTestApp,
  testConfig,
  type TestApp,
} from '@terdut/test-support';
import { openPostgres, type Database } from '../../db/database.ts';
import { READY_DEADLINE_MS } from './index.ts';

/**
 * Stand-in for a frozen database: forwards TCP to `target` until freeze(),
 * then drops every byte until thaw() (the connections that were open by then
 * stay broken, as after a real network outage; new ones work again).
 */
async function freezableProxy(
  target: URL,
  options: { freezeWhenClientSends?: string } = {},
): Promise<{ url: string; freeze(): void; thaw(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let frozen = false;
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    }
    client.on('data', (chunk: Buffer) => {
      if (options.freezeWhenClientSends !== undefined && chunk.includes(options.freezeWhenClientSends)) {
        frozen = true;
      }
      if (!frozen) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => frozen || client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: url.toString(),
    freeze: () => (frozen = true),
    thaw: () => (frozen = false),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('probes when PostgreSQL stops answering', () => {
  let database: Awaited<ReturnType<typeof createTestPostgres>>;
  let proxy: Awaited<ReturnType<typeof freezableProxy>>;
  let db: Database;
  let server: TestApp;
  before(async () => {
    database = await createTestPostgres();
    proxy = await freezableProxy(new URL(database.url));
    db = await openPostgres(proxy.url, { max: 4, statementTimeoutMs: 2_000, queryTimeoutMs: 3_000 });
    server = await startTestApp(db);
  });
  after(async () => {
    await server.close();
    await proxy.close();
    await db.close().catch(() => {});
    await database.drop();
  });

  test('/readyz answers 503 within its deadline, and /healthz 200 at once even with credentials', async () => {
    const user = await server.createUser('prober', 'admin');
    assert.equal((await server.request({ method: 'GET', url: '/readyz' })).status, 200);
    proxy.freeze();

    let started = performance.now();
    const ready = await server.request({ method: 'GET', url: '/readyz' });
    const readyTook = performance.now() - started;
    assert.equal(ready.status, 503);
    assert.match(ready.body.error, new RegExp(`did not answer within ${READY_DEADLINE_MS} ms`));
    assert.ok(readyTook < READY_DEADLINE_MS + 1_000, `/readyz took ${Math.round(readyTook)} ms`);

    // Credentials on a public route are not even looked up: no query, no wait.
    started = performance.now();
    const live = await server.request({ method: 'GET', url: '/healthz', as: user });
    assert.equal(live.status, 200);
    assert.ok(performance.now() - started < 500, 'healthz waited for the database');
  });

  /** Opens connections while the database answers, then freezes it: statements meet a silent connection, not a connect timeout. */
  async function freezeWithIdleConnections(): Promise<void> {
    proxy.thaw();
    await Promise.all([1, 2, 3].map(() => db.query('SELECT pg_sleep(0.05)')));
    proxy.freeze();
  }

  test('a query to the frozen database fails after TERDUT_DB_QUERY_TIMEOUT instead of hanging', async () => {
    await freezeWithIdleConnections();
    const started = performance.now();
    await assert.rejects(
      db.query('SELECT 1'),
      /PostgreSQL did not answer within 3000 ms \(TERDUT_DB_QUERY_TIMEOUT\); the connection was closed/,
    );
    const took = performance.now() - started;
    assert.ok(took >= 2_500 && took < 6_000, `gave up after ${Math.round(took)} ms`);
  });

  test('a transaction whose statement gets no answer fails in time, without waiting on its ROLLBACK', async () => {
    await freezeWithIdleConnections();
    const started = performance.now();
    await assert.rejects(
      db.transaction(async (tx) => tx.query('SELECT 1')),
      /did not answer within 3000 ms/,
    );
    const took = performance.now() - started;
    assert.ok(took >= 2_500 && took < 6_000, `gave up after ${Math.round(took)} ms`);
  });

  test('once the database answers again, statements succeed: no connection that went silent is lent again', async () => {
    proxy.thaw();
    // More statements than the pool holds, each on a connection of its own:
    // any silent connection handed out again would fail one of them.
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, index) => db.query<{ n: number }>('SELECT $1::int AS n', [index])),
    );
    assert.deepEqual(
      answers.map((answer) => answer.rows[0]!.n),
      [0, 1, 2, 3, 4, 5, 6, 7],
    );
    assert.equal(
      await db.transaction(async (tx) => (await tx.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one),
      1,
    );
    assert.equal((await server.request({ method: 'GET', url: '/readyz' })).status, 200);
  });
});

test("/readyz of a database that refuses connections answers 503 without the driver's message: anyone may read it", async () => {
  const database = await createTestPostgres();
  const proxy = await freezableProxy(new URL(database.url));
  const db = await openPostgres(proxy.url, { max: 2 });
  const server = await startTestApp(db);
  try {
    assert.equal((await server.request({ method: 'GET', url: '/readyz' })).status, 200);
    await proxy.close(); // its port now refuses: ECONNREFUSED 127.0.0.1:<port>
    // The first finds its pooled connection cut; the second cannot connect.
    await server.request({ method: 'GET', url: '/readyz' });
    const ready = await server.request({ method: 'GET', url: '/readyz' });
    assert.equal(ready.status, 503);
    assert.match(ready.body.error, /database does not answer \(the server log says why\)/);
    const { hostname, port, pathname } = new URL(proxy.url);
    for (const detail of [`${hostname}:${port}`, pathname.slice(1), 'ECONNREFUSED', 'terminated']) {
      assert.ok(!ready.body.error.includes(detail), `the answer shows "${detail}": ${ready.body.error}`);
    }
  } finally {
    await server.close();
    await db.close().catch(() => {});
    await database.drop();
  }
});

test('a connection that goes silent before its first statement fails to connect in time', async () => {
  const database = await createTestPostgres();
  // Silent from the statement every new connection runs first.
  const proxy = await freezableProxy(new URL(database.url), { freezeWhenClientSends: 'SET jit = off' });
  try {
    const started = performance.now();
    await assert.rejects(
      openPostgres(proxy.url, { max: 1, statementTimeoutMs: 500, queryTimeoutMs: 1_000 }),
      /database is not reachable .*PostgreSQL did not answer within 1000 ms \(TERDUT_DB_QUERY_TIMEOUT\)/,
    );
    const took = performance.now() - started;
    assert.ok(took >= 800 && took < 4_000, `gave up after ${Math.round(took)} ms`);
  } finally {
    await proxy.close();
    await database.drop();
  }
});

describe('/metrics behind TERDUT_METRICS_TOKEN', () => {
  let db: Database;
  let server: TestApp;
  const token = 'metrics-token-0123456789abcdef';
  before(async () => {
    db = await createTestPglite();
    server = await startTestApp(db, { config: testConfig({ TERDUT_METRICS_TOKEN: token }) });
  });
  after(async () => {
    await server.close();
    await db.close();
  });

  test('without the token 401, with an API key 401, with the token 200', async () => {
    const admin = await server.createUser('ops', 'admin');
    assert.equal((await server.request({ method: 'GET', url: '/metrics' })).status, 401);
    assert.equal((await server.request({ method: 'GET', url: '/metrics', as: admin })).status, 401);
    const scraped = await server.request({ method: 'GET', url: '/metrics', as: token });
    assert.equal(scraped.status, 200);
    assert.match(scraped.body, /terdut_http_request_duration_seconds/);
    assert.equal(
      (await server.request({ method: 'GET', url: '/healthz' })).status,
      200,
      'probes stay public',
    );
  });

  test('a token shorter than 16 characters is refused at start-up, naming the variable', () => {
    assert.throws(() => testConfig({ TERDUT_METRICS_TOKEN: 'short' }), /TERDUT_METRICS_TOKEN is too short/);
  });
});

test('database timeouts are configurable and validated, naming the variable', () => {
  const config = testConfig({ TERDUT_DB_STATEMENT_TIMEOUT: '5s', TERDUT_DB_QUERY_TIMEOUT: '7s' });
  assert.equal(config.dbStatementTimeoutMs, 5_000);
  assert.equal(config.dbQueryTimeoutMs, 7_000);
  assert.throws(
    () => testConfig({ TERDUT_DB_STATEMENT_TIMEOUT: 'soon' }),
    /TERDUT_DB_STATEMENT_TIMEOUT="soon" is not a positive duration/,
  );
  assert.throws(
    () => testConfig({ TERDUT_DB_STATEMENT_TIMEOUT: '30s', TERDUT_DB_QUERY_TIMEOUT: '10s' }),
    /TERDUT_DB_QUERY_TIMEOUT \(10000 ms\) is shorter than TERDUT_DB_STATEMENT_TIMEOUT/,
  );
});
