import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, ConfigError } from './config.ts';

const base = {
  TERDUT_PUBLIC_URL: 'https://terdut.example.com/',
  TERDUT_OIDC_ISSUER_URL: 'https://idp.example.com/realms/main',
  TERDUT_OIDC_CLIENT_ID: 'terdut',
};

test('the OIDC redirect URI is derived from TERDUT_PUBLIC_URL', () => {
  const config = loadConfig(base);
  assert.equal(config.oidc?.redirectUri, 'https://terdut.example.com/auth/oidc/callback');
  assert.equal(config.oidc?.groupsClaim, 'groups');
  assert.equal(config.oidc?.clientSecret, undefined);
});

test('the client secret is read from TERDUT_OIDC_CLIENT_SECRET_FILE (trailing newline trimmed)', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'terdut-config-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'client-secret');
  writeFileSync(file, 's3cret-from-a-mounted-secret\n');
  const config = loadConfig({ ...base, TERDUT_OIDC_CLIENT_SECRET_FILE: file });
  assert.equal(config.oidc?.clientSecret, 's3cret-from-a-mounted-secret');
});

test('a missing secret file, or both secret variables, stop start-up with a message naming the variable', () => {
  assert.throws(
    () => loadConfig({ ...base, TERDUT_OIDC_CLIENT_SECRET_FILE: '/nonexistent/secret' }),
    (error: unknown) =>
      error instanceof ConfigError &&
      /TERDUT_OIDC_CLIENT_SECRET_FILE=.*cannot be read \(ENOENT\)/.test(error.message),
  );
  assert.throws(
    () =>
      loadConfig({
        ...base,
        TERDUT_OIDC_CLIENT_SECRET: 'a',
        TERDUT_OIDC_CLIENT_SECRET_FILE: '/nonexistent/secret',
      }),
    /set only one of TERDUT_OIDC_CLIENT_SECRET and TERDUT_OIDC_CLIENT_SECRET_FILE/,
  );
});

test('a plain-http issuer is refused unless it is on this machine', () => {
  assert.throws(
    () => loadConfig({ ...base, TERDUT_OIDC_ISSUER_URL: 'http://idp.example.com' }),
    /TERDUT_OIDC_ISSUER_URL=.*must be an https:\/\/ URL/,
  );
  assert.equal(
    loadConfig({ ...base, TERDUT_OIDC_ISSUER_URL: 'http://127.0.0.1:5556/dex' }).oidc?.issuerUrl,
    'http://127.0.0.1:5556/dex',
  );
});

test('allowed and admin groups are comma-separated lists', () => {
  const config = loadConfig({
    ...base,
    TERDUT_OIDC_ALLOWED_GROUPS: 'oncall, sre ,',
    TERDUT_OIDC_ADMIN_GROUPS: 'sre-leads',
    TERDUT_OIDC_GROUPS_CLAIM: 'roles',
  });
  assert.deepEqual(config.oidc?.allowedGroups, ['oncall', 'sre']);
  assert.deepEqual(config.oidc?.adminGroups, ['sre-leads']);
  assert.equal(config.oidc?.groupsClaim, 'roles');
});

test('TERDUT_TRUSTED_PROXIES takes addresses, CIDRs and proxy-addr names, and refuses anything else', () => {
  assert.deepEqual(loadConfig({}).trustedProxies, []);
  assert.deepEqual(
    loadConfig({ TERDUT_TRUSTED_PROXIES: '10.0.0.0/8, 127.0.0.1,fd00::/8,loopback' }).trustedProxies,
    ['10.0.0.0/8', '127.0.0.1', 'fd00::/8', 'loopback'],
  );
  assert.throws(
    () => loadConfig({ TERDUT_TRUSTED_PROXIES: 'gateway.example.com' }),
    /TERDUT_TRUSTED_PROXIES entry "gateway.example.com" is not an address or CIDR/,
  );
  assert.throws(() => loadConfig({ TERDUT_TRUSTED_PROXIES: '10.0.0.0/33' }), /not an address or CIDR/);
});
