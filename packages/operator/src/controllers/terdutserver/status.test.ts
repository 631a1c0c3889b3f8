import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TerdutServer } from '../../api/v1alpha1/terdutserver.ts';
import { ConditionSet } from './conditions.ts';
import type { Pass } from './context.ts';
import { desiredStatus, summarizeReady } from './status.ts';

const server = (networking?: TerdutServer['spec']['networking']): TerdutServer => ({
  apiVersion: 'terdut.ryuvia.com/v1alpha1',
  kind: 'TerdutServer',
  metadata: { namespace: 'ns', name: 't', uid: 'u', generation: 3, resourceVersion: '1' },
  spec: { replicas: 1, database: { secretRef: { name: 'db', key: 'DATABASE_URL' } }, networking },
});

function pass(s: TerdutServer, previous?: ConditionSet): Pass {
  return {
    server: s,
    conditions: previous ?? new ConditionSet(undefined, 3),
    status: { url: 'http://t.ns.svc:8080' },
  };
}

test('Ready is False with the reason and message of the first condition that is not True', () => {
  const p = pass(server());
  p.conditions.set('DatabaseReady', 'True', 'SecretFound', 'ok');
  p.conditions.set('Available', 'False', 'ReplicasNotReady', 'no replica yet');
  summarizeReady(p);
  const ready = p.conditions.get('Ready')!;
  assert.equal(ready.status, 'False');
  assert.equal(ready.reason, 'ReplicasNotReady');
  assert.match(ready.message, /no replica yet/);
  assert.equal(ready.observedGeneration, 3);
});

test('Exposed holds Ready back only when a hostname was asked for', () => {
  const cases: [TerdutServer['spec']['networking'], string][] = [
    [undefined, 'True'],
    [{ hostname: 'x.example.com', parentRefs: [{ name: 'gw' }] }, 'False'],
  ];
  for (const [networking, expected] of cases) {
    const p = pass(server(networking));
    p.conditions.set('DatabaseReady', 'True', 'SecretFound', 'ok');
    p.conditions.set('Available', 'True', 'MinimumReplicasAvailable', 'ok');
    p.conditions.set('Bootstrapped', 'True', 'CredentialsVerified', 'ok');
    p.conditions.set('Exposed', 'False', networking ? 'RouteNotAccepted' : 'NotRequested', 'x');
    summarizeReady(p);
    assert.equal(p.conditions.get('Ready')!.status, expected, JSON.stringify(networking));
  }
});

test('an unchanged condition keeps its lastTransitionTime, so an unchanged status is equal and not rewritten', () => {
  let clock = new Date('2026-01-01T00:00:00Z');
  const first = pass(server(), new ConditionSet(undefined, 3, () => clock));
  first.conditions.set('DatabaseReady', 'True', 'SecretFound', 'ok');
  summarizeReady(first);
  const written = desiredStatus(first);
  clock = new Date('2026-01-01T01:00:00Z');
  const again = pass({ ...server(), status: written }, new ConditionSet(written.conditions, 3, () => clock));
  again.conditions.set('DatabaseReady', 'True', 'SecretFound', 'ok');
  summarizeReady(again);
  assert.deepEqual(desiredStatus(again), written);
  const flipped = pass(
    { ...server(), status: written },
    new ConditionSet(written.conditions, 3, () => clock),
  );
  flipped.conditions.set('DatabaseReady', 'False', 'DatabaseSecretMissing', 'gone');
  assert.equal(flipped.conditions.get('DatabaseReady')!.lastTransitionTime, '2026-01-01T01:00:00Z');
});

test('a condition not determined yet makes Ready Unknown (not False), and a pass that failed on the way says why', () => {
  const p = pass(server());
  p.conditions.set('DatabaseReady', 'True', 'SecretFound', 'ok');
  p.failure = 'GET /api/v1/namespaces/ns/secrets/db: secrets "db" is forbidden';
  summarizeReady(p);
  const ready = p.conditions.get('Ready')!;
  assert.equal(ready.status, 'Unknown');
  assert.equal(ready.reason, 'AvailableUnknown');
  assert.match(ready.message, /Available could not be determined: GET .*forbidden; the operator retries/);

  const fresh = pass(server());
  summarizeReady(fresh);
  assert.equal(fresh.conditions.get('Ready')!.status, 'Unknown');
  assert.equal(fresh.conditions.get('Ready')!.message, 'DatabaseReady has not been determined yet');
});

test('a pass that failed after the spec changed does not leave Ready True: conditions from the previous generation say nothing about the new spec', () => {
  const before = new ConditionSet(undefined, 2);
  before.set('DatabaseReady', 'True', 'SecretFound', 'ok');
  before.set('Available', 'True', 'MinimumReplicasAvailable', '1 of 1 replicas available');
  before.set('Bootstrapped', 'True', 'CredentialsVerified', 'ok');
  before.set('Exposed', 'False', 'NotRequested', 'no hostname');
  const previous = before.toList(['DatabaseReady', 'Available', 'Bootstrapped', 'Exposed']);

  // Generation 3: the database step ran, then applying the Deployment failed (an admission webhook said no).
  const p = pass(server(), new ConditionSet(previous, 3));
  p.conditions.set('DatabaseReady', 'True', 'SecretFound', 'ok');
  p.failure =
    'PATCH /apis/apps/v1/namespaces/ns/deployments/t: admission webhook "policy.example.com" denied the request';
  summarizeReady(p);
  const ready = p.conditions.get('Ready')!;
  assert.equal(ready.status, 'Unknown');
  assert.equal(ready.reason, 'AvailableUnknown');
  assert.match(
    ready.message,
    /Available could not be determined: PATCH .*denied the request; the operator retries/,
  );
  assert.equal(ready.observedGeneration, 3);
});
