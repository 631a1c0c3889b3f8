import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDuration } from './duration.ts';

test('durations read as Go reads them (the README says snoozes and policy delays take Go durations)', () => {
  const cases: [string, number][] = [
    ['30m', 1_800_000],
    ['1h30m', 5_400_000],
    ['1.5h', 5_400_000],
    ['.5h', 1_800_000],
    ['1.h', 3_600_000],
    ['+1h', 3_600_000],
    ['500ms', 500],
    ['1500us', 2],
    ['1500µs', 2],
    ['1500μs', 2],
    ['2000000ns', 2],
    ['0', 0],
    ['1h0m0s', 3_600_000],
  ];
  for (const [text, ms] of cases) assert.equal(parseDuration(text), ms, text);
});

test('what Go refuses, or a negative duration, is not a duration', () => {
  for (const text of ['', '1', 'h', '-1h', '1d', '1 h', '1hh', '.h', '+', '1h-5m', '1H']) {
    assert.equal(parseDuration(text), undefined, text);
  }
  assert.equal(parseDuration('2d', { allowDays: true }), 172_800_000);
});
