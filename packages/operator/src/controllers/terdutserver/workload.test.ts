import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TerdutServer } from '../../api/v1alpha1/terdutserver.ts';
import { loadConfig } from '../../../../server/src/config.ts';
import { defaultTrustedProxies, desiredDeployment } from './workload.ts';

const server = (networking?: TerdutServer['spec']['networking']): TerdutServer => ({
  apiVersion: 'terdut.ryuvia.com/v1alpha1',
  kind: 'TerdutServer',
  metadata: { namespace: 'ns', name: 't', uid: 'u', generation: 1, resourceVersion: '1' },
  spec: { replicas: 1, database: { secretRef: { name: 'db', key: 'DATABASE_URL' } }, networking },
});

const trustedProxiesOf = (s: TerdutServer): string | undefined => {
  const deployment = desiredDeployment(s, 'terdut-server:test', []) as unknown as {
    spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } };
  };
  return deployment.spec.template.spec.containers[0]!.env.find((e) => e.name === 'TERDUT_TRUSTED_PROXIES')
    ?.value;
};

const gateway = [{ name: 'public', namespace: 'gateways' }];

test('without an HTTPRoute the server trusts no proxy', () => {
  assert.equal(trustedProxiesOf(server()), undefined);
});

test('behind an HTTPRoute the server trusts the private ranges where gateways run, which the server accepts', () => {
  const value = trustedProxiesOf(server({ hostname: 'terdut.example.com', parentRefs: gateway }));
  assert.equal(value, defaultTrustedProxies.join(','));
  assert.doesNotThrow(() =>
    loadConfig({ DATABASE_URL: 'postgres://x@localhost/db', TERDUT_TRUSTED_PROXIES: value }),
  );
});

test('spec.networking.trustedProxies replaces the default; an empty list sets nothing', () => {
  assert.equal(
    trustedProxiesOf(
      server({ hostname: 'terdut.example.com', parentRefs: gateway, trustedProxies: ['10.42.0.0/16'] }),
    ),
    '10.42.0.0/16',
  );
  assert.equal(
    trustedProxiesOf(server({ hostname: 'terdut.example.com', parentRefs: gateway, trustedProxies: [] })),
    undefined,
  );
});

test('a server still applying migrations for up to 10 minutes is not restarted by its liveness probe', () => {
  type Probe = { httpGet: { path: string }; periodSeconds: number; failureThreshold: number };
  const deployment = desiredDeployment(server(), 'terdut-server:test', []) as unknown as {
    spec: { template: { spec: { containers: { startupProbe?: Probe; livenessProbe: Probe }[] } } };
  };
  const container = deployment.spec.template.spec.containers[0]!;
  // Kubernetes runs no liveness probe until the startup probe has succeeded once.
  const startup = container.startupProbe;
  assert.equal(startup?.httpGet.path, '/healthz');
  assert.ok(startup.periodSeconds * startup.failureThreshold >= 600);
});

test('a stopping server keeps serving while it leaves the endpoints, and has time to finish its requests', () => {
  const deployment = desiredDeployment(server(), 'terdut-server:test', []) as unknown as {
    spec: {
      template: {
        spec: {
          terminationGracePeriodSeconds: number;
          containers: { lifecycle?: { preStop?: { sleep?: { seconds: number } } } }[];
        };
      };
    };
  };
  const pod = deployment.spec.template.spec;
  const pause = pod.containers[0]!.lifecycle?.preStop?.sleep?.seconds ?? 0;
  assert.ok(pause >= 5, 'without a pause, requests routed to it in the next seconds are refused');
  // The server itself takes up to 25 s to finish requests in flight after SIGTERM.
  assert.ok(pod.terminationGracePeriodSeconds >= pause + 25);
});
