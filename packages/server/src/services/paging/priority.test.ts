import { test } from 'node:test';
import assert from 'node:assert/strict';
import { composeMessage, MISSED_HEARTBEAT_PRIORITY, priorityOf } from './messages.ts';

test('ntfy priority follows the severity as the incident ranks it: page is as urgent as critical', () => {
  assert.equal(priorityOf('critical'), 5);
  assert.equal(priorityOf('page'), 5);
  assert.equal(priorityOf('Page'), 5);
  assert.equal(priorityOf('error'), 4);
  assert.equal(priorityOf('high'), 4);
  assert.equal(priorityOf('warning'), 3);
  assert.equal(priorityOf('warn'), 3);
  assert.equal(priorityOf('info'), 2);
  assert.equal(priorityOf('none'), 2);
  assert.equal(priorityOf('whatever'), 2);
  assert.equal(priorityOf(null), 2);
});

test('a summary is as urgent as the most urgent page folded into it, a missed heartbeat as urgent as its own page', () => {
  const person = { id: 7, username: 'frank' };
  const summary = (folded: { severity: string | null; missed_heartbeat: boolean }[]) =>
    composeMessage({
      purpose: 'summary',
      person,
      publicUrl: undefined,
      folded: folded.map((entry, index) => ({ id: index + 1, title: `incident ${index + 1}`, ...entry })),
    }).priority;
  assert.equal(summary([{ severity: 'info', missed_heartbeat: false }]), 2);
  assert.equal(
    summary([
      { severity: null, missed_heartbeat: true },
      { severity: null, missed_heartbeat: true },
    ]),
    MISSED_HEARTBEAT_PRIORITY,
    'silent heartbeats folded together still wake whoever is on call',
  );
  assert.equal(
    summary([
      { severity: 'info', missed_heartbeat: false },
      { severity: 'critical', missed_heartbeat: false },
    ]),
    5,
  );
});
