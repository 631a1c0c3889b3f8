import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GatheredCalls } from './gathered-calls.ts';

/** A batch runner the test answers by hand: each batch's items, and how to end it. */
function controlledBatches() {
  const batches: { items: number[]; answer: () => void; fail: (error: Error) => void }[] = [];
  const run = (items: number[]) =>
    new Promise<string[]>((resolve, reject) => {
      batches.push({
        items,
        answer: () => resolve(items.map((item) => `done ${item}`)),
        fail: reject,
      });
    });
  return { run, batches };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

test('with a batch slot free, a call goes at once and alone', async () => {
  const runner = controlledBatches();
  const calls = new GatheredCalls({ run: runner.run, limit: 2, maxBatch: 16 });
  const first = calls.call(1);
  const second = calls.call(2);
  await tick();
  assert.deepEqual(
    runner.batches.map((batch) => batch.items),
    [[1], [2]],
  );
  runner.batches[1]!.answer();
  runner.batches[0]!.answer();
  assert.equal(await first, 'done 1');
  assert.equal(await second, 'done 2');
});

test('calls made while every slot is busy wait and go together, each answered with its own output', async () => {
  const runner = controlledBatches();
  const calls = new GatheredCalls({ run: runner.run, limit: 1, maxBatch: 3 });
  const answers = [1, 2, 3, 4, 5].map((item) => calls.call(item));
  await tick();
  assert.deepEqual(
    runner.batches.map((batch) => batch.items),
    [[1]],
  );
  runner.batches[0]!.answer();
  await tick();
  assert.deepEqual(runner.batches[1]!.items, [2, 3, 4], 'at most maxBatch in one');
  runner.batches[1]!.answer();
  await tick();
  assert.deepEqual(runner.batches[2]!.items, [5]);
  runner.batches[2]!.answer();
  assert.deepEqual(await Promise.all(answers), ['done 1', 'done 2', 'done 3', 'done 4', 'done 5']);
});

test('a failed batch is run again call by call: only the bad call fails, and only its caller hears', async () => {
  const seen: number[][] = [];
  const calls = new GatheredCalls({
    run: async (items: number[]) => {
      seen.push(items);
      await tick();
      if (items.includes(3)) throw new Error('item 3 is bad');
      return items.map((item) => item * 10);
    },
    limit: 1,
    maxBatch: 16,
  });
  const answers = [1, 2, 3, 4].map((item) =>
    calls.call(item).then(
      (value) => ({ value }),
      (error: Error) => ({ error: error.message }),
    ),
  );
  assert.deepEqual(await Promise.all(answers), [
    { value: 10 },
    { value: 20 },
    { error: 'item 3 is bad' },
    { value: 40 },
  ]);
  assert.deepEqual(seen, [[1], [2, 3, 4], [2], [3], [4]]);
});
