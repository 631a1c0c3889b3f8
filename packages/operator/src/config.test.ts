import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadOperatorConfig, OperatorConfigError } from './config.ts';

test('defaults: all namespaces, leader election on, in-cluster config', () => {
  const config = loadOperatorConfig([], {});
  assert.deepEqual(config.watchNamespaces, []);
  assert.equal(config.leaderElection, true);
  assert.equal(config.kubeconfig, undefined);
  assert.equal(config.operatorNamespace, 'terdut-system');
  assert.equal(config.tokenPickupTimeoutMs, 180_000);
});

test('flags win over the environment, which wins over defaults', () => {
  const env = {
    POD_NAMESPACE: 'from-pod',
    TERDUT_OPERATOR_CONCURRENCY: '8',
    TERDUT_OPERATOR_WATCH_NAMESPACES: 'a, b',
  };
  const config = loadOperatorConfig(['--concurrency', '2'], env);
  assert.equal(config.operatorNamespace, 'from-pod');
  assert.equal(config.concurrency, 2);
  assert.deepEqual(config.watchNamespaces, ['a', 'b']);
});

test('a bad value names the flag and its variable', () => {
  assert.throws(
    () => loadOperatorConfig(['--concurrency', 'many'], {}),
    (error: unknown) =>
      error instanceof OperatorConfigError &&
      /--concurrency \(TERDUT_OPERATOR_CONCURRENCY\)/.test(error.message),
  );
  assert.throws(() => loadOperatorConfig(['--no-such-flag'], {}), /Unknown option/);
});

test('the key check interval and the finalize timeout: 300 s and 120 s by default, whole seconds ≥ 1', () => {
  const defaults = loadOperatorConfig([], {});
  assert.equal(defaults.keyCheckIntervalMs, 300_000);
  assert.equal(defaults.finalizeTimeoutMs, 120_000);
  const set = loadOperatorConfig(['--key-check-interval', '30'], { TERDUT_OPERATOR_FINALIZE_TIMEOUT: '10' });
  assert.equal(set.keyCheckIntervalMs, 30_000);
  assert.equal(set.finalizeTimeoutMs, 10_000);
  assert.throws(
    () => loadOperatorConfig(['--key-check-interval', '0'], {}),
    /--key-check-interval \(TERDUT_OPERATOR_KEY_CHECK_INTERVAL\) must be a whole number ≥ 1/,
  );
});
