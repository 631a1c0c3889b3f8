import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OnePassAtATime } from './one-pass-at-a-time.ts';

/** A pass the test ends by hand, numbered in the order passes start. */
function controlledPasses() {
  const started: { number: number; end: () => void; fail: (error: Error) => void }[] = [];
  let running = 0;
  let mostAtOnce = 0;
  const pass = () =>
    new Promise<number>((resolve, reject) => {
      running++;
      mostAtOnce = Math.max(mostAtOnce, running);
      const number = started.length + 1;
      const finish = () => running--;
      started.push({
        number,
        end: () => (finish(), resolve(number)),
        fail: (error) => (finish(), reject(error)),
      });
    });
  return { pass, started, mostAtOnce: () => mostAtOnce };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

test('a call during a pass gets the next pass, which starts only when the running one ends', async () => {
  const passes = controlledPasses();
  const serial = new OnePassAtATime(passes.pass);
  const first = serial.run();
  const second = serial.run();
  await tick();
  assert.equal(passes.started.length, 1, 'the second waits');
  passes.started[0]!.end();
  assert.equal(await first, 1);
  await tick();
  assert.equal(passes.started.length, 2);
  passes.started[1]!.end();
  assert.equal(await second, 2);
  assert.equal(passes.mostAtOnce(), 1);
});

test('calls while a pass waits share it: at most one waits', async () => {
  const passes = controlledPasses();
  const serial = new OnePassAtATime(passes.pass);
  const running = serial.run();
  const waiting = [serial.run(), serial.run(), serial.run()];
  passes.started[0]!.end();
  await running;
  await tick();
  // A call now, while the shared one runs, waits for a pass of its own.
  const later = serial.run();
  passes.started[1]!.end();
  assert.deepEqual(await Promise.all(waiting), [2, 2, 2]);
  await tick();
  passes.started[2]!.end();
  assert.equal(await later, 3);
  assert.equal(passes.started.length, 3);
  assert.equal(passes.mostAtOnce(), 1);
});

test('a failed pass fails its callers only; the waiting pass still runs', async () => {
  const passes = controlledPasses();
  const serial = new OnePassAtATime(passes.pass);
  const failing = serial.run();
  const next = serial.run();
  passes.started[0]!.fail(new Error('database gone'));
  await assert.rejects(failing, /database gone/);
  await tick();
  passes.started[1]!.end();
  assert.equal(await next, 2);
  // Idle again: a call starts at once.
  const again = serial.run();
  assert.equal(passes.started.length, 3);
  passes.started[2]!.end();
  assert.equal(await again, 3);
});

test('idle resolves once the running pass and the one waiting have ended, even when one fails', async () => {
  const passes = controlledPasses();
  const serial = new OnePassAtATime(passes.pass);
  await serial.idle();
  void serial.run().catch(() => {});
  void serial.run();
  let idle = false;
  const whenIdle = serial.idle().then(() => (idle = true));
  passes.started[0]!.fail(new Error('database gone'));
  await tick();
  assert.equal(idle, false, 'the waiting pass still runs');
  passes.started[1]!.end();
  await whenIdle;
  assert.equal(passes.started.length, 2);
});
