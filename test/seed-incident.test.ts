/**
 * The seed incident, replayed (bootstrap-protocol.md, "The first-user race").
 *
 * The old server's OIDC callback created a user on first sign-in without
 * asking whether the instance had been bootstrapped. Someone signed in before
 * the operator's first reconcile, took the single bootstrap slot, and every
 * bootstrap afterwards got 403: the operator was locked out for good.
 *
 * Here a person in an allowed group completes a real OIDC sign-in (real
 * provider, real redirects, login form and consent) before bootstrap: they are
 * refused and no row is written. The operator's bootstrap then succeeds, and
 * after it the same person signs in normally.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { forEachDatabase } from './support/databases.ts';
import { TestBrowser } from './support/browser.ts';
import { endedAtCallback, startSignInStack, type SignInStack } from './support/sign-in-stack.ts';
import { testConfig } from './support/app.ts';
import type { TestPerson } from './peers/oidc.ts';

const early: TestPerson = {
  subject: 'sub-early-bird',
  username: 'early.bird',
  password: 'early-bird-pass-1',
  email: 'early.bird@example.com',
  groups: ['oncall'],
};
const lead: TestPerson = {
  subject: 'sub-lead',
  username: 'lead',
  password: 'lead-password-123',
  email: 'lead@example.com',
  groups: ['oncall', 'sre-leads'],
};

forEachDatabase('the seed incident: OIDC sign-in before bootstrap', (database) => {
  let stack: SignInStack;
  const token = testConfig().bootstrapToken!;

  before(async () => {
    stack = await startSignInStack({
      db: database(),
      people: [early, lead],
      env: { TERDUT_OIDC_ALLOWED_GROUPS: 'oncall', TERDUT_OIDC_ADMIN_GROUPS: 'sre-leads' },
    });
  });
  after(() => stack.close());

  const rows = async (table: string) =>
    (await database().query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;
  const bootstrap = (username: string) =>
    fetch(`${stack.url}/api/bootstrap`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ username, email: `${username}@example.com` }),
    });

  test('a sign-in before bootstrap is refused, writes nothing, and the operator can still bootstrap', async () => {
    // 1. Someone in an allowed group signs in before the operator has bootstrapped.
    const browser = new TestBrowser();
    const refused = await stack.signIn(browser, early);
    assert.ok(endedAtCallback(refused, stack), `ended at ${refused.url}`);
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.json, { error: 'this server has not been set up yet' });
    assert.equal(browser.cookie(stack.url, 'terdut_session'), undefined);
    for (const table of ['users', 'user_identities', 'sessions', 'api_keys', 'bootstrap_state']) {
      assert.equal(await rows(table), 0, `${table} is untouched`);
    }
    const state = await (await fetch(`${stack.url}/api/bootstrap`)).json();
    assert.deepEqual(state, { bootstrapped: false });

    // 2. The operator's bootstrap takes the slot, as it must.
    const first = await bootstrap('terdut-operator');
    assert.equal(first.status, 201, await first.clone().text());
    const created = (await first.json()) as { user: { username: string }; api_key: { key: string } };
    assert.equal(created.user.username, 'terdut-operator');
    assert.match(created.api_key.key, /^[0-9a-f]{64}$/);
    assert.equal((await bootstrap('someone-else')).status, 403, 'bootstrap happens once');

    // 3. The same person signs in again: now created, as a member.
    const again = await stack.signIn(new TestBrowser(), early);
    assert.equal(again.url, `${stack.url}/`, `ended at ${again.url}: ${again.text}`);
    const member = await database().query<{ role: string; email: string }>(
      `SELECT role, email FROM users WHERE username = 'early.bird' AND deleted_at IS NULL`,
    );
    assert.deepEqual(member.rows, [{ role: 'member', email: 'early.bird@example.com' }]);

    // 4. Someone in an admin group becomes an admin.
    const adminBrowser = new TestBrowser();
    await stack.signIn(adminBrowser, lead);
    const me = await adminBrowser.fetchJson(`${stack.url}/api/me`, { method: 'GET' });
    assert.equal(me.json.user.username, 'lead');
    assert.equal(me.json.user.role, 'admin');

    // The bootstrap admin is still the one the operator created.
    const record = await database().query<{ username: string }>(
      `SELECT u.username FROM bootstrap_state b JOIN users u ON u.id = b.user_id`,
    );
    assert.deepEqual(record.rows, [{ username: 'terdut-operator' }]);
  });
});
