import { test } from 'node:test';
import assert from 'node:assert/strict';
import { refusedServerSettings } from './server-settings.ts';
import type { TerdutServer } from '../../api/v1alpha1/terdutserver.ts';

const spec = (extra: Partial<TerdutServer['spec']>): TerdutServer['spec'] =>
  ({ replicas: 1, database: { secretRef: { name: 'db' } }, ...extra }) as TerdutServer['spec'];

test('settings terdut-server would refuse at start-up are named with the field', () => {
  assert.match(refusedServerSettings(spec({ timezone: 'Mars/Olympus' }))!, /^spec\.timezone "Mars\/Olympus"/);
  assert.match(refusedServerSettings(spec({ publicURL: 'https://' }))!, /^spec\.publicURL "https:\/\/"/);
  assert.match(refusedServerSettings(spec({ publicURL: 'https://terdut.example.com:port' }))!, /publicURL/);
  const proxies = (trustedProxies: string[]) =>
    refusedServerSettings(spec({ networking: { hostname: 'terdut.example.com', trustedProxies } }));
  assert.match(proxies(['10.0.0.0/8', 'gateway.internal'])!, /trustedProxies entry "gateway\.internal"/);
  assert.match(proxies(['10.0.0.0/33'])!, /"10\.0\.0\.0\/33"/);
});

test('settings terdut-server takes pass', () => {
  assert.equal(
    refusedServerSettings(
      spec({
        timezone: 'Europe/Berlin',
        publicURL: 'https://terdut.example.com',
        networking: {
          hostname: 'terdut.example.com',
          trustedProxies: ['10.0.0.0/8', 'fd00::/8', 'uniquelocal'],
        },
      }),
    ),
    undefined,
  );
  assert.equal(refusedServerSettings(spec({})), undefined);
});
