import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Controller } from './controller.ts';
import { KubeApiError } from './kube-client.ts';
import { createOperatorMetrics } from './metrics.ts';
import { PerKeyBackoff } from './backoff.ts';
import { WorkQueue } from './work-queue.ts';

/** Runs a controller over one key until `reconcile` has been called `passes` times. */
async function runPasses(failures: Error[], passes: number) {
  const queue = new WorkQueue({ backoff: new PerKeyBackoff({ baseMs: 1, maxMs: 5 }) });
  const metrics = createOperatorMetrics();
  const logged: { level: string; message: string }[] = [];
  let calls = 0;
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const controller = new Controller({
    name: 'test',
    queue,
    metrics,
    logger: {
      info: (message) => logged.push({ level: 'info', message }),
      error: (message) => logged.push({ level: 'error', message }),
    },
    reconcile: async () => {
      calls++;
      if (calls === passes) done();
      const failure = failures[calls - 1];
      if (failure) throw failure;
    },
  });
  controller.start(1);
  queue.add('ns/name');
  await finished;
  queue.shutDown();
  await controller.stopped();
  const errors = (await metrics.reconcileErrors.get()).values.reduce((sum, value) => sum + value.value, 0);
  return { logged, errors };
}

test('a write that met a newer object (409 Conflict) is retried without counting or logging an error', async () => {
  const conflict = new KubeApiError(
    409,
    'Conflict',
    'the object has been modified; please apply your changes',
  );
  const { logged, errors } = await runPasses([conflict], 2);
  assert.equal(
    errors,
    0,
    'terdut_operator_reconcile_errors_total feeds the TerdutOperatorReconcileErrors alert',
  );
  assert.deepEqual(
    logged.map((entry) => entry.level),
    ['info'],
  );
});

test('other failures, AlreadyExists among them, are errors: counted, logged, retried', async () => {
  const exists = new KubeApiError(409, 'AlreadyExists', 'secrets "x" already exists');
  const { logged, errors } = await runPasses([exists, new Error('connect ECONNREFUSED')], 3);
  assert.equal(errors, 2);
  assert.deepEqual(
    logged.map((entry) => entry.level),
    ['error', 'error'],
  );
});
