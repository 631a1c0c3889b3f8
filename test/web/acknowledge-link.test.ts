/**
 * The email Acknowledge link as the person on call meets it: the page comes
 * through a real SMTP server in-process (smtp-server), and its link is
 * opened in a real browser (Chromium) on a phone, not signed in, against a
 * real terdut-server process on PGlite (the server side is tested on both
 * databases in packages/server/src/services/paging/email.test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.ts';
import { firingAlert, notification } from '../support/alertmanager-payloads.ts';
import { waitUntil } from '../peers/child-processes.ts';
import {
  assertAccessible,
  assertNoHorizontalScroll,
  launchChromium,
  PHONE,
  screenshot,
  startWebStack,
  type WebStack,
} from './support.ts';

describe('the email Acknowledge link on a phone [pglite]', () => {
  let browser: Browser;
  let smtp: SmtpSink;
  let stack: WebStack;

  before(async () => {
    browser = await launchChromium();
    smtp = await startSmtpSink({ user: 'terdut', password: 'smtp-pass' });
    stack = await startWebStack('pglite', {
      publicUrl: true,
      env: { TERDUT_SMTP_URL: smtp.url, TERDUT_SMTP_FROM: 'terdut <pager@example.com>' },
    });
  });
  after(async () => {
    await stack?.close();
    await smtp?.close();
    await browser?.close();
  });

  test('mia opens the link on her phone: a page that fits the screen asks, and its button acknowledges', async () => {
    // The stack's schedule runs on Europe/Berlin time (TERDUT_TIMEZONE).
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin' }).format(new Date());
    assert.equal(
      (await stack.api('POST', '/api/schedule', { user_id: stack.member.id, dates: [today] })).status,
      201,
    );
    const method = await stack.api(
      'POST',
      `/api/users/${stack.member.id}/contact-methods`,
      { kind: 'email', target: 'mia@example.com' },
      stack.member.key,
    );
    assert.equal(method.status, 201, JSON.stringify(method.body));
    const opened = await stack.api(
      'POST',
      '/api/webhook/alertmanager',
      notification({
        alerts: [
          firingAlert({ name: 'QueueStuck', annotations: { summary: 'orders queue is not draining' } }),
        ],
      }),
    );
    assert.equal(opened.status, 200, JSON.stringify(opened.body));
    const id = opened.body.incident_id as number;
    await waitUntil(async () => smtp.messages.length > 0, {
      timeoutMs: 30_000,
      intervalMs: 100,
      describe: () => 'no email reached the SMTP server',
    });
    const link = /Acknowledge: (\S+)/.exec(smtp.messages[0]!.text ?? '')?.[1];
    assert.ok(link?.startsWith(`${stack.url}/paging/acknowledge?token=`), smtp.messages[0]!.text);

    const context = await browser.newContext({
      viewport: PHONE,
      isMobile: true,
      hasTouch: true,
      deviceScaleFactor: 1,
    });
    try {
      const page = await context.newPage();
      await page.goto(link!);
      await page.getByRole('heading', { name: 'Acknowledge this incident?', level: 1 }).waitFor();
      // Laid out for the phone's width, not a desktop page shrunk to a third of it.
      assert.equal(
        await page.evaluate(() => (globalThis as unknown as { innerWidth: number }).innerWidth),
        PHONE.width,
      );
      await assertNoHorizontalScroll(page, 'the acknowledge page');
      await assertAccessible(page, 'the acknowledge page');
      await screenshot(page, 'acknowledge-link-phone');
      // A button a thumb hits: 48 px tall at least, and its style was allowed by the page's policy.
      const button = await page.getByRole('button', { name: 'Acknowledge' }).boundingBox();
      assert.ok(button && button.height >= 48, `the Acknowledge button is ${button?.height} px tall`);
      assert.equal((await stack.api('GET', `/api/incidents/${id}`)).body.status, 'triggered');

      await page.getByRole('button', { name: 'Acknowledge' }).tap();
      await page.getByRole('heading', { name: 'Acknowledged', level: 1 }).waitFor();
      const incident = (await stack.api('GET', `/api/incidents/${id}`)).body;
      assert.equal(incident.status, 'acknowledged');
      assert.equal(incident.acknowledged_by, 'mia');
    } finally {
      await context.close();
    }
  });
});
