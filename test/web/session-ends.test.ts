/**
 * A session that ends while a page that refetches nothing by itself is open
 * (Me, People, Statistics): the app finds out from the live stream's
 * refusal, in a real Chromium against a real terdut-server on PGlite.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { DESKTOP, launchChromium, MEMBER_PASSWORD, signIn, startWebStack, type WebStack } from './support.ts';

describe('a session that ends on a quiet page [pglite]', () => {
  let browser: Browser;
  let stack: WebStack;

  before(async () => {
    browser = await launchChromium();
    stack = await startWebStack('pglite');
  });
  after(async () => {
    await stack?.close();
    await browser?.close();
  });

  test('mia on her Me page is shown the sign-in form, saying why, once the stream is refused', async () => {
    const context = await browser.newContext({ viewport: DESKTOP });
    try {
      const page = await context.newPage();
      // The server ends a stream after 5 minutes and the browser opens a new one, which a
      // signed-out session is refused. Here every stream is refused at once, as that one would be.
      await page.route('**/api/events', (route) =>
        route.fulfill({
          status: 401,
          contentType: 'application/json',
          body: JSON.stringify({ error: 'authentication required' }),
        }),
      );
      await signIn(page, stack.url, 'mia', MEMBER_PASSWORD);
      await page.goto(`${stack.url}/me`);
      await page.getByRole('heading', { name: 'Me: mia' }).waitFor();
      // Nothing ended yet: a refused stream alone does not sign anyone out.
      await page.waitForTimeout(1500);
      assert.equal(await page.getByRole('button', { name: 'Sign in', exact: true }).count(), 0);

      // An admin resets mia's password: every session of hers ends.
      const reset = await stack.api('PUT', `/api/users/${stack.member.id}/password`, {
        password: MEMBER_PASSWORD,
      });
      assert.equal(reset.status, 204);
      await page.getByRole('status').filter({ hasText: 'Your session ended' }).waitFor({ timeout: 15_000 });
      await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
    } finally {
      await context.close();
    }
  });
});
