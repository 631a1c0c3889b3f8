import { test } from 'node:test';
import assert from 'node:assert/strict';
import { alertIdentities } from './alert-identity.ts';

const alert = (id: number, labels: Record<string, string>) => ({
  id,
  labels: { alertname: 'HighCPU', job: 'node', ...labels },
});

test('alerts of one name are told apart by the labels that differ, not those they share', () => {
  const identities = alertIdentities([
    alert(1, { instance: 'db-3:9100' }),
    alert(2, { instance: 'db-4:9100' }),
  ]);
  assert.deepEqual(
    [...identities],
    [
      [1, 'instance=db-3:9100'],
      [2, 'instance=db-4:9100'],
    ],
  );
});

test('the alert name is never one of them: the timeline says it already', () => {
  const identities = alertIdentities([
    { id: 1, labels: { alertname: 'HighCPU', instance: 'db-3' } },
    { id: 2, labels: { alertname: 'DiskFull', instance: 'db-3' } },
  ]);
  assert.equal(identities.size, 0);
});

test('an incident of one alert, or of alerts alike but for their name, has nothing to tell apart', () => {
  assert.equal(alertIdentities([alert(1, { instance: 'db-3' })]).size, 0);
  assert.equal(alertIdentities([]).size, 0);
});

test('a label only some alerts carry tells those apart; the others show what they have', () => {
  const identities = alertIdentities([
    alert(1, { instance: 'db-3', pod: 'api-7' }),
    alert(2, { instance: 'db-4' }),
  ]);
  assert.equal(identities.get(1), 'instance=db-3, pod=api-7');
  assert.equal(identities.get(2), 'instance=db-4');
});

test('at most three labels, the one that tells most alerts apart first, and long values cut', () => {
  const long = `${'x'.repeat(45)}.example`;
  const identities = alertIdentities([
    alert(1, { zone: 'a', instance: 'db-1', pod: 'p1', node: 'n1', team: 'red' }),
    alert(2, { zone: 'a', instance: 'db-2', pod: 'p2', node: 'n2', team: 'red' }),
    alert(3, { zone: 'b', instance: long, pod: 'p3', node: 'n3', team: 'blue' }),
  ]);
  // instance, node and pod have three values each (by name among equals); team and zone two.
  assert.equal(identities.get(1), 'instance=db-1, node=n1, pod=p1, +2 more');
  assert.equal(identities.get(3), `instance=${'x'.repeat(39)}…, node=n3, pod=p3, +2 more`);
});
