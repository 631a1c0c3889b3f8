import { test } from 'node:test';
import assert from 'node:assert/strict';
import ICAL from 'ical.js';
import { renderCalendar, type CalendarEvent } from './schedule-calendar.ts';

const ms = (iso: string) => Date.parse(iso);

function calendar(events: CalendarEvent[], zone: string, from: string, to: string): string {
  return renderCalendar({
    name: 'On call: Test',
    timeZone: zone,
    events,
    now: ms(from),
    from: ms(from),
    to: ms(to),
  });
}

function parsedEvents(text: string) {
  const component = new ICAL.Component(ICAL.parse(text));
  for (const zone of component.getAllSubcomponents('vtimezone')) ICAL.TimezoneService.register(zone);
  return component.getAllSubcomponents('vevent').map((e) => new ICAL.Event(e));
}

test('Lord Howe: the VTIMEZONE has the half-hour offsets, and events come back at their instants', () => {
  const zone = 'Australia/Lord_Howe';
  const events: CalendarEvent[] = [
    // 09:00 +11 on 4 April to 09:00 +10:30 on 5 April: 24.5 hours across the change.
    {
      uid: 'a',
      start: ms('2026-04-03T22:00:00Z'),
      end: ms('2026-04-04T22:30:00Z'),
      timeZone: zone,
      summary: 'alice',
      description: '',
    },
  ];
  const text = calendar(events, zone, '2026-03-20T00:00:00Z', '2026-05-01T00:00:00Z');
  assert.match(text, /BEGIN:VTIMEZONE\r\nTZID:Australia\/Lord_Howe\r\n/);
  assert.match(
    text,
    /BEGIN:STANDARD\r\nDTSTART:20260405T020000\r\nTZOFFSETFROM:\+1100\r\nTZOFFSETTO:\+1030\r\n/,
  );
  assert.match(text, /DTSTART;TZID=Australia\/Lord_Howe:20260404T090000\r\n/);
  assert.match(text, /DTEND;TZID=Australia\/Lord_Howe:20260405T090000\r\n/);
  const [event] = parsedEvents(text);
  assert.equal(event!.startDate.toJSDate().toISOString(), '2026-04-03T22:00:00.000Z');
  assert.equal(event!.endDate.toJSDate().toISOString(), '2026-04-04T22:30:00.000Z');
});

test('a wall-clock time that occurs twice is written in UTC, so no calendar program guesses', () => {
  const zone = 'Europe/Berlin';
  const first = ms('2026-10-25T00:30:00Z'); // 02:30 CEST
  const second = ms('2026-10-25T01:30:00Z'); // 02:30 CET
  const text = calendar(
    [{ uid: 'b', start: first, end: second, timeZone: zone, summary: 'bob', description: '' }],
    zone,
    '2026-10-01T00:00:00Z',
    '2026-11-01T00:00:00Z',
  );
  assert.match(text, /DTSTART:20261025T003000Z\r\n/);
  assert.match(text, /DTEND:20261025T013000Z\r\n/);
  const [event] = parsedEvents(text);
  assert.equal(event!.endDate.toJSDate().getTime() - event!.startDate.toJSDate().getTime(), 3_600_000);
});

test('a zone without DST gets one observance; text is escaped and long lines folded at 75 octets', () => {
  const summary = 'On call: Datenbanken, Süd; Bereitschaft \\ '.repeat(4);
  const text = calendar(
    [
      {
        uid: 'c',
        start: ms('2026-06-01T00:00:00Z'),
        end: ms('2026-06-02T00:00:00Z'),
        timeZone: 'Asia/Tokyo',
        summary,
        description: 'x',
      },
    ],
    'Asia/Tokyo',
    '2026-05-01T00:00:00Z',
    '2026-07-01T00:00:00Z',
  );
  assert.equal(text.match(/BEGIN:STANDARD/g)?.length, 1);
  assert.doesNotMatch(text, /BEGIN:DAYLIGHT/);
  assert.match(text, /TZOFFSETTO:\+0900/);
  for (const line of text.split('\r\n')) assert.ok(Buffer.byteLength(line) <= 75, line);
  assert.equal(parsedEvents(text)[0]!.summary, summary);
});

test('line breaks of any kind and control characters in names never reach a content line raw', () => {
  const text = renderCalendar({
    name: 'On call: Data\rbases\u0007',
    timeZone: 'UTC',
    events: [
      {
        uid: 'd',
        start: ms('2026-06-01T00:00:00Z'),
        end: ms('2026-06-02T00:00:00Z'),
        timeZone: 'UTC',
        summary: 'Nights\r\nWeekends\rHolidays\nAll\u001b\ttabbed',
        description: 'x',
      },
    ],
    now: ms('2026-05-01T00:00:00Z'),
    from: ms('2026-05-01T00:00:00Z'),
    to: ms('2026-07-01T00:00:00Z'),
  });
  // RFC 5545 3.1: every line ends in CRLF; TEXT (3.3.11) holds no control character but HTAB.
  for (const line of text.split('\r\n')) assert.doesNotMatch(line, /[^\P{Cc}\t]/u, JSON.stringify(line));
  assert.match(text, /\r\nX-WR-CALNAME:On call: Data\\nbases\r\n/);
  assert.equal(parsedEvents(text)[0]!.summary, 'Nights\nWeekends\nHolidays\nAll\ttabbed');
});
