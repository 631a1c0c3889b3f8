import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Temporal } from 'temporal-polyfill';
import { wallTimeOccursTwice, wallTimeToIso, zoneAbbreviation } from './zoned-time.ts';

test('a time the spring change skips moves forward by the gap; one the autumn change repeats is the first', () => {
  // Berlin, 2026-03-29 02:00 CET -> 03:00 CEST; 2026-10-25 03:00 CEST -> 02:00 CET.
  assert.equal(wallTimeToIso('2026-03-29T02:30', 'Europe/Berlin'), '2026-03-29T01:30:00.000Z'); // 03:30 CEST
  assert.equal(wallTimeToIso('2026-10-25T02:30', 'Europe/Berlin'), '2026-10-25T00:30:00.000Z'); // 02:30 CEST
  // New York, 2026-03-08 02:00 EST -> 03:00 EDT.
  assert.equal(wallTimeToIso('2026-03-08T02:30', 'America/New_York'), '2026-03-08T07:30:00.000Z'); // 03:30 EDT
  // Lord Howe's half-hour change: 02:00 -> 02:30 on 2026-10-04.
  assert.equal(wallTimeToIso('2026-10-04T02:15', 'Australia/Lord_Howe'), '2026-10-03T15:45:00.000Z'); // 02:45 (+11:00)
  // Times away from a change, and a zone without one.
  assert.equal(wallTimeToIso('2026-01-10T22:00', 'Europe/Berlin'), '2026-01-10T21:00:00.000Z');
  assert.equal(wallTimeToIso('2026-07-01T09:00', 'Asia/Kolkata'), '2026-07-01T03:30:00.000Z');
  assert.equal(wallTimeToIso('2026-07-01T09:00:30', 'UTC'), '2026-07-01T09:00:30.000Z');
  // Anything else is left for the server to refuse with its reason.
  assert.equal(wallTimeToIso('not a time', 'Europe/Berlin'), 'not a time');
});

test('every wall time near a 2026 change means the instant the server reads it as (Temporal, "compatible")', () => {
  const zones = [
    'Europe/Berlin',
    'America/New_York',
    'America/Havana',
    'America/Santiago',
    'Asia/Beirut',
    'Australia/Lord_Howe',
    'Pacific/Chatham',
    'America/St_Johns',
    'Europe/Dublin',
  ];
  let compared = 0;
  for (const zone of zones) {
    let at = Temporal.Instant.from('2026-01-01T00:00:00Z').toZonedDateTimeISO(zone);
    for (;;) {
      const change = at.getTimeZoneTransition('next');
      if (!change || change.year > 2026) break;
      // Every 15 minutes from six hours before the change to six hours after, on the wall clock.
      const around = change.toPlainDateTime().subtract({ hours: 6 });
      for (let step = 0; step <= 48; step++) {
        const wall = around.add({ minutes: 15 * step });
        const typed = wall.toString({ smallestUnit: 'minute' });
        const server = wall.toZonedDateTime(zone, { disambiguation: 'compatible' }).toInstant().toString();
        assert.equal(wallTimeToIso(typed, zone), new Date(server).toISOString(), `${typed} in ${zone}`);
        compared++;
      }
      at = change;
    }
  }
  assert.ok(compared > 700, `compared ${compared} wall times`);
});

test('only a time the autumn change repeats occurs twice, and its zone name tells which one', () => {
  const twice = (iso: string, zone: string) => wallTimeOccursTwice(Date.parse(iso), zone);
  // Berlin's 02:00-03:00 of 25 October 2026, first in CEST then in CET.
  assert.equal(twice('2026-10-25T00:30:00Z', 'Europe/Berlin'), true);
  assert.equal(twice('2026-10-25T01:30:00Z', 'Europe/Berlin'), true);
  assert.equal(twice('2026-10-25T01:59:59.999Z', 'Europe/Berlin'), true);
  assert.equal(twice('2026-10-24T23:59:59Z', 'Europe/Berlin'), false); // 01:59:59 CEST
  assert.equal(twice('2026-10-25T02:00:00Z', 'Europe/Berlin'), false); // 03:00 CET
  assert.equal(zoneAbbreviation(Date.parse('2026-10-25T00:30:00Z'), 'Europe/Berlin'), 'CEST');
  assert.equal(zoneAbbreviation(Date.parse('2026-10-25T01:30:00Z'), 'Europe/Berlin'), 'CET');
  // Lord Howe repeats half an hour (02:00 +11 back to 01:30 +10:30 on 5 April 2026).
  assert.equal(twice('2026-04-04T14:45:00Z', 'Australia/Lord_Howe'), true); // 01:45 +11
  assert.equal(twice('2026-04-04T15:15:00Z', 'Australia/Lord_Howe'), true); // 01:45 +10:30
  assert.equal(twice('2026-04-04T14:15:00Z', 'Australia/Lord_Howe'), false); // 01:15 +11
  // The spring change repeats nothing; nor do zones without changes, or with 30-minute offsets.
  assert.equal(twice('2026-03-29T01:30:00Z', 'Europe/Berlin'), false);
  assert.equal(twice('2026-10-04T16:30:00Z', 'Australia/Adelaide'), false);
  assert.equal(twice('2026-10-25T00:30:00Z', 'Asia/Kolkata'), false);
  assert.equal(twice('2026-11-01T05:30:00Z', 'America/New_York'), true); // 01:30 EDT
  assert.equal(zoneAbbreviation(Date.parse('2026-11-01T05:30:00Z'), 'America/New_York'), 'EDT');
});
