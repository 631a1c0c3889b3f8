import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Counter, Registry } from 'prom-client';
import { parseListenAddress, startHealthServer } from './health-server.ts';

test('/healthz answers while the process lives; /readyz follows the readiness check; /metrics serves the registry', async () => {
  let ready = false;
  const registry = new Registry();
  new Counter({ name: 'terdut_operator_test_total', help: 'x', registers: [registry] }).inc(2);
  const server = await startHealthServer({ address: '127.0.0.1:0', ready: () => ready, registry });
  try {
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    assert.equal((await fetch(`${server.url}/readyz`)).status, 503);
    ready = true;
    assert.equal((await fetch(`${server.url}/readyz`)).status, 200);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    assert.match(metrics, /terdut_operator_test_total 2/);
    assert.equal((await fetch(`${server.url}/nothing`)).status, 404);
  } finally {
    await server.close();
  }
});

test('listen addresses: ":8081" means every interface', () => {
  assert.deepEqual(parseListenAddress(':8081'), { host: '0.0.0.0', port: 8081 });
  assert.deepEqual(parseListenAddress('127.0.0.1:0'), { host: '127.0.0.1', port: 0 });
  assert.throws(() => parseListenAddress('8081x'), /not a listen address/);
});
