/**
 * Smoke test of the OIDC test peer: it is a real OpenID Provider. A person
 * signs in through its login and consent pages, the code is redeemed at its
 * token endpoint, and the ID token's signature verifies against the keys its
 * JWKS endpoint publishes (checked with node:crypto, not with the client
 * library terdut uses, so the two cannot agree on a mistake).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createPublicKey, randomBytes, verify, type JsonWebKey } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startOidcProvider, type RunningOidcProvider } from './oidc.ts';
import { TestBrowser } from '../support/browser.ts';

let provider: RunningOidcProvider;
let relyingParty: Server;
let redirectUri: string;

before(async () => {
  // The "application": its callback just shows what the provider sent back.
  relyingParty = createServer((request, response) => {
    const query = Object.fromEntries(new URL(request.url ?? '/', 'http://x').searchParams);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(query));
  });
  await new Promise<void>((resolve) => relyingParty.listen(0, '127.0.0.1', resolve));
  redirectUri = `http://localhost:${(relyingParty.address() as AddressInfo).port}/callback`;
  provider = await startOidcProvider({
    redirectUris: [redirectUri],
    people: [
      {
        subject: 'sub-ann',
        username: 'ann',
        password: 'ann-password-123',
        email: 'ann@example.com',
        groups: ['oncall', 'sre'],
      },
    ],
  });
});
after(async () => {
  await provider.stop();
  await new Promise<void>((resolve) => relyingParty.close(() => resolve()));
});

function authorizationUrl(verifier: string, nonce: string): string {
  const discoveryless = new URL(`${provider.issuer}/auth`);
  discoveryless.search = new URLSearchParams({
    client_id: provider.clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid profile email groups',
    state: 'state-1',
    nonce,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  return discoveryless.toString();
}

test('the provider issues an ID token with the groups claim that verifies against its JWKS', async () => {
  const discovery = (await (await fetch(`${provider.issuer}/.well-known/openid-configuration`)).json()) as {
    issuer: string;
    token_endpoint: string;
    jwks_uri: string;
  };
  assert.equal(discovery.issuer, provider.issuer);

  const browser = new TestBrowser();
  const verifier = randomBytes(32).toString('base64url');
  const nonce = randomBytes(16).toString('base64url');
  const loginPage = await browser.get(authorizationUrl(verifier, nonce));
  assert.equal(loginPage.status, 200);
  const consentPage = await browser.submitFirstForm(loginPage, {
    username: 'ann',
    password: 'ann-password-123',
  });
  assert.match(consentPage.text, /Allow/);
  const callback = await browser.submitFirstForm(consentPage, {});
  assert.ok(callback.url.startsWith(redirectUri), `ended at ${callback.url}`);
  assert.equal(callback.json.state, 'state-1');

  const tokenResponse = await fetch(discovery.token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: callback.json.code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: provider.clientId,
      client_secret: provider.clientSecret,
    }),
  });
  assert.equal(tokenResponse.status, 200);
  const { id_token: idToken } = (await tokenResponse.json()) as { id_token: string };

  const [header, payload, signature] = idToken.split('.') as [string, string, string];
  const { kid, alg } = JSON.parse(Buffer.from(header, 'base64url').toString()) as {
    kid: string;
    alg: string;
  };
  assert.equal(alg, 'RS256');
  const jwks = (await (await fetch(discovery.jwks_uri)).json()) as { keys: (JsonWebKey & { kid: string })[] };
  const jwk = jwks.keys.find((key) => key.kid === kid);
  assert.ok(jwk, 'the signing key is published');
  const valid = verify(
    'sha256',
    Buffer.from(`${header}.${payload}`),
    createPublicKey({ key: jwk, format: 'jwk' }),
    Buffer.from(signature, 'base64url'),
  );
  assert.equal(valid, true);

  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
  assert.equal(claims.iss, provider.issuer);
  assert.equal(claims.aud, provider.clientId);
  assert.equal(claims.sub, 'sub-ann');
  assert.equal(claims.nonce, nonce);
  assert.deepEqual(claims.groups, ['oncall', 'sre']);

  // A tampered token does not verify.
  const forged = Buffer.from(JSON.stringify({ ...claims, groups: ['admins'] })).toString('base64url');
  assert.equal(
    verify(
      'sha256',
      Buffer.from(`${header}.${forged}`),
      createPublicKey({ key: jwk, format: 'jwk' }),
      Buffer.from(signature, 'base64url'),
    ),
    false,
  );
});

test('a wrong password at the provider is refused and issues nothing', async () => {
  const browser = new TestBrowser();
  const loginPage = await browser.get(authorizationUrl(randomBytes(32).toString('base64url'), 'n'));
  const refused = await browser.submitFirstForm(loginPage, { username: 'ann', password: 'not-her-password' });
  assert.equal(refused.status, 401);
  assert.ok(!refused.url.startsWith(redirectUri));
});
