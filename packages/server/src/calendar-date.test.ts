import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addDays, isCalendarDate, localDate } from './calendar-date.ts';

test('only real dates in YYYY-MM-DD form are calendar dates', () => {
  assert.equal(isCalendarDate('2026-07-27'), true);
  assert.equal(isCalendarDate('2028-02-29'), true);
  assert.equal(isCalendarDate('2026-02-29'), false);
  assert.equal(isCalendarDate('2026-13-01'), false);
  assert.equal(isCalendarDate('2026-7-27'), false);
  assert.equal(isCalendarDate('27.07.2026'), false);
  assert.equal(isCalendarDate('0000-01-01'), false);
  assert.equal(isCalendarDate('2026-07-27T00:00:00Z'), false);
});

test('the local date follows the time zone, not UTC', () => {
  const lateEvening = new Date('2026-07-27T23:30:00Z');
  assert.equal(localDate(lateEvening, 'UTC'), '2026-07-27');
  assert.equal(localDate(lateEvening, 'Europe/Berlin'), '2026-07-28');
  assert.equal(localDate(new Date('2026-07-28T03:00:00Z'), 'America/Los_Angeles'), '2026-07-27');
});

test('adding days crosses months, years and leap days', () => {
  assert.equal(addDays('2026-12-31', 1), '2027-01-01');
  assert.equal(addDays('2028-02-28', 1), '2028-02-29');
  assert.equal(addDays('2026-03-01', -1), '2026-02-28');
  assert.equal(addDays('2026-07-27', 30), '2026-08-26');
});
