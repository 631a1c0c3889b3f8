/**
 * The Argo CD health check of the README (deploy/argocd/terdutserver-health.lua)
 * on the states the real operator's tests do not stop in: nothing reported
 * yet, a spec newer than the status, a condition still Unknown, a server
 * scaled to zero, a key being reissued. (Ready, DeploymentInvalid,
 * RolloutStuck and a missing database Secret are checked on the objects the
 * real operator wrote, in bootstrap.test.ts and invalid-spec.test.ts.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { argoCdHealth } from './support/argocd-health.ts';

function terdutServer(generation: number, observed: number | undefined, ready?: object): object {
  return {
    apiVersion: 'terdut.ryuvia.com/v1alpha1',
    kind: 'TerdutServer',
    metadata: { name: 'oncall', generation },
    ...(observed === undefined
      ? {}
      : {
          status: {
            observedGeneration: observed,
            conditions: [
              { type: 'DatabaseReady', status: 'True', reason: 'SecretFound', observedGeneration: observed },
              ...(ready ? [{ type: 'Ready', observedGeneration: observed, ...ready }] : []),
            ],
          },
        }),
  };
}

test('Argo CD sees a TerdutServer the operator has not reported on, or not for its spec, as Progressing', async () => {
  assert.equal((await argoCdHealth(terdutServer(1, undefined))).status, 'Progressing');
  const stale = await argoCdHealth(terdutServer(3, 2, { status: 'True', reason: 'Ready', message: 'ready' }));
  assert.deepEqual(stale, {
    status: 'Progressing',
    message: 'waiting for terdut-operator to act on generation 3',
  });
});

test('Argo CD: Unknown and waiting reasons are Progressing, scaled to zero is Suspended, a refused spec Degraded', async () => {
  const cases: [object, string][] = [
    [{ status: 'Unknown', reason: 'AvailableUnknown', message: 'not determined yet' }, 'Progressing'],
    [{ status: 'False', reason: 'ReplicasNotReady', message: '0 of 1 replicas' }, 'Progressing'],
    [{ status: 'False', reason: 'CredentialsRefused', message: 'replacing the key' }, 'Progressing'],
    [{ status: 'False', reason: 'ScaledToZero', message: 'replicas: 0' }, 'Suspended'],
    [{ status: 'False', reason: 'ServerSettingsInvalid', message: 'spec.timezone' }, 'Degraded'],
    [{ status: 'False', reason: 'BootstrapStateLost', message: 'restart the pod' }, 'Degraded'],
    [{ status: 'True', reason: 'Ready', message: 'serving' }, 'Healthy'],
  ];
  for (const [ready, expected] of cases) {
    const health = await argoCdHealth(terdutServer(2, 2, ready));
    assert.equal(health.status, expected, JSON.stringify(ready));
    assert.equal(health.message, (ready as { message: string }).message);
  }
});
