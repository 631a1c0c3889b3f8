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
