import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type AddressInfo } from 'node:net';
import { once } from 'node:events';
import Fastify, { type FastifyInstance } from 'fastify';
import { BodyBudget, SMALL_BODY_BYTES, limitBodiesInFlight } from './body-budget.ts';

describe('a budget of body bytes in flight', () => {
  test('grants in arrival order, and a request larger than the whole budget goes alone', async () => {
    const budget = new BodyBudget(100);
    const order: string[] = [];
    const first = await budget.acquire(60);
    const big = budget.acquire(500).then((release) => (order.push('big'), release));
    const small = budget.acquire(10).then((release) => (order.push('small'), release));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(order, [], 'the 500 waits for the 60, and the 10 does not overtake it');
    first();
    const releaseBig = await big;
    assert.equal(budget.inUse, 500);
    assert.deepEqual(order, ['big']);
    releaseBig();
    (await small)();
    releaseBig();
    assert.equal(budget.inUse, 0, 'giving back twice gives back once');
  });

  test('a waiter that gives up leaves the queue, and the one behind it goes on', async () => {
    const budget = new BodyBudget(100);
    const held = await budget.acquire(100);
    const gaveUp = new AbortController();
    const abandoned = budget.acquire(50, gaveUp.signal);
    const next = budget.acquire(50);
    gaveUp.abort(new Error('client gone'));
    await assert.rejects(abandoned, /client gone/);
    held();
    (await next)();
    assert.equal(budget.inUse, 0);
  });
});

/** Polls `condition` for up to 2 s; fails with `what` if it never holds. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 2000;
  while (!condition()) {
    assert.ok(Date.now() < deadline, `never happened: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('limitBodiesInFlight, over real HTTP', () => {
  const BODY = 'x'.repeat(100 * 1024);
  let app: FastifyInstance;
  let baseUrl: string;
  const budget = new BodyBudget(150 * 1024);
  let inHandler = 0;
  let mostInHandler = 0;
  let gate: Promise<void> = Promise.resolve();
  let open: () => void = () => {};

  before(async () => {
    app = Fastify({ bodyLimit: 1024 * 1024, forceCloseConnections: true });
    app.addContentTypeParser('text/plain', { parseAs: 'string' }, (_request, body, done) => done(null, body));
    app.addHook('onRequest', limitBodiesInFlight(budget));
    // Large bodies are held in the handler until the test opens the gate; small ones answer at once.
    app.post('/intake', async (request) => {
      const { length } = request.body as string;
      if (length < SMALL_BODY_BYTES) return { length };
      inHandler += 1;
      mostInHandler = Math.max(mostInHandler, inHandler);
      await gate;
      inHandler -= 1;
      return { length };
    });
    baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(() => app.close());

  const post = (body: string, signal?: AbortSignal) =>
    fetch(`${baseUrl}/intake`, { method: 'POST', body, headers: { 'content-type': 'text/plain' }, signal });

  test('large bodies are read one budget at a time, and every one is answered', async () => {
    mostInHandler = 0;
    gate = new Promise((resolve) => (open = resolve));
    const posted = Promise.all([post(BODY), post(BODY), post(BODY), post(BODY)]);
    await until(() => budget.inUse > 0, 'the first large body holds the budget');
    // Time for the other three to arrive: without the budget they would all be in the handler now.
    await new Promise((resolve) => setTimeout(resolve, 100));
    open();
    const answers = await posted;
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [200, 200, 200, 200],
    );
    assert.equal(mostInHandler, 1, 'two bodies of 100 KiB never fit in 150 KiB together');
    assert.equal(budget.inUse, 0);
  });

  test('a small body is not held behind large ones', async () => {
    gate = new Promise((resolve) => (open = resolve));
    const large = post(BODY);
    await until(() => budget.inUse > 0, 'the first large body holds the budget');
    const waiting = post(BODY);
    const small = await post('y'.repeat(SMALL_BODY_BYTES - 1));
    assert.equal(small.status, 200, 'answered while the large ones are held');
    open();
    assert.equal((await large).status, 200);
    assert.equal((await waiting).status, 200);
    assert.equal(budget.inUse, 0);
  });

  test('a client that gives up while waiting frees its place', async () => {
    gate = new Promise((resolve) => (open = resolve));
    const large = post(BODY);
    await until(() => budget.inUse > 0, 'the first large body holds the budget');
    const giveUp = new AbortController();
    const abandoned = post(BODY, giveUp.signal);
    await new Promise((resolve) => setTimeout(resolve, 50));
    giveUp.abort();
    await assert.rejects(abandoned);
    open();
    assert.equal((await large).status, 200);
    const after = await post(BODY);
    assert.equal(after.status, 200);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(budget.inUse, 0, 'nothing is held by the request that left');
  });
});

describe('limitBodiesInFlight, with a client that trickles its body', () => {
  let app: FastifyInstance;
  let port: number;
  const budget = new BodyBudget(150 * 1024);

  before(async () => {
    app = Fastify({ bodyLimit: 1024 * 1024, forceCloseConnections: true });
    app.addContentTypeParser('text/plain', { parseAs: 'string' }, (_request, body, done) => done(null, body));
    app.addHook('onRequest', limitBodiesInFlight(budget, { arrivalMs: 300 }));
    app.post('/intake', async (request) => ({ length: (request.body as string).length }));
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as AddressInfo).port;
  });
  after(() => app.close());

  test('a body that stops coming is cut off with 408, and the large body waiting behind it is answered', async () => {
    const slow = connect({ host: '127.0.0.1', port });
    await once(slow, 'connect');
    let answer = '';
    slow.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    const closed = once(slow, 'close');
    slow.write(
      'POST /intake HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n' +
        `Content-Length: ${100 * 1024}\r\n\r\nxxxx`,
    );
    await until(() => budget.inUse > 0, 'the trickling body holds the budget');

    const started = performance.now();
    const waiting = await fetch(`http://127.0.0.1:${port}/intake`, {
      method: 'POST',
      body: 'y'.repeat(100 * 1024),
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(waiting.status, 200);
    assert.ok(performance.now() - started < 2000, 'answered once the trickle was cut off');
    await closed;
    assert.match(answer, /^HTTP\/1\.1 408 /);
    assert.match(answer, /did not arrive within 0\.3 s/);
    assert.equal(budget.inUse, 0);
  });
});
