/**
 * "Sign in with SSO" in a real browser: the web app's button → the real
 * OpenID Provider's own login and consent pages (test/peers/oidc.ts) → back
 * to the page of terdut it started from, where the app opens signed in. On
 * PGlite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { forEachDatabase } from '../support/databases.ts';
import { startSignInStack, type SignInStack } from '../support/sign-in-stack.ts';
import { insertUser } from '../../packages/server/src/repositories/users.ts';
import { buildWebApp } from '../../packages/web/build.ts';
import type { TestPerson } from '../peers/oidc.ts';
import { assertAccessible, DESKTOP, launchChromium } from './support.ts';

const olga: TestPerson = {
  subject: 'sub-olga',
  username: 'olga',
  password: 'olga-password-123',
  email: 'olga@example.com',
  groups: ['oncall'],
};

let browser: Browser;
before(async () => {
  await buildWebApp({ ifStale: true });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
});

forEachDatabase('SSO sign-in in a browser', (database) => {
  let stack: SignInStack;
  before(async () => {
    await insertUser(database(), { username: 'admin', email: 'admin@example.com', role: 'admin' });
    stack = await startSignInStack({
      db: database(),
      people: [olga],
      env: { TERDUT_OIDC_ALLOWED_GROUPS: 'oncall' },
    });
  });
  after(() => stack.close());

  test('Sign in with SSO from a link to a page walks the provider’s pages and opens that page signed in', async () => {
    const context = await browser.newContext({ viewport: DESKTOP });
    try {
      const page = await context.newPage();
      await page.goto(stack.url + '/me');
      const sso = page.getByRole('button', { name: 'Sign in with SSO' });
      await sso.waitFor();
      await assertAccessible(page, 'the sign-in page with SSO');
      await sso.click();
      // The provider's login form (its page, its origin).
      await page.waitForURL((url) => url.toString().startsWith(stack.idp.issuer));
      await page.locator('input[name="username"]').fill(olga.username);
      await page.locator('input[name="password"]').fill(olga.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.waitForURL(`${stack.url}/me`);
      await page.getByRole('heading', { name: 'Me: olga' }).waitFor();
      // No password yet (an SSO person): the page offers to set one, without asking for a current one.
      assert.equal(await page.getByLabel('Current password').count(), 0);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Sign in with SSO' }).waitFor();
      const me = await page.evaluate(async () => (await fetch('/api/me')).status);
      assert.equal(me, 401, 'signing out ended the session on the server');
    } finally {
      await context.close();
    }
  });
});
