/**
 * Where the keyboard focus is while a button's request runs and after it, in a
 * real browser (Chromium) against a real terdut-server on PGlite. A button
 * that cannot act while its request runs must keep the focus: a keyboard or
 * screen reader user who pressed Save and found the focus on the page's body
 * started again from the top. The requests are held in the browser until the
 * test lets them go, so "while it runs" is a state the test can look at.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Locator, Page, Route } from 'playwright-core';
import { firingAlert, notification } from '../support/alertmanager-payloads.ts';
import { ADMIN_PASSWORD, DESKTOP, launchChromium, signIn, startWebStack, type WebStack } from './support.ts';

/** Whether `element` holds the keyboard focus. */
const hasFocus = (element: Locator) =>
  element.evaluate(
    (node) =>
      node === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement,
  );

/** What holds the focus, as a person would name it, for a failure message. */
const focusedName = (page: Page) =>
  page.evaluate(() => {
    const active = (
      globalThis as unknown as {
        document: { activeElement: { tagName: string; textContent: string | null } | null };
      }
    ).document.activeElement;
    if (active === null) return 'nothing';
    const tag = active.tagName.toLowerCase();
    return tag === 'body' ? 'the page body' : `<${tag}> ${active.textContent?.trim() ?? ''}`;
  });

/**
 * Holds every `method` request to `url` until `release()`; `count()` says how
 * many the page sent.
 */
async function holdRequests(page: Page, url: string | RegExp, method: string) {
  const held: Route[] = [];
  let arrived: () => void = () => {};
  const first = new Promise<void>((resolve) => (arrived = resolve));
  await page.route(url, (route) => {
    if (route.request().method() !== method) return route.fallback();
    held.push(route);
    arrived();
  });
  return {
    first,
    count: () => held.length,
    async release() {
      for (const route of held.splice(0)) await route.continue();
      await page.unroute(url);
    },
  };
}

