/**
 * The incident page as someone reading an incident of many alerts of one name
 * meets it, in a real browser (Chromium, a phone) against a real
 * terdut-server on PGlite (the page reads the same API on PostgreSQL; the
 * API's alerts-as-they-were-in-the-incident is tested on both databases in
 * packages/server/src/routes/incidents/past-occurrences.test.ts). Each
 * timeline event names its alert by the labels that tell it apart from the
 * incident's other alerts, and an alert that resolved says when and after
 * how long.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext } from 'playwright-core';
import { firingAlert, notification, resolvedAlert } from '../support/alertmanager-payloads.ts';
import {
  ADMIN_PASSWORD,
  assertAccessible,
  assertNoHorizontalScroll,
  launchChromium,
  PHONE,
  screenshot,
  signIn,
  startWebStack,
  type WebStack,
} from './support.ts';

describe('the incident page names each alert [pglite]', () => {
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

  test('two HighCPU alerts on two instances: the timeline says which; the one that resolved says when and for how long it fired', async () => {
    // 11:00 in Berlin (the stack's TERDUT_TIMEZONE); db-3 resolves twelve minutes later.
    const startsAt = '2026-12-07T10:00:00Z';
    const endsAt = '2026-12-07T10:12:00Z';
    const groupKey = '{}:{alertname="HighCPU"}';
    const cpu = (instance: string) => ({
      name: 'HighCPU',
      severity: 'warning',
      labels: { instance, job: 'node' },
      annotations: { summary: `CPU busy on ${instance}` },
      startsAt,
    });
    const send = async (alerts: ReturnType<typeof firingAlert>[]) => {
      const answer = await stack.api('POST', '/api/webhook/alertmanager', notification({ groupKey, alerts }));
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      return answer.body.incident_id as number;
    };
    const id = await send([firingAlert(cpu('db-3:9100')), firingAlert(cpu('db-4:9100'))]);
    await send([resolvedAlert({ ...cpu('db-3:9100'), endsAt }), firingAlert(cpu('db-4:9100'))]);
    const timeline = (await stack.api('GET', `/api/incidents/${id}/timeline`)).body as {
      type: string;
      detail?: string;
    }[];
    // What the page has to tell apart: the server names both alerts by their name alone.
    assert.deepEqual(
      timeline.filter((event) => event.type.startsWith('alert_')).map((event) => [event.type, event.detail]),
      [
        ['alert_added', 'HighCPU'],
        ['alert_added', 'HighCPU'],
        ['alert_resolved', 'HighCPU'],
      ],
    );

    const context = await browser.newContext({
      viewport: PHONE,
      isMobile: true,
      hasTouch: true,
      deviceScaleFactor: 1,
    });
    contexts.push(context);
    const page = await context.newPage();
    await signIn(page, stack.url, 'admin', ADMIN_PASSWORD);
    await page.goto(`${stack.url}/incidents/${id}`);
    await page.locator('.alert-card').first().waitFor();

    // Only the label that differs (instance), not those every alert has (alertname, job, severity).
    const events = await page.locator('.timeline .event').allInnerTexts();
    const about = (words: string) =>
      events
        .filter((text) => text.includes(words))
        .map((text) => text.slice(text.indexOf(words)))
        .sort();
    assert.deepEqual(about('alert added'), [
      'alert added — HighCPU (instance=db-3:9100)',
      'alert added — HighCPU (instance=db-4:9100)',
    ]);
    assert.deepEqual(about('alert resolved'), ['alert resolved — HighCPU (instance=db-3:9100)']);

    // The end on the same day as the start: its time alone, then how long the alert fired.
    const resolved = page.locator('.alert-card').filter({ hasText: 'db-3:9100' });
    const firing = page.locator('.alert-card').filter({ hasText: 'db-4:9100' });
    assert.match(await resolved.innerText(), /started 2026-12-07 11:00\s+resolved 11:12 \(fired 12m\)/);
    assert.match(await firing.innerText(), /since 2026-12-07 11:00/);
    assert.doesNotMatch(await firing.innerText(), /resolved|fired/);

    await assertAccessible(page, 'the incident page with a resolved alert');
    await assertNoHorizontalScroll(page, 'the incident page with a resolved alert');
    await screenshot(page, 'pglite-incident-alerts-phone');
  });
});
