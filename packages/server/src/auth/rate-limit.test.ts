import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FixedWindowRateLimiter } from './rate-limit.ts';
import { ManualClock } from '@terdut/test-support';

test('allows the limit per window, then says how long to wait', () => {
  const clock = new ManualClock('2026-07-27T10:00:00Z');
  const limiter = new FixedWindowRateLimiter({ limit: 3, windowMs: 60_000, clock });
  for (let hit = 0; hit < 3; hit++) assert.deepEqual(limiter.hit('10.0.0.1'), { allowed: true });
  clock.advance(15_000);
  assert.deepEqual(limiter.hit('10.0.0.1'), { allowed: false, retryAfterSeconds: 45 });
});

test('each key counts on its own', () => {
  const limiter = new FixedWindowRateLimiter({ limit: 1, windowMs: 60_000, clock: new ManualClock() });
  assert.equal(limiter.hit('a').allowed, true);
  assert.equal(limiter.hit('a').allowed, false);
  assert.equal(limiter.hit('b').allowed, true);
});

test('a new window starts once the old one has passed', () => {
  const clock = new ManualClock();
  const limiter = new FixedWindowRateLimiter({ limit: 1, windowMs: 60_000, clock });
  limiter.hit('a');
  assert.equal(limiter.hit('a').allowed, false);
  clock.advance(60_000);
  assert.equal(limiter.hit('a').allowed, true);
});

test('a flood of distinct addresses does not grow memory without bound', () => {
  const clock = new ManualClock();
  const limiter = new FixedWindowRateLimiter({ limit: 1, windowMs: 1_000, clock });
  for (let n = 0; n < 10_000; n++) limiter.hit(`flood-${n}`);
  clock.advance(1_000);
  limiter.hit('after');
  assert.equal(limiter.size, 1, 'the 10,000 expired windows are forgotten');
});
