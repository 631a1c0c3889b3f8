import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WorkQueue } from './work-queue.ts';
import { PerKeyBackoff } from './backoff.ts';

const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));

test('a burst of adds for one key is handed out once', async () => {
  const queue = new WorkQueue();
  queue.add('ns/a');
  queue.add('ns/a');
  queue.add('ns/b');
  queue.add('ns/a');
  assert.equal(queue.length, 2);
  assert.equal(await queue.get(), 'ns/a');
  assert.equal(await queue.get(), 'ns/b');
  assert.equal(queue.length, 0);
});

test('a key added while a worker holds it is not handed to a second worker, but comes back after done', async () => {
  const queue = new WorkQueue();
  queue.add('ns/a');
  const first = await queue.get();
  assert.equal(first, 'ns/a');
  queue.add('ns/a');
  let second: string | undefined = 'nothing yet';
  const waiting = queue.get().then((key) => (second = key));
  await tick();
  assert.equal(second, 'nothing yet', 'the second worker must not receive a key that is being processed');
  queue.done('ns/a');
  await waiting;
  assert.equal(second, 'ns/a', 'the change that arrived during processing is not lost');
});

test('done without a new add does not requeue', async () => {
  const queue = new WorkQueue();
  queue.add('k');
  await queue.get();
  queue.done('k');
  assert.equal(queue.length, 0);
});

test('a waiting worker is woken by add', async () => {
  const queue = new WorkQueue();
  const got = queue.get();
  queue.add('k');
  assert.equal(await got, 'k');
});

test('addAfter delays a key, and the earliest pending time wins', async () => {
  const queue = new WorkQueue();
  queue.addAfter('k', 200);
  queue.addAfter('k', 20);
  queue.addAfter('k', 500);
  assert.equal(queue.length, 0);
  await tick(60);
  assert.equal(queue.length, 1);
  assert.equal(await queue.get(), 'k');
  queue.done('k');
  await tick(250);
  assert.equal(queue.length, 0, 'the later timers were replaced, not added');
});

test('each failure of a key doubles its delay, per key, until forget resets it', () => {
  const backoff = new PerKeyBackoff({ baseMs: 100, maxMs: 1000 });
  const queue = new WorkQueue({ backoff });
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6].map(() => queue.addRateLimited('bad')),
    [100, 200, 400, 800, 1000, 1000],
  );
  assert.equal(queue.addRateLimited('other'), 100, 'another key is not slowed by the bad one');
  queue.forget('bad');
  assert.equal(queue.failures('bad'), 0);
  assert.equal(queue.addRateLimited('bad'), 100);
  queue.shutDown();
});

test('shutdown releases waiting workers and refuses new keys', async () => {
  const queue = new WorkQueue();
  const waiting = queue.get();
  queue.addAfter('later', 50);
  queue.shutDown();
  assert.equal(await waiting, undefined);
  queue.add('k');
  assert.equal(await queue.get(), undefined);
  await tick(80);
  assert.equal(queue.length, 0);
});
