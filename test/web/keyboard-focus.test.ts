/**
 * Where the keyboard focus is while a button's request runs and after it, in a
 * real browser (Chromium) against a real terdut-server on PGlite. A button
 * that cannot act while its request runs must keep the focus: a keyboard or
 * screen reader user who pressed Save and found the focus on the page's body
 * started again from the top. The requests are held in the browser until the
 * test lets them go, so "while it runs" is a state the test can look at.
 *
 * A button that removes what it sits in (an override's Delete, a place's
 * Remove, a key's Revoke) cannot keep the focus: it is gone. The focus goes to
 * the same button of the next item, else of the one before, else to the
 * list's heading or the control that adds one, never to the page's body.
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

/** Waits until `element` holds the focus; fails naming what holds it instead. */
async function focusLandsOn(page: Page, element: Locator, when: string) {
  const deadline = Date.now() + 3000;
  while (!(await hasFocus(element).catch(() => false))) {
    if (Date.now() > deadline)
      assert.fail(`${when}, the focus is on ${await focusedName(page)}, not ${element.toString()}`);
    await page.waitForTimeout(50);
  }
}

/**
 * Holds every `method` request to `url` until `release()`; `count()` says how
 * many the page sent.
 */
async function holdRequests(page: Page, url: string | RegExp, method: string) {
  const held: Route[] = [];
  let arrived: () => void = () => {};
  // Bounded: a press that sends nothing fails the test in seconds instead of stalling it.
  const first = new Promise<void>((resolve, reject) => {
    arrived = resolve;
    setTimeout(() => reject(new Error(`no ${method} ${String(url)} was sent within 15 s`)), 15_000).unref();
  });
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

  test("an override's Delete hands the focus to the next override's Delete, else the one before, else the heading", async () => {
    const schedule = await stack.api('POST', '/api/schedules', {
      name: 'Covers',
      time_zone: 'Europe/Berlin',
    });
    assert.equal(schedule.status, 201, JSON.stringify(schedule.body));
    const id = schedule.body.id as number;
    const day = 24 * 3_600_000;
    for (const [user, inDays] of [
      [stack.admin.id, 3],
      [stack.member.id, 5],
      [stack.admin.id, 7],
    ] as const) {
      const made = await stack.api('POST', `/api/schedules/${id}/overrides`, {
        user_id: user,
        starts_at: new Date(Date.now() + inDays * day).toISOString(),
        ends_at: new Date(Date.now() + (inDays + 1) * day).toISOString(),
      });
      assert.equal(made.status, 201, JSON.stringify(made.body));
    }
    const page = await adminPage();
    await page.goto(`${stack.url}/schedules/${id}`);
    const deletes = page.locator('ul.overrides').getByRole('button', { name: /^Delete the override of/ });
    await deletes.nth(2).waitFor();
    const [first, second, third] = (await deletes.evaluateAll((buttons) =>
      buttons.map((button) => button.getAttribute('aria-label') ?? ''),
    )) as [string, string, string];
    const named = (label: string) => page.getByRole('button', { name: label, exact: true });

    await named(second).focus();
    await page.keyboard.press('Enter');
    await named(second).waitFor({ state: 'detached' });
    await focusLandsOn(page, named(third), 'the middle override deleted');
    // And a screen reader is told what went, the focus now being on another override.
    const said = page.getByTestId('removed');
    assert.equal(await said.getAttribute('role'), 'status');
    await said.filter({ hasText: /^The override of mia is deleted\.$/ }).waitFor({ state: 'attached' });
    await page.keyboard.press('Enter');
    await named(third).waitFor({ state: 'detached' });
    await focusLandsOn(page, named(first), 'the last override deleted');
    await page.keyboard.press('Enter');
    await page.getByText('No overrides in the coming year.').waitFor();
    await focusLandsOn(
      page,
      page.getByRole('heading', { name: 'Overrides', exact: true }),
      'no override left',
    );
    assert.deepEqual((await stack.api('GET', `/api/schedules/${id}/overrides`)).body, []);
  });

  test("a rotation's Delete hands the focus to the next rotation's Delete, the last to the Rotations heading", async () => {
    const schedule = await stack.api('POST', '/api/schedules', {
      name: 'Layers',
      time_zone: 'Europe/Berlin',
    });
    const id = schedule.body.id as number;
    for (const name of ['Days', 'Nights']) {
      const made = await stack.api('POST', `/api/schedules/${id}/rotations`, {
        name,
        participant_ids: [stack.admin.id, stack.member.id],
        shift_length: 1,
        shift_unit: 'weeks',
        start_date: '2026-11-30',
        handoff_time: '09:00',
      });
      assert.equal(made.status, 201, JSON.stringify(made.body));
    }
    const page = await adminPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${stack.url}/schedules/${id}`);
    const deleteDays = page.getByRole('button', { name: 'Delete Days', exact: true });
    await deleteDays.focus();
    await page.keyboard.press('Enter');
    await deleteDays.waitFor({ state: 'detached' });
    const deleteNights = page.getByRole('button', { name: 'Delete Nights', exact: true });
    await focusLandsOn(page, deleteNights, 'the rotation Days deleted');
    await page
      .getByTestId('removed')
      .filter({ hasText: /^The rotation Days is deleted\.$/ })
      .waitFor({ state: 'attached' });
    await page.keyboard.press('Enter');
    await page.getByText('No rotations.').waitFor();
    await focusLandsOn(
      page,
      page.getByRole('heading', { name: 'Rotations', exact: true }),
      'no rotation left',
    );
  });

  test("in the rotation form, a place's Remove hands the focus to the next place's, else the one before, else the person picker", async () => {
    const schedule = await stack.api('POST', '/api/schedules', {
      name: 'Places',
      time_zone: 'Europe/Berlin',
    });
    const page = await adminPage();
    await page.goto(`${stack.url}/schedules/${schedule.body.id}`);
    await page.getByRole('button', { name: 'New rotation' }).click();
    const form = page.getByRole('form', { name: 'New rotation' });
    const picker = form.getByLabel('Person to add');
    for (const person of ['admin', 'mia', 'admin']) {
      await picker.selectOption({ label: person });
      await form.getByRole('button', { name: 'Add participant' }).click();
    }
    const remove = (name: string) => form.getByRole('button', { name, exact: true });
    await remove('Remove mia from place 2').focus();
    await page.keyboard.press('Enter');
    // The admin of place 3 moved up to place 2: its Remove, where the pressed one was.
    await focusLandsOn(page, remove('Remove admin from place 2'), 'mia removed from place 2');
    await page.keyboard.press('Enter');
    await focusLandsOn(page, remove('Remove admin from place 1'), 'the last place removed');
    await page.keyboard.press('Enter');
    await form.getByText('No one yet').waitFor();
    await focusLandsOn(page, picker, 'no place left');
  });

  test("on the Me page, a key's Revoke hands the focus to the next key's Revoke", async () => {
    for (const name of ['focus-one', 'focus-two'])
      assert.equal((await stack.api('POST', `/api/users/${stack.admin.id}/api-keys`, { name })).status, 201);
    const page = await adminPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${stack.url}/me`);
    const revokes = page.getByRole('button', { name: /^Revoke / });
    await page.getByRole('button', { name: 'Revoke focus-two', exact: true }).waitFor();
    const names = await revokes.allInnerTexts();
    const at = names.indexOf('Revoke focus-one');
    const landing = names[at + 1] ?? names[at - 1]!;
    await page.getByRole('button', { name: 'Revoke focus-one', exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Revoke focus-one', exact: true }).waitFor({ state: 'detached' });
    await focusLandsOn(page, page.getByRole('button', { name: landing, exact: true }), 'a key revoked');
  });

  test('"Make X the default" hands the focus to the schedule\'s name, now at the top of the list', async () => {
    const schedules = (await stack.api('GET', '/api/schedules')).body as {
      name: string;
      is_default: boolean;
    }[];
    const other = schedules.find((schedule) => !schedule.is_default);
    assert.ok(other, 'a schedule that is not the default');
    const page = await adminPage();
    await page.goto(`${stack.url}/schedules`);
    const make = page.getByRole('button', { name: `Make ${other.name} the default`, exact: true });
    await make.focus();
    await page.keyboard.press('Enter');
    await make.waitFor({ state: 'detached' });
    await focusLandsOn(page, page.getByRole('link', { name: other.name, exact: true }), 'made the default');
  });
});
