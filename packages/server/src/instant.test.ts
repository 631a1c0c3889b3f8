import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseInstant } from './instant.ts';

const iso = (text: string, seconds?: 'optional') => parseInstant(text, { seconds })?.toISOString();

test('an RFC 3339 time names the instant its zone says, whatever the machine zone', () => {
  assert.equal(iso('2026-03-29T02:30:00+02:00'), '2026-03-29T00:30:00.000Z');
  assert.equal(iso('2026-03-29T02:30:00-09:30'), '2026-03-29T12:00:00.000Z');
  assert.equal(iso('2026-12-03t22:00:00.123456z'), '2026-12-03T22:00:00.123Z');
  assert.equal(iso('2028-02-29T23:59:59Z'), '2028-02-29T23:59:59.000Z');
  assert.equal(iso('0001-01-01T00:00:00Z'), '0001-01-01T00:00:00.000Z');
  assert.equal(iso('0050-06-01T00:00:00Z'), '0050-06-01T00:00:00.000Z');
});

test('an impossible date or clock time is refused, not rolled over', () => {
  for (const text of [
    '2026-02-30T01:00:00Z',
    '2026-02-29T00:00:00Z',
    '2026-04-31T12:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-00-10T00:00:00Z',
    '2026-12-03T24:00:00Z',
    '2026-12-03T23:60:00Z',
    '2026-12-03T23:59:60Z',
    '2026-12-03T22:00:00+24:00',
    '2026-12-03T22:00:00+02:60',
  ]) {
    assert.equal(parseInstant(text), undefined, text);
  }
});

test('a time without a zone is refused: it would mean another instant on each server', () => {
  assert.equal(parseInstant('2026-03-29T02:30:00'), undefined);
  assert.equal(parseInstant('2026-03-29T02:30', { seconds: 'optional' }), undefined);
  assert.equal(parseInstant('2026-03-29'), undefined);
  assert.equal(parseInstant('Sun, 29 Mar 2026 02:30:00 GMT'), undefined);
});

test('seconds may be left out only where the field says so', () => {
  assert.equal(parseInstant('2026-12-03T22:00Z'), undefined);
  assert.equal(iso('2026-12-03T22:00Z', 'optional'), '2026-12-03T22:00:00.000Z');
});
