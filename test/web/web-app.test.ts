/**
 * The web app in a real browser (Chromium) against real terdut-server
 * processes, on PGlite and on PostgreSQL (two replicas sharing the database,
 * so live updates cross replicas through LISTEN/NOTIFY). Every action is
 * checked through the API afterwards, not only on the page.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { firingAlert, notification, resolvedAlert } from '../support/alertmanager-payloads.ts';
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

let browser: Browser;
before(async () => {
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
});

for (const kind of ['pglite', 'postgres'] as const) {
  describe(`the web app [${kind}]`, () => {
    let stack: WebStack;
    const contexts: BrowserContext[] = [];
    let alertNumber = 0;

    let setupPage: { text: string; error?: Error } = { text: '' };
    before(async () => {
      stack = await startWebStack(kind, {
        // The page a person sees before the first admin exists, checked once here.
        async beforeBootstrap(url) {
          const context = await browser.newContext({ viewport: PHONE, isMobile: true });
          try {
            const page = await context.newPage();
            await page.goto(url + '/');
            await page.getByRole('heading', { name: 'terdut is not set up yet' }).waitFor();
            setupPage = { text: await page.locator('main').innerText() };
            await assertAccessible(page, 'the setup page');
            await assertNoHorizontalScroll(page, 'the setup page');
            await screenshot(page, `${kind}-setup-phone`);
          } catch (error) {
            setupPage.error = error as Error;
          } finally {
            await context.close();
          }
        },
      });
    });
    after(async () => {
      for (const context of contexts) await context.close().catch(() => {});
      await stack?.close();
    });

    async function newPage(
      options: { phone?: boolean; dark?: boolean; url?: string; as?: 'admin' | 'mia' } = {},
    ): Promise<Page> {
      const context = await browser.newContext({
        ...(options.phone
          ? { viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 1 }
          : { viewport: DESKTOP }),
        colorScheme: options.dark ? 'dark' : 'light',
      });
      contexts.push(context);
      const page = await context.newPage();
      if (options.as === 'mia') await signIn(page, options.url ?? stack.url, 'mia', MEMBER_PASSWORD);
      else if (options.as === 'admin') await signIn(page, options.url ?? stack.url, 'admin', ADMIN_PASSWORD);
      return page;
    }

    /** Alertmanager's webhook, over HTTP as Alertmanager sends it; returns the incident it opened. */
    async function fireAlert(title = `DiskFull${++alertNumber}`): Promise<number> {
      const payload = notification({
        alerts: [
          firingAlert({
            name: title,
            severity: 'critical',
            labels: { instance: `db-${alertNumber}.example:9100` },
            annotations: {
              summary: `${title} on db-${alertNumber}`,
              runbook_url: 'https://runbooks.example/disk-full',
            },
            generatorURL: 'http://prometheus.example:9090/graph?g0.expr=up',
          }),
        ],
      });
      const answer = await stack.api('POST', '/api/webhook/alertmanager', payload);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const incidents = await stack.api('GET', '/api/incidents');
      const incident = (incidents.body as { id: number; title: string }[]).find((one) =>
        one.title.includes(title),
      );
      assert.ok(incident, `no incident for ${title}: ${JSON.stringify(incidents.body)}`);
      return incident.id;
    }
    const incident = async (id: number) => (await stack.api('GET', `/api/incidents/${id}`)).body;

    test('before bootstrap, the page explains the bootstrap token and the operator', () => {
      if (setupPage.error) throw setupPage.error;
      assert.match(setupPage.text, /bootstrap token/);
      assert.match(setupPage.text, /terdut-operator/);
      assert.match(setupPage.text, /\/api\/bootstrap/);
    });

    test('a password sign-in lands on the queue; a wrong password is refused in the server’s words', async () => {
      const page = await newPage();
      await page.goto(stack.url + '/');
      await page.getByLabel('Username', { exact: true }).fill('admin');
      await page.getByLabel('Password', { exact: true }).fill('not-the-password-123');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page
        .getByRole('alert')
        .filter({ hasText: /wrong username or password|invalid/i })
        .waitFor();
      assert.equal(
        await page.getByRole('button', { name: 'Sign in with SSO' }).count(),
        0,
        'no SSO without OIDC',
      );
      await page.getByLabel('Password', { exact: true }).fill(ADMIN_PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { name: 'Incidents' }).waitFor();
      const cookies = await page.context().cookies();
      assert.ok(cookies.some((cookie) => cookie.name === 'terdut_session' && cookie.httpOnly));
      const stored = await page.evaluate(
        () => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }),
      );
      assert.equal(stored, '{}{}', 'nothing in browser storage: the session cookie only');

      // The session ends elsewhere (signed out on another device, expired): the next refresh shows the sign-in page.
      const value = (name: string) => cookies.find((cookie) => cookie.name === name)!.value;
      const signOut = await fetch(`${stack.url}/auth/logout`, {
        method: 'POST',
        headers: {
          cookie: `terdut_session=${value('terdut_session')}; terdut_csrf=${value('terdut_csrf')}`,
          'x-csrf-token': value('terdut_csrf'),
        },
      });
      assert.equal(signOut.status, 204);
      await fireAlert('AfterSignOut');
      await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor({ timeout: 20_000 });
    });

    test('the queue shows an incident a webhook opened, without a reload', async () => {
      const page = await newPage({ as: 'admin' });
      // A cold load (new page, nothing cached) of the signed-in queue, over loopback.
      const coldContext = await browser.newContext({
        viewport: DESKTOP,
        storageState: await page.context().storageState(),
      });
      contexts.push(coldContext);
      const cold = await coldContext.newPage();
      const started = Date.now();
      await cold.goto(stack.url + '/');
      await cold.getByRole('heading', { name: 'Incidents' }).waitFor();
      await cold
        .getByText(/All quiet|alert/)
        .first()
        .waitFor();
      console.log(`# [${kind}] cold load of the queue: ${Date.now() - started} ms`);
      await cold.close();
      await page.getByText('Live', { exact: true }).waitFor();
      const id = await fireAlert('QueueShowsWebhook');
      const row = page.locator(`[data-incident="${id}"]`);
      await row.waitFor({ timeout: 5000 });
      assert.match(
        await row.innerText(),
        /critical[\s\S]*triggered[\s\S]*QueueShowsWebhook[\s\S]*unassigned[\s\S]*1 alert/,
      );
    });

    test('a resolved incident in the queue counts its alerts that fired again into a newer incident', async () => {
      const page = await newPage({ as: 'admin' });
      const feedRequests: string[] = [];
      page.on('request', (request) => {
        if (/\/api\/alerts(\?|$)/.test(request.url())) feedRequests.push(request.url());
      });
      const groupKey = `refired-${kind}-${Date.now()}`;
      const alerts = (status: 'firing' | 'resolved', startsAt: string) =>
        ['a', 'b'].map((instance) =>
          (status === 'firing' ? firingAlert : resolvedAlert)({
            name: 'RefiredInQueue',
            labels: { instance },
            startsAt,
          }),
        );
      const post = async (payload: ReturnType<typeof notification>) => {
        const answer = await stack.api('POST', '/api/webhook/alertmanager', payload);
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        return answer.body as { incident_id?: number };
      };
      const first = (await post(notification({ groupKey, alerts: alerts('firing', '2026-07-27T09:00:00Z') })))
        .incident_id!;
      await post(notification({ groupKey, alerts: alerts('resolved', '2026-07-27T09:00:00Z') }));
      // One of the two fires again: a new incident, and the alert's newest incident is that one.
      const again = firingAlert({
        name: 'RefiredInQueue',
        labels: { instance: 'a' },
        startsAt: '2026-07-27T10:00:00Z',
      });
      const second = (await post(notification({ groupKey, alerts: [again] }))).incident_id!;
      assert.notEqual(second, first);

      await page.locator(`[data-incident="${second}"]`).getByText('1 alert', { exact: true }).waitFor();
      await page
        .getByRole('navigation', { name: 'Incident filters' })
        .getByRole('link', { name: 'Resolved' })
        .click();
      await page.locator(`[data-incident="${first}"]`).getByText('2 alerts', { exact: true }).waitFor();
      assert.deepEqual(feedRequests, [], 'the queue counts from the incidents, not from the alert feed');
    });

    test('an incident whose alert resolved while it was snoozed says resolved, not snoozed', async () => {
      const groupKey = `snoozed-then-resolved-${kind}-${Date.now()}`;
      const alert = { name: 'ResolvedWhileSnoozed', startsAt: new Date(Date.now() - 60_000).toISOString() };
      const opened = await stack.api(
        'POST',
        '/api/webhook/alertmanager',
        notification({ groupKey, alerts: [firingAlert(alert)] }),
      );
      const id = opened.body.incident_id as number;
      assert.equal((await stack.api('POST', `/api/incidents/${id}/snooze`, { duration: '2h' })).status, 200);
      await stack.api(
        'POST',
        '/api/webhook/alertmanager',
        notification({ groupKey, alerts: [resolvedAlert(alert)] }),
      );
      const stored = await incident(id);
      assert.equal(stored.status, 'resolved');
      assert.ok(stored.snoozed_until, 'the snooze it had is still on record');

      const page = await newPage({ as: 'admin' });
      await page.goto(`${stack.url}/incidents/${id}`);
      await page.getByRole('button', { name: 'Archive', exact: true }).waitFor();
      const header = page.locator('main');
      await header.locator('.badge.status-resolved').first().waitFor();
      assert.equal(await header.locator('.badge.status-snoozed').count(), 0);
      assert.equal(await page.getByText(/snoozed until/).count(), 0);
      await page.goto(`${stack.url}/?filter=resolved`);
      const row = page.locator(`[data-incident="${id}"]`);
      await row.getByText('resolved', { exact: true }).waitFor();
      assert.equal(await row.getByText('snoozed', { exact: true }).count(), 0);
    });

    test('acknowledge and assign from the queue, with the mouse and with the keyboard', async () => {
      const page = await newPage({ as: 'admin' });
      const first = await fireAlert('AckFromQueue');
      const row = page.locator(`[data-incident="${first}"]`);
      await row.getByRole('button', { name: 'Acknowledge', exact: true }).click();
      await row.getByText('acknowledged', { exact: true }).waitFor();
      assert.equal((await incident(first)).acknowledged_by, 'admin');
      await row.getByRole('combobox').selectOption({ label: 'mia' });
      await row.getByRole('button', { name: 'Assign', exact: true }).click();
      await row.getByText('assigned to mia').waitFor();
      assert.equal((await incident(first)).assigned_to, 'mia');

      const second = await fireAlert('KeysFromQueue');
      await page.locator(`[data-incident="${second}"]`).waitFor();
      await page.keyboard.press('/');
      await page.keyboard.type('KeysFromQueue');
      await page.keyboard.press('Escape');
      await page.keyboard.press('a');
      await page.locator(`[data-incident="${second}"]`).getByText('acknowledged', { exact: true }).waitFor();
      await page.keyboard.press('s');
      await page.locator(`[data-incident="${second}"]`).getByText('assigned to admin').waitFor();
      const after = await incident(second);
      assert.equal(after.status, 'acknowledged');
      assert.equal(after.assigned_to, 'admin');
      await page.keyboard.press('Enter');
      await page.waitForURL(`**/incidents/${second}`);
    });

    test('a key pressed in a row reached with Tab acts on that row, and j/k take the focus along', async () => {
      const page = await newPage({ as: 'admin' });
      await page.getByRole('combobox', { name: 'Sort' }).selectOption('newest');
      const lower = await fireAlert('TabbedTo');
      const upper = await fireAlert('FirstRowNotTabbedTo');
      const upperRow = page.locator(`[data-incident="${upper}"]`);
      const lowerRow = page.locator(`[data-incident="${lower}"]`);
      await lowerRow.waitFor();
      // Tab from the first row's last control lands in the next row, on its title.
      await upperRow.getByRole('button', { name: 'Assign', exact: true }).focus();
      await page.keyboard.press('Tab');
      assert.equal(
        await lowerRow
          .getByRole('link')
          .evaluate(
            (link) =>
              link ===
              (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement,
          ),
        true,
      );
      await page.keyboard.press('a');
      await lowerRow.getByText('acknowledged', { exact: true }).waitFor();
      assert.equal((await incident(lower)).status, 'acknowledged');
      assert.equal((await incident(upper)).status, 'triggered', 'the first row was not touched');
      // k picks the row above and the focus goes with it: the next key acts where the focus is.
      await page.keyboard.press('k');
      assert.equal(
        await upperRow
          .getByRole('link')
          .evaluate(
            (link) =>
              link ===
              (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement,
          ),
        true,
      );
      await upperRow.and(page.locator('.selected')).waitFor();
    });

    test('on a phone, a refusal from the list is shown in the row acted on, where the person is', async () => {
      // A person who leaves while the queue is open is still in its pickers.
      const leaving = await stack.api('POST', '/api/users', {
        username: `leaving-${kind}`,
        email: `leaving-${kind}@example.com`,
      });
      assert.equal(leaving.status, 201, JSON.stringify(leaving.body));
      const page = await newPage({ phone: true, as: 'admin' });
      await page.getByRole('combobox', { name: 'Sort' }).selectOption('newest');
      const far = await fireAlert('RefusedFarDown');
      for (let i = 0; i < 5; i++)
        await page.locator(`[data-incident="${await fireAlert(`Above${i}`)}"]`).waitFor();
      const row = page.locator(`[data-incident="${far}"]`);
      await row.getByRole('combobox').selectOption({ label: `leaving-${kind}` });
      assert.equal((await stack.api('DELETE', `/api/users/${leaving.body.id}`)).status, 204);
      await row.getByRole('button', { name: 'Assign', exact: true }).tap();
      const refusal = row.getByRole('alert');
      await refusal.waitFor();
      assert.notEqual((await refusal.innerText()).trim(), '');
      const inView = await row.getByRole('button', { name: 'Assign', exact: true }).evaluate((button) => {
        const box = button.getBoundingClientRect();
        return box.top >= 0 && box.bottom <= (globalThis as unknown as { innerHeight: number }).innerHeight;
      });
      assert.ok(inView, 'the Assign button pressed is still on the screen');
      assert.equal(
        await page.locator('main > section > .error').count(),
        0,
        'no refusal at the top of the page',
      );
      assert.equal((await incident(far)).assigned_to, undefined);
    });

    test('the keys act on the incident picked, even after a live update moved it down the list', async () => {
      const page = await newPage({ as: 'admin' });
      await page.getByRole('combobox', { name: 'Sort' }).selectOption('newest');
      const picked = await fireAlert('PickedByKeys');
      const pickedRow = page.locator(`[data-incident="${picked}"]`);
      await pickedRow.waitFor();
      await pickedRow.locator('.row-meta').click();
      const arrived = await fireAlert('ArrivedAbove');
      // The newest comes first: the picked incident is now one row further down.
      await page.locator(`[data-incident="${arrived}"]`).waitFor();
      await pickedRow.and(page.locator('.selected')).waitFor();
      await page.keyboard.press('a');
      await pickedRow.getByText('acknowledged', { exact: true }).waitFor();
      assert.equal((await incident(picked)).status, 'acknowledged');
      assert.equal(
        (await incident(arrived)).status,
        'triggered',
        'the incident that arrived was not touched',
      );
    });

    test('switching the queue to another list says it is loading, and never shows the old list under the new name', async () => {
      const page = await newPage({ as: 'admin' });
      const open = await fireAlert('StillOpenWhileSwitching');
      const openRow = page.locator(`[data-incident="${open}"]`);
      await openRow.waitFor();
      // The resolved list answers slowly, as on a phone's network.
      let release!: () => void;
      const answered = new Promise<void>((resolve) => (release = resolve));
      await page.route(/\/api\/incidents\?.*status=resolved/, async (route) => {
        await answered;
        await route.continue();
      });
      await page
        .getByRole('navigation', { name: 'Incident filters' })
        .getByRole('link', { name: 'Resolved' })
        .click();
      await page.getByRole('status').getByText('Loading…').waitFor();
      assert.equal(await openRow.count(), 0, 'the open incident is not listed under Resolved');
      // A key pressed meanwhile acts on nothing: the open incident stays as it was.
      await page.keyboard.press('a');
      release();
      await page.getByRole('status').getByText('Loading…').waitFor({ state: 'detached' });
      assert.equal((await incident(open)).status, 'triggered');
      assert.equal(await page.locator(`[data-incident="${open}"]`).count(), 0);
    });

    test('back from an incident, the queue is where the person was reading, in the order they chose', async () => {
      const page = await newPage({ as: 'admin' });
      await page.setViewportSize({ width: DESKTOP.width, height: 500 });
      const fired: number[] = [];
      for (let i = 0; i < 12; i++) fired.push(await fireAlert(`ReadFarDown${i}`));
      await page.getByRole('combobox', { name: 'Sort' }).selectOption('oldest');
      // Oldest first: the last one fired is far down the list.
      const far = page.locator(`[data-incident="${fired.at(-1)}"]`);
      await far.scrollIntoViewIfNeeded();
      const scrollY = () => page.evaluate(() => (globalThis as unknown as { scrollY: number }).scrollY);
      const readAt = await scrollY();
      assert.ok(readAt > 200, `the list scrolled (${readAt} px)`);
      await far.getByRole('link').click();
      await page.waitForURL(`**/incidents/${fired.at(-1)}`);
      await page.getByRole('heading', { name: new RegExp(`ReadFarDown11`) }).waitFor();
      await page.goBack();
      await far.waitFor();
      assert.equal(await page.getByRole('combobox', { name: 'Sort' }).inputValue(), 'oldest');
      const deadline = Date.now() + 5000;
      while (Math.abs((await scrollY()) - readAt) > 2) {
        assert.ok(Date.now() < deadline, `back at ${await scrollY()} px, read at ${readAt} px`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    });

    test('in an alert storm the queue keeps the place the person reads and the incident picked', async () => {
      const page = await newPage({ as: 'admin' });
      await page.setViewportSize({ width: DESKTOP.width, height: 500 });
      await page.getByRole('combobox', { name: 'Sort' }).selectOption('newest');
      const before: number[] = [];
      for (let i = 0; i < 8; i++) before.push(await fireAlert(`StormBefore${i}`));
      const picked = page.locator(`[data-incident="${before.at(-1)}"]`);
      await picked.locator('.row-meta').click();
      // The person reads further down, the picked incident out of sight above.
      const reading = page.locator(`[data-incident="${before[0]}"]`);
      await reading.scrollIntoViewIfNeeded();
      for (let i = 0; i < 5; i++) {
        const arrived = await fireAlert(`StormDuring${i}`);
        await page.locator(`[data-incident="${arrived}"]`).waitFor();
      }
      await page.waitForTimeout(300);
      const inView = (row: typeof picked) =>
        row.evaluate((element) => {
          const box = element.getBoundingClientRect();
          return box.bottom > 0 && box.top < (globalThis as unknown as { innerHeight: number }).innerHeight;
        });
      assert.ok(await inView(reading), 'the row being read is still on the screen');
      assert.ok(!(await inView(picked)), 'the page was not pulled back to the picked incident');
      await picked.and(page.locator('.selected')).waitFor();
    });

    test('a live stream refused once (a proxy’s 502 while the server restarts) comes back and catches up', async () => {
      const page = await newPage();
      let answered = 0;
      await page.route(/\/api\/events$/, async (route) => {
        if (answered++ === 0)
          await route.fulfill({ status: 502, contentType: 'text/html', body: 'Bad Gateway' });
        else await route.continue();
      });
      await signIn(page, stack.url, 'admin', ADMIN_PASSWORD);
      await page.getByText('Reconnecting…', { exact: true }).waitFor();
      const missed = await fireAlert('MissedWhileRefused');
      await page.getByText('Live', { exact: true }).waitFor({ timeout: 10_000 });
      await page.locator(`[data-incident="${missed}"]`).waitFor({ timeout: 3000 });
    });

    test('every action on the incident page, each seen through the API', async () => {
      const id = await fireAlert('IncidentActions');
      const page = await newPage({ as: 'admin' });
      await page.goto(`${stack.url}/incidents/${id}`);
      await page.getByRole('heading', { name: /IncidentActions/ }).waitFor();
      // The alert with its labels, annotations and links.
      assert.equal(
        await page.getByRole('link', { name: /Runbook/ }).getAttribute('href'),
        'https://runbooks.example/disk-full',
      );
      assert.match(
        (await page.getByRole('link', { name: /Source graph/ }).getAttribute('href')) ?? '',
        /prometheus\.example/,
      );
      await page.getByText('instance', { exact: true }).first().waitFor();
      // Times in the server's zone (the browser's here is UTC), and the page says which.
      await page.getByText('Times are in Europe/Berlin.').waitFor();
      const triggeredAt = (await incident(id)).triggered_at as string;
      const berlin = new Intl.DateTimeFormat('en-CA', {
        timeZone: 'Europe/Berlin',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
      }).format(new Date(triggeredAt));
      assert.match(
        await page.locator('.facts').innerText(),
        new RegExp(`triggered \\d{4}-\\d\\d-\\d\\d ${berlin}`),
      );

      // Where the focus is after each action: never thrown back to the top of the page.
      const focusIsOn = (name: string) =>
        page.waitForFunction(
          (expected) => {
            const { activeElement: active } = (
              globalThis as unknown as {
                document: {
                  activeElement: { getAttribute(name: string): string | null; textContent: string };
                };
              }
            ).document;
            return (active.getAttribute('aria-label') ?? active.textContent.trim()) === expected;
          },
          name,
          { timeout: 3000 },
        );

      await page.getByRole('button', { name: 'Acknowledge', exact: true }).click();
      await page.getByText('acknowledged by admin').waitFor();
      assert.equal((await incident(id)).status, 'acknowledged');
      await focusIsOn('Actions');
      // Said to a screen reader too: a status region, not only the buttons that changed.
      await page.getByTestId('action-done').filter({ hasText: 'Done.' }).waitFor({ state: 'attached' });
      assert.equal(await page.getByTestId('action-done').getAttribute('role'), 'status');

      await page.getByRole('button', { name: 'Take back acknowledgement' }).click();
      await page.getByRole('button', { name: 'Acknowledge', exact: true }).waitFor();
      assert.equal((await incident(id)).status, 'triggered');

      await page.getByLabel(/Person to assign/).selectOption({ label: 'mia' });
      await page.getByRole('button', { name: 'Assign', exact: true }).click();
      await page.getByText('assigned to mia').waitFor();
      assert.equal((await incident(id)).assigned_to_id, stack.member.id);

      await page.getByLabel(/Snooze for/).fill('2x');
      await page.getByRole('button', { name: 'Snooze', exact: true }).click();
      await page
        .getByRole('alert')
        .filter({ hasText: /duration/ })
        .waitFor();
      await page.getByLabel(/Snooze for/).fill('2h');
      await page.getByRole('button', { name: 'Snooze', exact: true }).click();
      await page.getByRole('button', { name: 'Un-snooze', exact: true }).waitFor();
      await focusIsOn('Actions');
      const snoozed = await incident(id);
      const hours = (new Date(snoozed.snoozed_until).getTime() - Date.now()) / 3_600_000;
      assert.ok(hours > 1.9 && hours <= 2, `snoozed for ${hours} h`);
      await page.getByRole('button', { name: 'Un-snooze', exact: true }).click();
      await page.getByRole('button', { name: 'Snooze', exact: true }).waitFor();
      const woken = (await incident(id)).snoozed_until;
      assert.ok(
        woken === undefined || new Date(woken).getTime() <= Date.now(),
        `still snoozed until ${woken}`,
      );

      await page.getByLabel('Note').fill('Disk cleaned up on db-1');
      await page.getByRole('button', { name: 'Add note', exact: true }).click();
      await page.getByText('Disk cleaned up on db-1').waitFor();
      const timeline = (await stack.api('GET', `/api/incidents/${id}/timeline`)).body as {
        type: string;
        detail?: string;
      }[];
      assert.ok(
        timeline.some((event) => event.type === 'note' && event.detail === 'Disk cleaned up on db-1'),
      );
      await page.getByRole('button', { name: 'Delete note', exact: true }).click();
      await page.getByText('Disk cleaned up on db-1').waitFor({ state: 'detached' });
      const afterDelete = (await stack.api('GET', `/api/incidents/${id}/timeline`)).body as {
        type: string;
      }[];
      assert.ok(!afterDelete.some((event) => event.type === 'note'));

      await page.getByRole('button', { name: 'Resolve', exact: true }).click();
      await focusIsOn('Cancel');
      await page.keyboard.press('Enter');
      await focusIsOn('Resolve');
      // Escape backs out of the question too, the focus back on Resolve.
      await page.keyboard.press('Enter');
      await focusIsOn('Cancel');
      await page.keyboard.press('Escape');
      await focusIsOn('Resolve');
      assert.equal(await page.getByText('Resolving is final').count(), 0);
      await page.keyboard.press('Enter');
      await page.getByText('Resolving is final').waitFor();
      assert.equal((await incident(id)).status, 'triggered', 'nothing happens before the confirmation');
      await page.getByRole('button', { name: 'Yes, resolve' }).click();
      await page.getByRole('button', { name: 'Archive', exact: true }).waitFor();
      assert.equal((await incident(id)).status, 'resolved');

      await page.getByRole('button', { name: 'Archive', exact: true }).click();
      await page.getByRole('button', { name: 'Un-archive', exact: true }).waitFor();
      assert.ok((await incident(id)).archived_at);
      await page.getByRole('button', { name: 'Un-archive', exact: true }).click();
      await page.getByRole('button', { name: 'Archive', exact: true }).waitFor();
      assert.equal((await incident(id)).archived_at, undefined);
    });

    test('a server refusal is shown in place: resolving an incident someone else just resolved', async () => {
      const id = await fireAlert('AlreadyResolved');
      const page = await newPage({ as: 'admin' });
      await page.goto(`${stack.url}/incidents/${id}`);
      await page.getByRole('button', { name: 'Resolve', exact: true }).click();
      assert.equal(
        (await stack.api('POST', `/api/incidents/${id}/resolve`, undefined, stack.member.key)).status,
        200,
      );
      await page
        .getByRole('button', { name: 'Yes, resolve' })
        .click({ timeout: 2000 })
        .catch(() => {});
      // Either the live update already turned the page into "resolved", or the server's 409 is shown.
      await page
        .getByRole('alert')
        .filter({ hasText: 'incident is resolved' })
        .or(page.getByRole('button', { name: 'Archive', exact: true }))
        .first()
        .waitFor();
    });

    test('a second person on the incident sees the acknowledgement within two seconds', async () => {
      const id = await fireAlert('SeenLive');
      const watcher = await newPage({ as: 'mia', url: stack.urls.at(-1) });
      await watcher.goto(`${stack.urls.at(-1)}/incidents/${id}`);
      await watcher.getByText('Live', { exact: true }).waitFor();
      const actor = await newPage({ as: 'admin' });
      await actor.goto(`${stack.url}/incidents/${id}`);
      await actor.getByRole('button', { name: 'Acknowledge', exact: true }).click();
      const clicked = Date.now();
      await watcher.getByText('acknowledged by admin').waitFor({ timeout: 2000 });
      assert.ok(Date.now() - clicked < 2000);

      // Assigned elsewhere: the watcher's picker (mia's, showing herself) shows who has it now.
      const users = (await stack.api('GET', '/api/users')).body as { id: number; username: string }[];
      const admin = users.find((user) => user.username === 'admin')!;
      await stack.api('POST', `/api/incidents/${id}/assign`, { user_id: admin.id });
      await watcher.getByText('assigned to admin').waitFor();
      const picker = watcher.getByRole('combobox', { name: `Person to assign #${id} to` });
      assert.equal(await picker.inputValue(), String(admin.id));
    });

    test('schedule a week, then replace a day someone else holds after confirming', async () => {
      const page = await newPage({ as: 'admin' });
      await page.goto(`${stack.url}/schedule?month=2027-03`);
      await page.getByRole('heading', { name: 'March 2027' }).waitFor();
      await page.getByRole('button', { name: 'Select the week of 2027-03-08' }).click();
      await page.getByRole('combobox', { name: 'Person on call' }).selectOption({ label: 'mia' });
      await page.getByRole('button', { name: 'Assign days' }).click();
      await page.locator('[data-date="2027-03-14"]').getByText('mia').waitFor();
      const week = (await stack.api('GET', '/api/schedule?from=2027-03-08&to=2027-03-14')).body as {
        username: string;
      }[];
      assert.deepEqual(
        week.map((entry) => entry.username),
        Array(7).fill('mia'),
      );

      await page.getByRole('checkbox', { name: 'Select 2027-03-10' }).check();
      await page.getByRole('combobox', { name: 'Person on call' }).selectOption({ label: 'admin' });
      await page.getByRole('button', { name: 'Assign days' }).click();
      const prompt = page.getByRole('alert').filter({ hasText: 'someone on call: 2027-03-10 (mia)' });
      await prompt.waitFor();
      assert.equal(
        await prompt.locator('p').textContent(),
        'This day already has someone on call: 2027-03-10 (mia). Replace them?',
        'the prompt asks the person, not an API client ("replace": true)',
      );
      let day = (await stack.api('GET', '/api/schedule?from=2027-03-10&to=2027-03-10')).body;
      assert.equal(day[0].username, 'mia', 'nothing changes before the confirmation');
      await page.getByRole('button', { name: 'Replace them' }).click();
      await page.locator('[data-date="2027-03-10"]').getByText('admin').waitFor();
      day = (await stack.api('GET', '/api/schedule?from=2027-03-10&to=2027-03-10')).body;
      assert.equal(day[0].username, 'admin');

      await page.getByRole('button', { name: 'Remove admin on 2027-03-10' }).click();
      await page.locator('[data-date="2027-03-10"]').getByText('admin').waitFor({ state: 'detached' });
      assert.deepEqual((await stack.api('GET', '/api/schedule?from=2027-03-10&to=2027-03-10')).body, []);
    });

    test('on a phone, where the calendar has no room for week buttons, an admin picks a week from a list', async () => {
      const page = await newPage({ phone: true, as: 'admin' });
      await page.goto(`${stack.url}/schedule?month=2027-05`);
      await page.getByRole('heading', { name: 'May 2027' }).waitFor();
      assert.equal(
        await page.getByRole('button', { name: 'Select the week of 2027-05-10' }).isVisible(),
        false,
      );
      await page
        .getByRole('combobox', { name: 'Select a week' })
        .selectOption({ label: '2027-05-10 to 2027-05-16' });
      await page.getByText('7 days selected: 2027-05-10, 2027-05-11').waitFor();
      await page.getByRole('combobox', { name: 'Person on call' }).selectOption({ label: 'mia' });
      await page.getByRole('button', { name: 'Assign days' }).click();
      await page.locator('[data-date="2027-05-16"]').getByText('mia').waitFor();
      const week = (await stack.api('GET', '/api/schedule?from=2027-05-09&to=2027-05-17')).body as {
        date: string;
        username: string;
      }[];
      assert.deepEqual(
        week.map((entry) => entry.date),
        ['2027-05-10', '2027-05-11', '2027-05-12', '2027-05-13', '2027-05-14', '2027-05-15', '2027-05-16'],
      );
    });

    test('an admin adds a person, gives a first password and an API key shown once, then revokes it', async () => {
      const page = await newPage({ as: 'admin' });
      await page.goto(`${stack.url}/people`);
      const form = page.getByRole('form', { name: 'Add a person' });
      await form.getByLabel('Username').fill('noor');
      await form.getByLabel('Email').fill('noor@example.com');
      await form.getByRole('button', { name: 'Add person' }).click();
      const card = page.locator('li.card').filter({ hasText: 'noor@example.com' });
      await card.waitFor();
      const people = (await stack.api('GET', '/api/users')).body as {
        id: number;
        username: string;
        role: string;
      }[];
      const noor = people.find((person) => person.username === 'noor');
      assert.equal(noor?.role, 'member');

      await card.getByLabel('First password for noor').fill('noor-first-password-1');
      await card.getByRole('button', { name: 'Set password' }).click();
      await card.getByText('Password of noor set.').waitFor();
      const signIn = await fetch(`${stack.url}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'noor', password: 'noor-first-password-1' }),
      });
      assert.equal(signIn.status, 200, 'noor signs in with the first password');

      await card.getByText('API keys of noor').click();
      await card.getByLabel('Key name').fill('noor-laptop');
      await card.getByRole('button', { name: 'Create API key' }).click();
      const shown = await card.locator('code.key').innerText();
      assert.match(shown, /^[0-9a-f]{64}$/);
      assert.equal((await stack.api('GET', '/api/me', undefined, shown)).body.user.username, 'noor');
      page.once('dialog', (dialog) => void dialog.accept());
      await card.getByRole('button', { name: 'Revoke noor-laptop' }).click();
      await card.getByRole('button', { name: 'Revoke noor-laptop' }).waitFor({ state: 'detached' });
      assert.equal(
        (await stack.api('GET', '/api/me', undefined, shown)).status,
        401,
        'the revoked key stops working',
      );
    });

    test(
      'on a slow network, a second tap on Create API key makes no second key',
      { skip: kind !== 'pglite' },
      async () => {
        const page = await newPage({ phone: true, as: 'mia' });
        await page.goto(`${stack.url}/me`);
        await page.route('**/api/users/*/api-keys', async (route) => {
          if (route.request().method() === 'POST') await new Promise((resolve) => setTimeout(resolve, 1500));
          await route.continue();
        });
        await page.getByLabel('Key name').fill('mia-phone');
        const create = page.getByRole('button', { name: 'Create API key' });
        await create.tap();
        // Nothing seems to happen yet: the person taps again.
        await create.tap({ force: true });
        await page.getByTestId('new-key').waitFor();
        await page.waitForTimeout(2000);
        const keys = (await stack.api('GET', `/api/users/${stack.member.id}/api-keys`)).body as {
          name: string;
        }[];
        assert.equal(keys.filter((key) => key.name === 'mia-phone').length, 1, JSON.stringify(keys));
      },
    );

    test('the audit log shows its newest entries and reaches the oldest with Older entries', async () => {
      const created = await stack.api('POST', '/api/users', {
        username: 'auditee',
        email: 'auditee@example.com',
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      for (let change = 0; change < 110; change++) {
        const role = change % 2 === 0 ? 'admin' : 'member';
        const answer = await stack.api('PUT', `/api/users/${created.body.id}/role`, { role });
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
      }
      const everything = (await stack.api('GET', '/api/audit?limit=1000')).body as unknown[];
      assert.ok(everything.length > 110, `${everything.length} entries`);

      const page = await newPage({ as: 'admin' });
      await page.goto(`${stack.url}/people`);
      const rows = page.locator('table.audit tbody tr');
      await rows.nth(99).waitFor();
      assert.equal(await rows.count(), 100, 'the first page is the newest hundred');
      const older = page.getByRole('button', { name: 'Older entries' });
      const whole = page.getByText('That is the whole audit log.');
      while (!(await whole.isVisible())) {
        const shown = await rows.count();
        await older.click();
        const deadline = Date.now() + 10_000;
        while ((await rows.count()) <= shown && !(await whole.isVisible())) {
          assert.ok(Date.now() < deadline, `no older entries after ${shown} rows`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
      // Signing in just now added entries: at least everything counted before is listed, once each.
      const listed = await rows.count();
      assert.ok(listed >= everything.length, `${listed} rows of ${everything.length} entries`);
      const firstAction = await rows.last().locator('td').nth(2).innerText();
      assert.match(firstAction, /^bootstrap/, 'the oldest entry is the bootstrap');
      assert.equal(await page.getByRole('button', { name: 'Older entries' }).count(), 0);
    });

    test('a member sees no admin pages, and the server refuses them anyway', async () => {
      const page = await newPage({ as: 'mia' });
      assert.equal(
        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'People' }).count(),
        0,
      );
      await page.goto(`${stack.url}/people`);
      await page.getByRole('heading', { name: 'Admins only' }).waitFor();
      const refused = await page.evaluate(async () => {
        const csrf =
          (globalThis as unknown as { document: { cookie: string } }).document.cookie.match(
            /terdut_csrf=([^;]+)/,
          )?.[1] ?? '';
        const audit = await fetch('/api/audit');
        const create = await fetch('/api/users', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-csrf-token': decodeURIComponent(csrf) },
          body: JSON.stringify({ username: 'sneaky', email: 'sneaky@example.com', role: 'admin' }),
        });
        return [audit.status, create.status];
      });
      assert.deepEqual(refused, [403, 403]);
      await page.goto(`${stack.url}/schedule`);
      assert.equal(await page.getByRole('button', { name: 'Assign days' }).count(), 0);
    });

    test('a page of another origin cannot act with the signed-in session', async () => {
      const id = await fireAlert('ForeignOrigin');
      const page = await newPage({ as: 'admin' });
      // Another site (another port on the same host: same-site, so even the
      // SameSite=Lax cookie goes along) posting a form and a fetch to terdut.
      const evil: Server = createServer((_request, response) => {
        response.setHeader('content-type', 'text/html');
        response.end(`<!doctype html><title>evil</title>
          <form id="f" method="post" action="${stack.url}/api/incidents/${id}/acknowledge"></form>
          <script>
            fetch(${JSON.stringify(`${stack.url}/api/incidents/${id}/resolve`)}, { method: 'POST', credentials: 'include', mode: 'no-cors' })
              .finally(() => document.getElementById('f').submit());
          </script>`);
      });
      await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
      try {
        await page.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
        await page.waitForURL(`${stack.url}/api/incidents/${id}/acknowledge`);
        assert.match(await page.content(), /cross-site request refused/);
        const after = await incident(id);
        assert.equal(after.status, 'triggered', 'neither the fetch nor the form changed the incident');
      } finally {
        evil.close();
      }
    });

    test('on a phone, the incident link opens a page where Acknowledge is one tap', async () => {
      const id = await fireAlert('PhoneTap');
      const page = await newPage({ phone: true, as: 'admin' });
      await page.goto(`${stack.url}/incidents/${id}`);
      const acknowledge = page.getByRole('button', { name: 'Acknowledge', exact: true });
      const box = (await acknowledge.boundingBox())!;
      await acknowledge.tap();
      await page.getByText('acknowledged by admin').waitFor();
      // A nervous double tap: the second lands where Acknowledge was, and must not take it back.
      await page.touchscreen.tap(box.x + 20, box.y + box.height / 2);
      await page.waitForTimeout(500);
      assert.equal((await incident(id)).status, 'acknowledged');
      await assertNoHorizontalScroll(page, 'the incident page');
    });

    test('on a phone, a refused note is shown where the person is looking, and the text is kept', async () => {
      const id = await fireAlert('PhoneRefusal');
      const page = await newPage({ phone: true, as: 'admin' });
      await page.goto(`${stack.url}/incidents/${id}`);
      const tooLong = 'x'.repeat(20_001);
      await page.getByRole('textbox', { name: 'Note' }).fill(tooLong);
      await page.getByRole('button', { name: 'Add note', exact: true }).tap();
      const refusal = page.getByRole('alert').filter({ hasText: 'content' });
      await refusal.waitFor();
      const inView = await refusal.evaluate((note) => {
        const box = note.getBoundingClientRect();
        return box.top >= 0 && box.bottom <= (globalThis as unknown as { innerHeight: number }).innerHeight;
      });
      assert.ok(inView, 'the refusal is within the screen');
      assert.equal(await page.getByRole('textbox', { name: 'Note' }).inputValue(), tooLong);
    });

    test('words typed while a note is being sent stay in the box once it is saved', async () => {
      const id = await fireAlert('TypedWhileSending');
      const page = await newPage({ phone: true, as: 'admin' });
      await page.goto(`${stack.url}/incidents/${id}`);
      // The note's answer comes slowly, as on a phone's network.
      let release!: () => void;
      const answered = new Promise<void>((resolve) => (release = resolve));
      await page.route(`**/api/incidents/${id}/notes`, async (route) => {
        await answered;
        await route.continue();
      });
      const box = page.getByRole('textbox', { name: 'Note' });
      await box.fill('Failed over to db-2.');
      await page.getByRole('button', { name: 'Add note', exact: true }).tap();
      await box.press('End');
      await page.keyboard.type(' Next: check the replica lag.');
      release();
      await page.locator('.timeline').getByText('Failed over to db-2.', { exact: true }).waitFor();
      assert.equal(await box.inputValue(), 'Next: check the replica lag.');
      const notes = (
        (await stack.api('GET', `/api/incidents/${id}/timeline`)).body as {
          type: string;
          detail?: string;
        }[]
      ).filter((event) => event.type === 'note');
      assert.deepEqual(
        notes.map((note) => note.detail),
        ['Failed over to db-2.'],
      );
    });

    test(
      'on a phone, an action with no answer (network down, a proxy’s 502) says what to do, in words',
      {
        skip: kind !== 'pglite',
      },
      async () => {
        const id = await fireAlert('NoAnswer');
        const page = await newPage({ phone: true, as: 'admin' });
        await page.goto(`${stack.url}/incidents/${id}`);
        const acknowledge = page.getByRole('button', { name: 'Acknowledge', exact: true });
        await acknowledge.waitFor();

        await page.route('**/acknowledge', (route) => route.abort('connectionrefused'));
        await acknowledge.tap();
        const refusal = page.getByRole('alert').filter({ hasText: /terdut/ });
        await refusal.waitFor();
        const offline = await refusal.innerText();
        assert.match(offline, /no answer from terdut/i);
        assert.match(offline, /check your connection/i);
        assert.doesNotMatch(offline, /POST|\/api\//, 'no request line');

        await page.unroute('**/acknowledge');
        await page.route('**/acknowledge', (route) =>
          route.fulfill({
            status: 502,
            contentType: 'text/html',
            body: '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>',
          }),
        );
        await acknowledge.tap();
        await page.getByRole('alert').filter({ hasText: /502/ }).waitFor();
        const proxied = await page.getByRole('alert').filter({ hasText: /502/ }).innerText();
        assert.doesNotMatch(proxied, /<html|<\/?\w+>/, 'no HTML');
        assert.match(proxied, /try again/i);
        assert.equal((await incident(id)).status, 'triggered');
      },
    );

    test('when the session ends, the sign-in form says why, and the note being written is there again after', async () => {
      const id = await fireAlert('SessionEndsMidNote');
      const page = await newPage({ phone: true, as: 'mia' });
      await page.goto(`${stack.url}/incidents/${id}`);
      const note = 'Restarted the primary; watching replication lag.';
      await page.getByRole('textbox', { name: 'Note' }).fill(note);
      // An admin resets mia's password (to the same one): every session of hers ends.
      const users = (await stack.api('GET', '/api/users')).body as { id: number; username: string }[];
      const mia = users.find((user) => user.username === 'mia')!;
      const reset = await stack.api('PUT', `/api/users/${mia.id}/password`, { password: MEMBER_PASSWORD });
      assert.equal(reset.status, 204);
      // The page learns it at its next request: a refresh of its own, or this note being added.
      await page
        .getByRole('button', { name: 'Add note', exact: true })
        .tap({ timeout: 3000 })
        .catch(() => {});
      await page.getByRole('status').filter({ hasText: 'Your session ended' }).waitFor();
      await page.getByLabel('Username', { exact: true }).fill('mia');
      await page.getByLabel('Password', { exact: true }).fill(MEMBER_PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('textbox', { name: 'Note' }).waitFor();
      assert.equal(page.url(), `${stack.url}/incidents/${id}`);
      assert.equal(await page.getByRole('textbox', { name: 'Note' }).inputValue(), note);
      // Leaving the page and coming back in this tab (as SSO does, through the identity provider) keeps it too.
      await page.reload();
      await page.getByRole('textbox', { name: 'Note' }).waitFor();
      assert.equal(await page.getByRole('textbox', { name: 'Note' }).inputValue(), note);
      // Signing out forgets it: the next person at this browser does not see it.
      await page.evaluate(() =>
        (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0),
      );
      await page.getByRole('button', { name: 'Sign out' }).tap();
      await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
      assert.equal(
        await page.evaluate(
          () => (globalThis as unknown as { sessionStorage: Storage }).sessionStorage.length,
        ),
        0,
      );
    });

    test(
      'Sign out with no answer from the server says the person is still signed in',
      { skip: kind !== 'pglite' },
      async () => {
        const page = await newPage({ phone: true, as: 'mia' });
        await page.route('**/auth/logout', (route) => route.abort('connectionrefused'));
        await page.getByRole('button', { name: 'Sign out' }).tap();
        await page
          .getByRole('alert')
          .filter({ hasText: /still signed in/ })
          .waitFor();
        assert.equal(await page.getByRole('button', { name: 'Sign in', exact: true }).count(), 0);
        // It is true: the server still knows the session.
        await page.reload();
        await page.getByRole('heading', { name: 'Incidents' }).waitFor();
        await page.unroute('**/auth/logout');
        await page.getByRole('button', { name: 'Sign out' }).tap();
        await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
        await page.reload();
        await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
      },
    );

    test('the sign-in page shows no words from the link it was opened with', async () => {
      const context = await browser.newContext({ viewport: DESKTOP });
      contexts.push(context);
      const page = await context.newPage();
      await page.goto(
        `${stack.url}/?error=${encodeURIComponent('Call the help desk and give them your password')}`,
      );
      await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
      assert.equal(await page.getByText('help desk').count(), 0);
    });

    test('every page: no serious accessibility problem, no sideways scrolling on a phone, screenshots', async () => {
      const id = await fireAlert('Screenshots');
      await stack.api('POST', `/api/incidents/${id}/notes`, { content: 'Looking into it.' });
      await stack.api('POST', '/api/schedule', {
        user_id: stack.member.id,
        dates: [new Date().toISOString().slice(0, 10)],
      });
      const pages: [string, string][] = [
        ['queue', '/'],
        ['incident', `/incidents/${id}`],
        ['alerts', '/alerts'],
        ['schedule', '/schedule'],
        ['stats', '/stats'],
        ['people', '/people'],
        ['me', '/me'],
      ];
      // Light on desktop and phone, and dark (the system setting) on desktop: contrast is checked in both.
      for (const [phone, dark] of [
        [false, false],
        [true, false],
        [false, true],
      ] as const) {
        const layout = `${phone ? 'phone' : 'desktop'}${dark ? '-dark' : ''}`;
        const signedOut = await newPage({ phone, dark });
        await signedOut.goto(stack.url + '/');
        await signedOut.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
        await assertAccessible(signedOut, `the sign-in page (${layout})`);
        if (phone) await assertNoHorizontalScroll(signedOut, 'the sign-in page');
        await screenshot(signedOut, `${kind}-sign-in-${layout}`);

        const page = await newPage({ phone, dark, as: 'admin' });
        for (const [name, path] of pages) {
          await page.goto(stack.url + path);
          await page.locator('main h1').first().waitFor();
          await page.waitForLoadState('networkidle').catch(() => {});
          await assertAccessible(page, `${path} (${layout})`);
          if (phone) await assertNoHorizontalScroll(page, path);
          await screenshot(page, `${kind}-${name}-${layout}`);
        }
      }
    });
  });
}
