/**
 * The paging pages in a real browser (Chromium) against a real terdut-server
 * process on PGlite only (the server side of paging is tested on both
 * databases elsewhere): escalation policies, contact methods with a test
 * message through the ntfy stand-in, heartbeats, maintenance windows. Every
 * change made on a page is checked through the API afterwards.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { pollTopic, startNtfyStandin, type NtfyStandin } from '../peers/ntfy-standin.ts';
import {
  ADMIN_PASSWORD,
  assertAccessible,
  assertNoHorizontalScroll,
  DESKTOP,
  launchChromium,
  MEMBER_PASSWORD,
  PHONE,
  screenshot,
  signIn,
  startWebStack,
  type WebStack,
} from './support.ts';

describe('the paging pages [pglite]', () => {
  let browser: Browser;
  let ntfy: NtfyStandin;
  let stack: WebStack;
  const contexts: BrowserContext[] = [];

  before(async () => {
    browser = await launchChromium();
    ntfy = await startNtfyStandin();
    stack = await startWebStack('pglite', { env: { TERDUT_NTFY_URL: ntfy.url } });
  });
  after(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await stack?.close();
    await ntfy?.close();
    await browser?.close();
  });

  async function newPage(as: 'admin' | 'mia', options: { phone?: boolean; dark?: boolean } = {}) {
    const context = await browser.newContext({
      ...(options.phone
        ? { viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 1 }
        : { viewport: DESKTOP }),
      colorScheme: options.dark ? 'dark' : 'light',
    });
    contexts.push(context);
    const page = await context.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    if (as === 'mia') await signIn(page, stack.url, 'mia', MEMBER_PASSWORD);
    else await signIn(page, stack.url, 'admin', ADMIN_PASSWORD);
    return page;
  }

  async function open(page: Page, link: string, heading: string) {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: link }).click();
    await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
  }

  test('an admin creates an escalation policy with two steps on the page', async () => {
    const page = await newPage('admin');
    await open(page, 'Escalation', 'Escalation policies');
    await page.getByRole('button', { name: 'New escalation policy' }).click();
    const form = page.getByRole('form', { name: 'New escalation policy' });
    await form.getByLabel('Policy name').fill('Databases');
    await form.getByLabel(/Label matchers/).fill('team="db"\nseverity=~"critical|error"');
    await form.getByLabel(/Step 1 delay/).fill('0s');
    await form.getByRole('button', { name: 'Add step' }).click();
    await form.getByLabel(/Step 2 delay/).fill('5m');
    await form.getByLabel('Step 2: all admins').uncheck();
    await form.getByLabel('Step 2: mia').check();
    await form.getByLabel('Repeat count').fill('2');
    await form.getByLabel('Notify everyone paged when resolved').uncheck();
    await assertAccessible(page, 'the escalation policy editor');
    await form.getByRole('button', { name: 'Save policy' }).click();
    await page.getByRole('button', { name: 'Edit Databases' }).waitFor();

    const policies = (await stack.api('GET', '/api/escalation-policies')).body;
    assert.equal(policies.length, 1, JSON.stringify(policies));
    const [policy] = policies;
    assert.equal(policy.name, 'Databases');
    assert.deepEqual(policy.matchers, ['team="db"', 'severity=~"critical|error"']);
    assert.deepEqual(policy.steps, [
      { delay: '0s', targets: [{ type: 'on_call' }] },
      { delay: '5m', targets: [{ type: 'user', user_id: stack.member.id }] },
    ]);
    assert.equal(policy.repeat, 2);
    assert.equal(policy.notify_on_resolve, false);
    const card = page.getByRole('list', { name: 'Escalation policies' }).getByRole('listitem').first();
    assert.match(await card.innerText(), /after 5m: mia/);

    // A mistake is refused in the server's words, where the form is.
    await page.getByRole('button', { name: 'Edit Databases' }).click();
    const edit = page.getByRole('form', { name: 'Edit Databases' });
    await edit.getByLabel(/Step 2 delay/).fill('soon');
    await edit.getByRole('button', { name: 'Save policy' }).click();
    await edit.getByRole('alert').waitFor();
    await edit.getByLabel(/Step 2 delay/).fill('10m');
    await edit.getByRole('button', { name: 'Save policy' }).click();
    await edit.waitFor({ state: 'detached' });
    const changed = (await stack.api('GET', `/api/escalation-policies/${policy.id}`)).body;
    assert.equal(changed.steps[1].delay, '10m');
    await assertAccessible(page, 'the escalation policies page');
  });

  test('on a phone, a refused policy says which step and line is wrong beside it, the keyboard there, nothing typed lost', async () => {
    const page = await newPage('admin', { phone: true });
    await open(page, 'Escalation', 'Escalation policies');
    await page.getByRole('button', { name: 'New escalation policy' }).click();
    const form = page.getByRole('form', { name: 'New escalation policy' });
    await form.getByLabel('Policy name').fill('First day');
    await form.getByLabel(/Label matchers/).fill('team="web"\n\nseverity=~"critical|high');
    await form.getByRole('button', { name: 'Add step' }).click();
    await form.getByLabel('Step 2: all admins').uncheck();
    await form.getByLabel('Step 2: on call').check();
    await form.getByRole('button', { name: 'Add step' }).click();
    await form.getByLabel(/Step 3 delay/).fill('10s');

    // The server counts from 0 and skips the blank line; the screen says line 3.
    await form.getByRole('button', { name: 'Save policy' }).click();
    const matchers = form.getByLabel(/Label matchers/);
    await matchers.and(page.locator(':focus')).waitFor();
    assert.equal(await matchers.getAttribute('aria-invalid'), 'true');
    assert.match(
      await page.locator(`#${await matchers.getAttribute('aria-describedby')}`).innerText(),
      /^Label matcher on line 3: value "critical\|high has no closing quote/,
    );

    await matchers.fill('team="web"\n\nseverity=~"critical|high"');
    await form.getByRole('button', { name: 'Save policy' }).click();
    const delay = form.getByLabel(/Step 3 delay/);
    await delay.and(page.locator(':focus')).waitFor();
    assert.equal(await delay.getAttribute('aria-invalid'), 'true');
    assert.equal(await matchers.getAttribute('aria-invalid'), null, 'the mended field is no longer marked');
    const note = page.locator(`#${await delay.getAttribute('aria-describedby')}`);
    assert.match(await note.innerText(), /^Step 3 delay must be from 30s to 24h, got "10s"/);
    // Beside step 3, not at the foot of the form: inside step 3's box.
    assert.equal(
      await form.getByRole('group', { name: 'Step 3', exact: true }).locator('p.error').count(),
      1,
    );
    assert.equal(await form.getByRole('alert').count(), 1, 'the refusal is said once');
    assert.equal(await form.getByLabel('Policy name').inputValue(), 'First day');
    assert.equal(await form.getByLabel('Step 2: on call').isChecked(), true);
    await assertNoHorizontalScroll(page, 'the policy editor with a refusal on a phone');

    await page.keyboard.press('Control+A');
    await page.keyboard.type('5m');
    await page.keyboard.press('Enter');
    await form.waitFor({ state: 'detached' });
    const saved = (await stack.api('GET', '/api/escalation-policies')).body.find(
      (policy: { name: string }) => policy.name === 'First day',
    );
    assert.deepEqual(saved.matchers, ['team="web"', 'severity=~"critical|high"']);
    assert.deepEqual(saved.steps, [
      { delay: '0s', targets: [{ type: 'on_call' }] },
      { delay: '5m', targets: [{ type: 'on_call' }] },
      { delay: '5m', targets: [{ type: 'admins' }] },
    ]);
    await stack.api('DELETE', `/api/escalation-policies/${saved.id}`);
  });

  test('on the Me page I add an ntfy topic and a test message reaches it', async () => {
    const page = await newPage('admin');
    await open(page, 'Me', 'Me: admin');
    const form = page.getByRole('form', { name: 'Add a contact method' });
    await form.getByLabel('Kind').selectOption('ntfy');
    await form.getByLabel('ntfy topic').fill('admin-pager-42');
    await form.getByLabel('Name (optional)').fill('phone');
    await form.getByRole('button', { name: 'Add contact method' }).click();
    await page.getByRole('button', { name: 'Test phone' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Delivered/ })
      .waitFor();

    const methods = (await stack.api('GET', `/api/users/${stack.admin.id}/contact-methods`)).body;
    assert.deepEqual(
      methods.map((method: { kind: string; target: string; name: string }) => [
        method.kind,
        method.target,
        method.name,
      ]),
      [['ntfy', 'admin-pager-42', 'phone']],
    );
    const received = await pollTopic(ntfy.url, 'admin-pager-42');
    assert.equal(received.length, 1, 'the stand-in received one test message');

    await page.getByRole('button', { name: 'Switch off phone' }).click();
    await page.getByRole('button', { name: 'Switch on phone' }).waitFor();
    assert.equal(
      (await stack.api('GET', `/api/users/${stack.admin.id}/contact-methods`)).body[0].enabled,
      false,
    );
    await assertAccessible(page, 'the Me page with a contact method');
  });

  test("on a phone, a member's contact methods without a name have buttons that say which one they act on", async () => {
    const page = await newPage('mia', { phone: true });
    const questions: string[] = [];
    page.on('dialog', (dialog) => questions.push(dialog.message()));
    await open(page, 'Me', 'Me: mia');
    const form = page.getByRole('form', { name: 'Add a contact method' });
    // The longest topic there is, and no name: the name is optional.
    const topic = `mia-${'x'.repeat(55)}-0042`;
    await form.getByLabel('ntfy topic').fill(topic);
    await form.getByRole('button', { name: 'Add contact method' }).click();
    await page.getByRole('button', { name: `Test ${topic}` }).waitFor();
    await form.getByLabel('Kind').selectOption('webhook');
    await form.getByRole('textbox', { name: 'Webhook URL' }).fill('http://127.0.0.1:9/hooks/terdut');
    await form.getByRole('button', { name: 'Add contact method' }).click();
    assert.match(
      await page
        .getByRole('status')
        .filter({ hasText: /^Signing secret/ })
        .innerText(),
      /^Signing secret of webhook to 127\.0\.0\.1:9 \(X-Terdut-Signature\)/,
    );
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await page.getByRole('button', { name: 'Test webhook to 127.0.0.1:9' }).waitFor();
    await assertNoHorizontalScroll(page, 'the Me page with a 64-character topic on a phone');

    await page.getByRole('button', { name: `Test ${topic}` }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Delivered/ })
      .waitFor();
    assert.equal((await pollTopic(ntfy.url, topic)).length, 1, 'the test went to the topic the button named');

    await page.getByRole('button', { name: `Switch off ${topic}` }).click();
    await page.getByRole('button', { name: `Switch on ${topic}` }).waitFor();
    await page.getByRole('button', { name: `Delete ${topic}` }).click();
    await page.getByRole('button', { name: `Delete ${topic}` }).waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Delete webhook to 127.0.0.1:9' }).click();
    await page.getByText('No contact methods yet.').waitFor();
    assert.deepEqual(questions, [
      `Delete the contact method "${topic}"? Pages stop going there.`,
      'Delete the contact method "webhook to 127.0.0.1:9"? Pages stop going there.',
    ]);
    assert.deepEqual((await stack.api('GET', `/api/users/${stack.member.id}/contact-methods`)).body, []);
  });

  test('an admin adds a heartbeat and a maintenance window; phone and dark mode fit', async () => {
    const page = await newPage('admin', { phone: true, dark: true });
    await open(page, 'Heartbeats', 'Heartbeats');
    const heartbeat = page.getByRole('form', { name: 'Add a heartbeat' });
    await heartbeat.getByLabel('Heartbeat name').fill('Prometheus watchdog');
    await heartbeat.getByLabel('Interval').fill('5m');
    await heartbeat.getByLabel(/Alert matchers/).fill('alertname="Watchdog"');
    await heartbeat.getByRole('button', { name: 'Add heartbeat' }).click();
    const card = page.getByRole('list', { name: 'Heartbeats' }).getByRole('listitem').first();
    await card.getByText('alive', { exact: true }).waitFor();
    assert.match(await card.innerText(), /last ping/);
    const heartbeats = (await stack.api('GET', '/api/heartbeats')).body;
    assert.deepEqual(
      heartbeats.map((one: { name: string; interval: string; matchers: string[] }) => [
        one.name,
        one.interval,
        one.matchers,
      ]),
      [['Prometheus watchdog', '5m', ['alertname="Watchdog"']]],
    );
    await assertAccessible(page, 'the heartbeats page');
    await assertNoHorizontalScroll(page, 'the heartbeats page');
    await screenshot(page, 'pglite-heartbeats-phone-dark');

    await open(page, 'Maintenance', 'Maintenance windows');
    const windowForm = page.getByRole('form', { name: 'Schedule a maintenance window' });
    await windowForm.getByLabel('Reason').fill('Database upgrade');
    await windowForm.getByLabel('Starts (Europe/Berlin)').fill('2030-01-10T22:00');
    await windowForm.getByLabel('Ends (Europe/Berlin)').fill('2030-01-11T02:00');
    await windowForm.getByLabel(/Label matchers/).fill('team="db"');
    const [created] = await Promise.all([
      page.waitForResponse(
        (response) =>
          response.url().endsWith('/api/maintenance-windows') && response.request().method() === 'POST',
      ),
      windowForm.getByRole('button', { name: 'Schedule window' }).click(),
    ]);
    assert.equal(created.status(), 201, await created.text());
    const windowCard = page.getByRole('list', { name: 'Maintenance windows' }).getByRole('listitem').first();
    await windowCard.getByText('upcoming', { exact: true }).waitFor();
    const windows = (await stack.api('GET', '/api/maintenance-windows')).body;
    assert.equal(windows.length, 1, JSON.stringify(windows));
    assert.equal(windows[0].reason, 'Database upgrade');
    assert.deepEqual(windows[0].matchers, ['team="db"']);
    // Typed as wall times in the server's zone (Berlin, UTC+1 in January).
    assert.equal(windows[0].starts_at, '2030-01-10T21:00:00.000Z');
    assert.equal(windows[0].ends_at, '2030-01-11T01:00:00.000Z');
    assert.match(await windowCard.innerText(), /2030-01-10 22:00 – 2030-01-11 02:00/);
    await assertAccessible(page, 'the maintenance page');
    await assertNoHorizontalScroll(page, 'the maintenance page');
    await screenshot(page, 'pglite-maintenance-phone-dark');

    await open(page, 'Escalation', 'Escalation policies');
    await page.getByRole('button', { name: 'New escalation policy' }).click();
    await page
      .getByRole('form', { name: 'New escalation policy' })
      .getByRole('button', { name: 'Add step' })
      .click();
    await assertAccessible(page, 'the escalation policy editor on a phone in dark mode');
    await assertNoHorizontalScroll(page, 'the escalation policy editor');
    await screenshot(page, 'pglite-escalation-phone-dark');
    await open(page, 'Me', 'Me: admin');
    await assertAccessible(page, 'the Me page on a phone in dark mode');
    await assertNoHorizontalScroll(page, 'the Me page');
  });

  test('heartbeats and maintenance left open on a wall display move with the clock: missed, current', async () => {
    const beat = await stack.api('POST', '/api/heartbeats', { name: 'Wall watchdog', interval: '5m' });
    assert.equal(beat.status, 201, JSON.stringify(beat.body));
    const minutes = (count: number) => new Date(Date.now() + count * 60_000).toISOString();
    const upgrade = await stack.api('POST', '/api/maintenance-windows', {
      starts_at: minutes(15),
      ends_at: minutes(60),
      reason: 'Wall upgrade',
    });
    assert.equal(upgrade.status, 201, JSON.stringify(upgrade.body));
    try {
      const page = await newPage('admin');
      await page.clock.install({ time: new Date() });
      await page.goto(`${stack.url}/heartbeats`);
      const card = page
        .getByRole('list', { name: 'Heartbeats' })
        .getByRole('listitem')
        .filter({ hasText: 'Wall watchdog' });
      await card.getByText('alive', { exact: true }).waitFor();
      // Ten minutes without a ping, the page untouched: the minute's refresh shows it missed.
      await page.clock.fastForward('10:00');
      await card.getByText('missed', { exact: true }).waitFor();

      await open(page, 'Maintenance', 'Maintenance windows');
      const windowCard = page
        .getByRole('list', { name: 'Maintenance windows' })
        .getByRole('listitem')
        .filter({ hasText: 'Wall upgrade' });
      await windowCard.getByText('upcoming', { exact: true }).waitFor();
      await page.clock.fastForward('10:00');
      await windowCard.getByText('current', { exact: true }).waitFor();
    } finally {
      await stack.api('DELETE', `/api/heartbeats/${beat.body.id}`);
      await stack.api('DELETE', `/api/maintenance-windows/${upgrade.body.id}`);
    }
  });

  test('a member on call with no way to reach her is warned on the queue and the Me page', async () => {
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin' }).format(new Date());
    const scheduled = await stack.api('POST', '/api/schedule', { user_id: stack.member.id, dates: [today] });
    assert.ok(scheduled.status < 300, JSON.stringify(scheduled.body));
    const page = await newPage('mia');
    // The warning says what to do, and the way there is one tap.
    await page
      .getByRole('alert')
      .filter({ hasText: /no working contact method/ })
      .getByRole('link', { name: 'Add a contact method on the Me page' })
      .click();
    await page.getByRole('heading', { name: 'Me: mia', level: 1 }).waitFor();
    const warning = page.getByRole('alert').filter({ hasText: /no working contact method/ });
    await warning.waitFor();
    await assertAccessible(page, 'the Me page with the on-call warning');

    // Adding a way to reach her takes the warning away at once, on the same page.
    const form = page.getByRole('form', { name: 'Add a contact method' });
    await form.getByLabel('Kind').selectOption('ntfy');
    await form.getByLabel('ntfy topic').fill('mia-pager-7');
    await form.getByRole('button', { name: 'Add contact method' }).click();
    await warning.waitFor({ state: 'detached' });
  });

  test('a member sees policies, heartbeats and windows but no admin controls', async () => {
    const page = await newPage('mia');
    await open(page, 'Escalation', 'Escalation policies');
    await page.getByText('Databases').waitFor();
    assert.equal(await page.getByRole('button', { name: /New escalation policy|Edit |Delete / }).count(), 0);
    await open(page, 'Heartbeats', 'Heartbeats');
    await page.getByText('Prometheus watchdog').waitFor();
    assert.equal(await page.getByRole('form', { name: 'Add a heartbeat' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: /Delete/ }).count(), 0);
    await open(page, 'Maintenance', 'Maintenance windows');
    await page.getByText('Database upgrade').waitFor();
    assert.equal(await page.getByRole('form', { name: 'Schedule a maintenance window' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: /Delete/ }).count(), 0);
    await assertAccessible(page, 'the maintenance page as a member');
  });

  test("a step paging another schedule's on-call person says which, and keeps it through an edit", async () => {
    const schedule = await stack.api('POST', '/api/schedules', {
      name: 'Payments',
      time_zone: 'Europe/Berlin',
    });
    assert.equal(schedule.status, 201, JSON.stringify(schedule.body));
    const created = await stack.api('POST', '/api/escalation-policies', {
      name: 'Payments team',
      matchers: ['team="payments"'],
      steps: [{ delay: '0s', targets: [{ type: 'on_call', schedule_id: schedule.body.id }] }],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const page = await newPage('admin');
    await open(page, 'Escalation', 'Escalation policies');
    const card = page.getByRole('listitem').filter({ hasText: 'Payments team' });
    await card.getByText('after 0s: on call in Payments').waitFor();

    await page.getByRole('button', { name: 'Edit Payments team' }).click();
    const edit = page.getByRole('form', { name: 'Edit Payments team' });
    const where = edit.getByLabel('Step 1: whose schedule');
    assert.equal(await where.inputValue(), String(schedule.body.id));
    // Unticked and ticked again (a slip of the finger): still the Payments schedule, not the default.
    await edit.getByLabel('Step 1: on call').uncheck();
    await edit.getByLabel('Step 1: on call').check();
    assert.equal(await where.inputValue(), String(schedule.body.id));
    await edit.getByLabel(/Step 1 delay/).fill('1m');
    await edit.getByRole('button', { name: 'Save policy' }).click();
    await edit.waitFor({ state: 'detached' });
    const saved = (await stack.api('GET', `/api/escalation-policies/${created.body.id}`)).body;
    assert.deepEqual(saved.steps, [
      { delay: '1m', targets: [{ type: 'on_call', schedule_id: schedule.body.id }] },
    ]);

    // And the default schedule, chosen on the page.
    await page.getByRole('button', { name: 'Edit Payments team' }).click();
    await edit.getByLabel('Step 1: whose schedule').selectOption({ label: 'in the default schedule' });
    await edit.getByRole('button', { name: 'Save policy' }).click();
    await edit.waitFor({ state: 'detached' });
    await card.getByText('after 1m: on call', { exact: true }).waitFor();
    const back = (await stack.api('GET', `/api/escalation-policies/${created.body.id}`)).body;
    assert.deepEqual(back.steps[0].targets, [{ type: 'on_call' }]);
    assert.equal((await stack.api('DELETE', `/api/escalation-policies/${created.body.id}`)).status, 204);
  });

  test('a person deleted after a policy named them is shown as deleted, and saving the policy untouched leaves them out', async () => {
    const person = await stack.api('POST', '/api/users', {
      username: 'ola',
      email: 'ola@example.test',
      role: 'member',
    });
    assert.equal(person.status, 201, JSON.stringify(person.body));
    const ola = person.body.id as number;
    const created = await stack.api('POST', '/api/escalation-policies', {
      name: 'Storage',
      matchers: ['team="storage"'],
      steps: [
        { delay: '0s', targets: [{ type: 'on_call' }] },
        { delay: '5m', targets: [{ type: 'user', user_id: ola }, { type: 'admins' }] },
        { delay: '10m', targets: [{ type: 'user', user_id: ola }] },
      ],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal((await stack.api('DELETE', `/api/users/${ola}`)).status, 204);

    const page = await newPage('admin');
    await open(page, 'Escalation', 'Escalation policies');
    const card = page.getByRole('listitem').filter({ hasText: 'Storage' });
    await card.getByText(`after 5m: person #${ola} (deleted), all admins`).waitFor();
    // Looking is not changing: the policy still names ola until an admin saves it.
    const before = (await stack.api('GET', `/api/escalation-policies/${created.body.id}`)).body;
    assert.deepEqual(before.steps[1].targets, [{ type: 'user', user_id: ola }, { type: 'admins' }]);

    await page.getByRole('button', { name: 'Edit Storage' }).click();
    const edit = page.getByRole('form', { name: 'Edit Storage' });
    // A box like any other target's, named as deleted, which says before saving what saving does.
    const step2 = edit.getByRole('checkbox', { name: `Step 2: person #${ola} (deleted)` });
    assert.equal(await step2.isChecked(), true);
    assert.equal(
      await step2.getAttribute('aria-describedby').then((id) => page.locator(`#${id}`).innerText()),
      `person #${ola} was deleted and will be removed from this step when you save.`,
    );
    // Step 3 paged only ola: it would page nobody, and says so.
    const step3 = edit.getByRole('checkbox', { name: `Step 3: person #${ola} (deleted)` });
    assert.match(
      await edit.getByRole('group', { name: 'Step 3', exact: true }).innerText(),
      /Step 3 then pages nobody: tick another target or remove the step\./,
    );
    await assertAccessible(page, 'the policy editor with a deleted person');
    await screenshot(page, 'policy-editor-deleted-person');
    // The admin unticks ola in step 3 (the box stays, unticked) and pages the admins there instead.
    await step3.uncheck();
    assert.equal(await step3.isChecked(), false);
    await edit.getByLabel('Step 3: all admins').check();
    assert.equal(
      await edit
        .getByRole('group', { name: 'Step 3', exact: true })
        .getByText(/pages nobody/)
        .count(),
      0,
    );

    // Step 2 left as it was: saving succeeds and leaves ola out.
    const saved = page.waitForResponse(
      (response) =>
        response.url().endsWith(`/api/escalation-policies/${created.body.id}`) &&
        response.request().method() === 'PUT',
    );
    await edit.getByRole('button', { name: 'Save policy' }).click();
    assert.equal((await saved).status(), 200);
    await edit.waitFor({ state: 'detached' });
    const after = (await stack.api('GET', `/api/escalation-policies/${created.body.id}`)).body;
    assert.deepEqual(after.steps, [
      { delay: '0s', targets: [{ type: 'on_call' }] },
      { delay: '5m', targets: [{ type: 'admins' }] },
      { delay: '10m', targets: [{ type: 'admins' }] },
    ]);
    await card.getByText('after 5m: all admins', { exact: true }).waitFor();
    assert.equal((await stack.api('DELETE', `/api/escalation-policies/${created.body.id}`)).status, 204);
  });
});