describe('the keyboard focus while a request runs [pglite]', () => {
  let browser: Browser;
  let stack: WebStack;
  const contexts: BrowserContext[] = [];

  before(async () => {
    browser = await launchChromium();
    stack = await startWebStack('pglite');
  });
  after(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await stack?.close();
    await browser?.close();
  });

  async function adminPage(): Promise<Page> {
    const context = await browser.newContext({ viewport: DESKTOP });
    contexts.push(context);
    const page = await context.newPage();
    await signIn(page, stack.url, 'admin', ADMIN_PASSWORD);
    return page;
  }

  async function fireAlert(title: string): Promise<number> {
    const payload = notification({
      alerts: [
        firingAlert({ name: title, severity: 'critical', labels: { instance: `${title}.example:9100` } }),
      ],
    });
    assert.equal((await stack.api('POST', '/api/webhook/alertmanager', payload)).status, 200);
    const incidents = (await stack.api('GET', '/api/incidents')).body as { id: number; title: string }[];
    const found = incidents.find((one) => one.title.includes(title));
    assert.ok(found, `no incident for ${title}`);
    return found.id;
  }

  test('Save pressed with the keyboard keeps the focus while it saves and after, and a second press sends nothing', async () => {
    const page = await adminPage();
    await page.goto(`${stack.url}/me`);
    const field = page.getByRole('textbox', { name: /^ntfy topic \(push/ });
    await field.fill('terdut-keyboard-focus');
    await page.keyboard.press('Tab');
    const save = page.getByRole('button', { name: 'Save topic' });
    assert.ok(await hasFocus(save), `Tab from the field lands on Save, not ${await focusedName(page)}`);

    const saving = await holdRequests(page, /\/api\/users\/\d+\/notify$/, 'PUT');
    await page.keyboard.press('Enter');
    await saving.first;
    // While the server answers: still on Save, which says it is busy and cannot be pressed.
    await page.getByRole('button', { name: 'Save topic', disabled: true }).waitFor();
    assert.ok(await hasFocus(save), `while saving, the focus is on ${await focusedName(page)}`);
    assert.equal(await save.getAttribute('aria-busy'), 'true');
    assert.equal(await save.getAttribute('aria-disabled'), 'true');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Space');
    await field.press('Enter'); // Enter in the field submits the form through Save
    await save.focus();
    await page.waitForTimeout(300);
    assert.equal(saving.count(), 1, 'pressed again while saving, nothing more is sent');

    await saving.release();
    await page.getByRole('status').filter({ hasText: 'Notification topic saved.' }).waitFor();
    assert.ok(await hasFocus(save), `once saved, the focus is on ${await focusedName(page)}`);
    assert.equal(await save.getAttribute('aria-busy'), null);
    assert.equal(await save.getAttribute('aria-disabled'), null);
    const me = (await stack.api('GET', '/api/me')).body as { user: { ntfy_topic?: string } };
    assert.equal(me.user.ntfy_topic, 'terdut-keyboard-focus');
  });

  test('in the queue, Assign keeps the focus, and Acknowledge hands it to its row once it makes way', async () => {
    const id = await fireAlert('KeyboardFocusInQueue');
    const page = await adminPage();
    const row = page.locator(`[data-incident="${id}"]`);
    const title = row.getByRole('link');
    await title.focus();
    await page.keyboard.press('Tab');
    const acknowledge = row.getByRole('button', { name: 'Acknowledge', exact: true });
    assert.ok(await hasFocus(acknowledge), `Tab from the title lands on ${await focusedName(page)}`);

    const acknowledging = await holdRequests(page, `**/api/incidents/${id}/acknowledge`, 'POST');
    await page.keyboard.press('Enter');
    await acknowledging.first;
    await row.getByRole('button', { name: 'Acknowledge', exact: true, disabled: true }).waitFor();
    assert.ok(await hasFocus(acknowledge), `while acknowledging, the focus is on ${await focusedName(page)}`);
    await acknowledging.release();
    await row.getByText('acknowledged', { exact: true }).waitFor();
    await acknowledge.waitFor({ state: 'detached' });
    // The button is gone: the focus is on the row's title, where the queue's keys act on this incident.
    await page.waitForFunction(
      (incident) => {
        const { document } = globalThis as unknown as {
          document: { activeElement: { closest(selector: string): unknown; tagName: string } | null };
        };
        return (
          document.activeElement?.tagName === 'A' &&
          document.activeElement.closest(`[data-incident="${incident}"]`) !== null
        );
      },
      id,
      { timeout: 3000 },
    );

    await page.keyboard.press('Tab'); // the person picker
    await page.keyboard.press('Tab');
    const assign = row.getByRole('button', { name: 'Assign', exact: true });
    assert.ok(await hasFocus(assign), `two Tabs on from the title land on ${await focusedName(page)}`);
    const assigning = await holdRequests(page, `**/api/incidents/${id}/assign`, 'POST');
    await page.keyboard.press('Enter');
    await assigning.first;
    await row.getByRole('button', { name: 'Assign', exact: true, disabled: true }).waitFor();
    assert.ok(await hasFocus(assign), `while assigning, the focus is on ${await focusedName(page)}`);
    await assigning.release();
    await row.getByText('assigned to admin').waitFor();
    assert.ok(await hasFocus(assign), `once assigned, the focus is on ${await focusedName(page)}`);
    assert.equal((await stack.api('GET', `/api/incidents/${id}`)).body.assigned_to, 'admin');
  });

  test("the queue's a, pressed twice while the server answers, acknowledges once", async () => {
    const id = await fireAlert('KeyPressedTwice');
    const page = await adminPage();
    const row = page.locator(`[data-incident="${id}"]`);
    await row.getByRole('link').focus();
    const acknowledging = await holdRequests(page, `**/api/incidents/${id}/acknowledge`, 'POST');
    await page.keyboard.press('a');
    await acknowledging.first;
    await page.keyboard.press('a');
    await page.waitForTimeout(300);
    assert.equal(acknowledging.count(), 1);
    await acknowledging.release();
    await row.getByText('acknowledged', { exact: true }).waitFor();
    assert.equal(await row.getByRole('alert').count(), 0, 'no refusal of a second acknowledgement');
  });
});
