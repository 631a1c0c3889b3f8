/**
 * OIDC sign-in against a real OpenID Provider, over HTTP, as a browser walks
 * it: terdut /auth/oidc/login → provider login form → consent → terdut
 * callback → `/`. The instance is bootstrapped (an admin exists) here; the
 * not-yet-bootstrapped case is test/seed-incident.test.ts.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { forEachDatabase } from './support/databases.ts';
import { testConfig, startTestApp } from './support/app.ts';
import { insertUser } from '../packages/server/src/repositories/users.ts';
import { TestBrowser } from './support/browser.ts';
import { endedAtCallback, freePort, startSignInStack, type SignInStack } from './support/sign-in-stack.ts';
import type { TestPerson } from './peers/oidc.ts';
import { createTestPglite } from './support/databases.ts';

const carol: TestPerson = {
  subject: 'sub-carol',
  username: 'carol',
  password: 'carol-password-1',
  email: 'carol@example.com',
  groups: ['oncall'],
};
const dave: TestPerson = {
  subject: 'sub-dave',
  username: 'dave',
  password: 'dave-password-12',
  email: 'dave@example.com',
  groups: ['oncall', 'sre-leads'],
};
const eve: TestPerson = {
  subject: 'sub-eve',
  username: 'eve',
  password: 'eve-password-123',
  email: 'eve@example.com',
  groups: ['marketing'],
};
// Same preferred_username as an existing local user.
const otherAdmin: TestPerson = {
  subject: 'sub-admin-2',
  username: 'admin',
  password: 'admin-password-1',
  email: 'admin2@example.com',
  groups: ['oncall'],
};

forEachDatabase('OIDC sign-in with a real provider', (database) => {
  let stack: SignInStack;

  before(async () => {
    await insertUser(database(), { username: 'admin', email: 'admin@example.com', role: 'admin' });
    stack = await startSignInStack({
      db: database(),
      people: [carol, dave, eve, otherAdmin],
      env: { TERDUT_OIDC_ALLOWED_GROUPS: 'oncall', TERDUT_OIDC_ADMIN_GROUPS: 'sre-leads' },
    });
  });
  after(() => stack.close());

  const countUsers = async () =>
    (await database().query<{ n: number }>(`SELECT count(*)::int AS n FROM users`)).rows[0]!.n;
  const me = (browser: TestBrowser) => browser.fetchJson(`${stack.url}/api/me`, { method: 'GET' });

  test('a person in an allowed group is created as a member on first sign-in and lands on / signed in', async () => {
    const browser = new TestBrowser();
    const before = await countUsers();
    const end = await stack.signIn(browser, carol);
    assert.equal(end.url, `${stack.url}/`, `ended at ${end.url}: ${end.text}`);
    assert.ok(browser.cookie(stack.url, 'terdut_session'));
    const who = await me(browser);
    assert.equal(who.status, 200);
    assert.equal(who.json.user.username, 'carol');
    assert.equal(who.json.user.email, 'carol@example.com');
    assert.equal(who.json.user.role, 'member');
    assert.equal(who.json.has_password, false);
    assert.equal(await countUsers(), before + 1);
    const audit = await database().query<{ action: string }>(
      `SELECT action FROM audit_log WHERE target = $1 ORDER BY id`,
      [`user:${who.json.user.id}`],
    );
    assert.deepEqual(
      audit.rows.map((row) => row.action),
      ['user.created', 'sign_in'],
    );
  });

  test('a sign-in started from a page of the app comes back to it; a path to another site comes back to /', async () => {
    const deepLink = await stack.signIn(
      new TestBrowser(),
      carol,
      '?return_to=%2Fincidents%2F42%3Ffrom%3Dntfy',
    );
    assert.equal(deepLink.url, `${stack.url}/incidents/42?from=ntfy`, deepLink.text);
    for (const elsewhere of ['//evil.example/', '/\\evil.example/', 'https://evil.example/']) {
      const end = await stack.signIn(new TestBrowser(), carol, `?return_to=${encodeURIComponent(elsewhere)}`);
      assert.equal(end.url, `${stack.url}/`, `return_to=${elsewhere} ended at ${end.url}`);
    }
  });

  test('a second sign-in of the same identity finds the same user', async () => {
    const first = await me(await signedIn(carol));
    const users = await countUsers();
    const second = await me(await signedIn(carol));
    assert.equal(second.json.user.id, first.json.user.id);
    assert.equal(await countUsers(), users);
  });

  test('an email change at the provider updates the email and creates no second user', async () => {
    const before = await me(await signedIn(carol));
    const users = await countUsers();
    stack.idp.setPerson({ ...carol, email: 'carol.new@example.com' });
    try {
      const after = await me(await signedIn(carol));
      assert.equal(after.json.user.id, before.json.user.id);
      assert.equal(after.json.user.email, 'carol.new@example.com');
      assert.equal(await countUsers(), users);
    } finally {
      stack.idp.setPerson(carol);
    }
  });

  test('a person outside the allowed groups is refused with 403 and not created', async () => {
    const browser = new TestBrowser();
    const users = await countUsers();
    const end = await stack.signIn(browser, eve);
    assert.ok(endedAtCallback(end, stack), `ended at ${end.url}`);
    assert.equal(end.status, 403);
    assert.match(end.json.error, /not in a group allowed to use terdut/);
    assert.equal(await countUsers(), users);
    assert.equal(browser.cookie(stack.url, 'terdut_session'), undefined);
    const found = await database().query(`SELECT 1 FROM users WHERE username = 'eve'`);
    assert.equal(found.rows.length, 0);
  });

  test('admin groups make an admin, and leaving them makes a member at the next sign-in (audited)', async () => {
    const first = await me(await signedIn(dave));
    assert.equal(first.json.user.role, 'admin');
    stack.idp.setPerson({ ...dave, groups: ['oncall'] });
    try {
      const second = await me(await signedIn(dave));
      assert.equal(second.json.user.id, first.json.user.id);
      assert.equal(second.json.user.role, 'member');
      const changes = await database().query<{ detail: { from: string; to: string } }>(
        `SELECT detail FROM audit_log WHERE action = 'user.role_changed' AND target = $1`,
        [`user:${first.json.user.id}`],
      );
      assert.deepEqual(
        changes.rows.map((row) => [row.detail.from, row.detail.to]),
        [['admin', 'member']],
      );
    } finally {
      stack.idp.setPerson(dave);
    }
  });

  test('leaving the admin groups does not demote the last admin; the refusal is audited', async () => {
    const first = await me(await signedIn(dave));
    assert.equal(first.json.user.role, 'admin');
    // dave becomes the only admin: the local one is deleted.
    await database().query(`UPDATE users SET deleted_at = now() WHERE username = 'admin'`);
    stack.idp.setPerson({ ...dave, groups: ['oncall'] });
    try {
      const second = await me(await signedIn(dave));
      assert.equal(second.json.user.role, 'admin', 'still an admin: the last one');
      const kept = await database().query<{ detail: { reason: string } }>(
        `SELECT detail FROM audit_log WHERE action = 'user.role_kept' AND target = $1`,
        [`user:${first.json.user.id}`],
      );
      assert.match(kept.rows[0]?.detail.reason ?? '', /the last admin is not demoted/);
    } finally {
      stack.idp.setPerson(dave);
      await database().query(`UPDATE users SET deleted_at = NULL WHERE username = 'admin'`);
    }
  });

  test('a username already taken by someone else gets a suffix, never the other account', async () => {
    const who = await me(await signedIn(otherAdmin));
    assert.equal(who.json.user.username, 'admin-2');
    assert.equal(who.json.user.role, 'member');
  });

  test('a person whose terdut user was deleted is refused, not silently re-created', async () => {
    const frank: TestPerson = {
      ...carol,
      subject: 'sub-frank',
      username: 'frank',
      email: 'frank@example.com',
    };
    stack.idp.setPerson(frank);
    const who = await me(await signedIn(frank));
    await database().query(`UPDATE users SET deleted_at = now() WHERE id = $1`, [who.json.user.id]);
    const users = await countUsers();
    const end = await stack.signIn(new TestBrowser(), frank);
    assert.equal(end.status, 403);
    assert.match(end.json.error, /has been deleted; ask an administrator/);
    assert.equal(await countUsers(), users);
  });

  test('declining at the provider ends at terdut with 403 saying so, and no user is created', async () => {
    const grace: TestPerson = {
      ...carol,
      subject: 'sub-grace',
      username: 'grace',
      email: 'grace@example.com',
    };
    stack.idp.setPerson(grace);
    const browser = new TestBrowser();
    const login = await browser.get(`${stack.url}/auth/oidc/login`);
    const consent = await browser.submitFirstForm(login, {
      username: grace.username,
      password: grace.password,
    });
    const deny = /action="([^"]*\/deny)"/.exec(consent.text)![1]!;
    const end = await browser.submitForm(new URL(deny, consent.url).toString(), {});
    assert.ok(endedAtCallback(end, stack), `ended at ${end.url}`);
    assert.equal(end.status, 403);
    assert.match(
      end.json.error,
      /identity provider did not sign you in: access_denied \(the person declined\)/,
    );
    assert.equal((await database().query(`SELECT 1 FROM users WHERE username = 'grace'`)).rows.length, 0);
  });

  test('a callback without a sign-in started in this browser is refused with 400', async () => {
    const response = await fetch(`${stack.url}/auth/oidc/callback?code=abc&state=def`);
    assert.equal(response.status, 400);
    assert.match(((await response.json()) as { error: string }).error, /no sign-in is in progress/);
  });

  test('the OIDC session is protected by CSRF like a password session, and signs out', async () => {
    const browser = await signedIn(carol);
    const id = (await me(browser)).json.user.id as number;
    const withoutToken = await browser.fetchJson(`${stack.url}/api/users/${id}/api-keys`, {
      method: 'POST',
      body: { name: 'from the browser' },
    });
    assert.equal(withoutToken.status, 403);
    const csrf = browser.cookie(stack.url, 'terdut_csrf')!;
    const withToken = await browser.fetchJson(`${stack.url}/api/users/${id}/api-keys`, {
      method: 'POST',
      body: { name: 'from the browser' },
      headers: { 'x-csrf-token': csrf, origin: stack.url },
    });
    assert.equal(withToken.status, 201);
    const out = await browser.fetchJson(`${stack.url}/auth/logout`, {
      method: 'POST',
      headers: { 'x-csrf-token': csrf },
    });
    assert.equal(out.status, 204);
    assert.equal((await me(browser)).status, 401);
  });

  async function signedIn(person: TestPerson): Promise<TestBrowser> {
    const browser = new TestBrowser();
    const end = await stack.signIn(browser, person);
    assert.equal(end.url, `${stack.url}/`, `sign-in of ${person.username} ended at ${end.url}: ${end.text}`);
    return browser;
  }
});

test('groups and email are read from userinfo when the provider keeps them out of the ID token', async () => {
  const db = await createTestPglite();
  await insertUser(db, { username: 'admin', email: 'admin@example.com', role: 'admin' });
  const stack = await startSignInStack({
    db,
    people: [dave, eve],
    claimsInIdToken: false,
    env: { TERDUT_OIDC_ALLOWED_GROUPS: 'oncall', TERDUT_OIDC_ADMIN_GROUPS: 'sre-leads' },
  });
  try {
    const browser = new TestBrowser();
    const end = await stack.signIn(browser, dave);
    assert.equal(end.url, `${stack.url}/`, `ended at ${end.url}: ${end.text}`);
    const who = await browser.fetchJson(`${stack.url}/api/me`, { method: 'GET' });
    assert.equal(who.json.user.email, 'dave@example.com');
    assert.equal(who.json.user.role, 'admin');
    const refused = await stack.signIn(new TestBrowser(), eve);
    assert.equal(refused.status, 403);
  } finally {
    await stack.close();
    await db.close();
  }
});

test('a wrong client secret ends in 502 that names the settings to check', async () => {
  const db = await createTestPglite();
  await insertUser(db, { username: 'admin', email: 'admin@example.com', role: 'admin' });
  const stack = await startSignInStack({
    db,
    people: [carol],
    env: { TERDUT_OIDC_CLIENT_SECRET: 'not-the-secret-the-provider-has' },
  });
  try {
    const end = await stack.signIn(new TestBrowser(), carol);
    assert.ok(endedAtCallback(end, stack), `ended at ${end.url}`);
    assert.equal(end.status, 502);
    assert.match(end.json.error, /invalid_client; check TERDUT_OIDC_CLIENT_ID and TERDUT_OIDC_CLIENT_SECRET/);
    assert.doesNotMatch(end.json.error, /not-the-secret/, 'the secret itself is never shown');
  } finally {
    await stack.close();
    await db.close();
  }
});

test('with the provider down, OIDC sign-in answers 502 naming the problem and the rest of the server works', async () => {
  const db = await createTestPglite();
  const deadPort = await freePort();
  const config = testConfig({
    TERDUT_PUBLIC_URL: 'http://localhost:1',
    TERDUT_OIDC_ISSUER_URL: `http://127.0.0.1:${deadPort}`,
    TERDUT_OIDC_CLIENT_ID: 'terdut',
  });
  const server = await startTestApp(db, { config });
  try {
    const admin = await server.createUser('admin', 'admin');
    const login = await server.request({ method: 'GET', url: '/auth/oidc/login' });
    assert.equal(login.status, 502);
    assert.match(login.body.error, new RegExp(`OIDC discovery at http://127.0.0.1:${deadPort} failed`));
    assert.match(login.body.error, /TERDUT_OIDC_ISSUER_URL/);
    assert.equal((await server.request({ method: 'GET', url: '/healthz' })).status, 200);
    assert.equal((await server.request({ method: 'GET', url: '/readyz' })).status, 200);
    assert.equal((await server.request({ method: 'GET', url: '/api/me', as: admin })).status, 200);
  } finally {
    await server.close();
    await db.close();
  }
});

test('without OIDC configured, /auth/oidc/login says so with 404', async () => {
  const db = await createTestPglite();
  const server = await startTestApp(db);
  try {
    const login = await server.request({ method: 'GET', url: '/auth/oidc/login' });
    assert.equal(login.status, 404);
    assert.match(login.body.error, /OIDC sign-in is not configured.*TERDUT_OIDC_ISSUER_URL/);
  } finally {
    await server.close();
    await db.close();
  }
});
