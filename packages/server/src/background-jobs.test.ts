import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startBackgroundJobs } from './background-jobs.ts';

const quietLogger = { error: () => {}, debug: () => {} };

test('background jobs run repeatedly, survive a failing pass, and stop waits for the pass in flight', async () => {
  let passes = 0;
  let failures = 0;
  let finishedAfterStop: boolean | undefined;
  const jobs = startBackgroundJobs(
    [
      {
        name: 'counting',
        intervalMs: 5,
        run: async () => {
          passes += 1;
          if (passes === 2) {
            failures += 1;
            throw new Error('database went away');
          }
          await sleep(20);
          finishedAfterStop = true;
        },
      },
    ],
    quietLogger,
  );
  while (passes < 4) await sleep(5);
  finishedAfterStop = false;
  await jobs.stop();
  const stoppedAt = passes;
  assert.equal(failures, 1);
  assert.equal(finishedAfterStop, true, 'stop() resolved only after the running pass ended');
  await sleep(50);
  assert.equal(passes, stoppedAt, 'no pass after stop()');
});
