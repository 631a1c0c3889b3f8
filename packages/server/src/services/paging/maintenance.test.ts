/**
 * Maintenance windows hold paging for matching incidents, and at the end
 * whatever is still open and unacknowledged pages from step 1. Pages go to a
 * real webhook receiver on loopback; time moves by hand.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  forEachDatabase,
  ManualClock,
  startTestApp,
  testConfig,
  type TestApp,
  type TestUser,
  openIncident,
  startWebhookReceiver,
  type WebhookReceiver,
  onCallWith,
} from '@terdut/test-support';

const MINUTE = 60_000;

forEachDatabase('maintenance windows', (database) => {
  let server: TestApp;
  let receiver: WebhookReceiver;
  let admin: TestUser;
  let gina: TestUser;
  const clock = new ManualClock('2026-12-03T22:00:00Z');

  before(async () => {
    receiver = await startWebhookReceiver();
    server = await startTestApp(database(), { clock, config: testConfig() });
    admin = await server.createUser('mw-admin', 'admin');
    gina = await server.createUser('gina');
    await onCallWith(server, admin, gina, ['2026-12-03'], { kind: 'webhook', target: receiver.url });
  });
  after(async () => {
    await server.close();
    await receiver.close();
  });

  const pass = () => server.app.services.paging.runOnce();
  const open = async (group: string, labels: Record<string, string>) =>
    (await openIncident(server, admin, { groupKey: group, name: group, labels })).id;
  const pages = (id: number) => receiver.received.filter((hook) => hook.body?.incident?.id === id).length;

  test('a matching incident pages nobody during the window, a running escalation waits, and both page at its end', async () => {
    const running = await open('mw-running', { team: 'db' });
    await pass();
    assert.equal(pages(running), 1);

    const created = await server.request({
      method: 'POST',
      url: '/api/maintenance-windows',
      as: admin,
      payload: {
        starts_at: '2026-12-03T22:01:00Z',
        ends_at: '2026-12-03T22:31:00Z',
        matchers: ['team="db"'],
        reason: 'database upgrade',
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    clock.advance(2 * MINUTE);

    const during = await open('mw-during', { team: 'db' });
    const other = await open('mw-other', { team: 'web' });
    await pass();
    assert.equal(pages(during), 0, 'recorded, not paged');
    assert.equal(pages(other), 1, 'other incidents page as usual');
    const held = (
      await server.request({ method: 'GET', url: `/api/incidents/${during}/timeline`, as: admin })
    ).body;
    assert.match(
      held.find((event: { type: string }) => event.type === 'paging_held').detail,
      /maintenance window \d+ until 2026-12-03T22:31:00.000Z: database upgrade/,
    );

    // The running one's step 2 (admins, due at 22:10) waits too.
    clock.advance(10 * MINUTE);
    await pass();
    const runningTimeline = (
      await server.request({ method: 'GET', url: `/api/incidents/${running}/timeline`, as: admin })
    ).body;
    assert.ok(runningTimeline.some((event: { type: string }) => event.type === 'paging_held'));
    assert.ok(
      !runningTimeline.some((event: { type: string; detail?: string }) => /step 2/.test(event.detail ?? '')),
    );

    clock.set('2026-12-03T22:31:01Z');
    await pass();
    assert.equal(pages(during), 1, 'paged at the end of the window');
    assert.equal(pages(running), 2, 'the running escalation starts again at step 1');
  });

  test("a window for other labels leaves a running escalation's next step at its time", async () => {
    const running = await open('mw-unrelated', { team: 'web' });
    await pass();
    assert.equal(pages(running), 1);
    const stepTwo = async () =>
      (
        await server.request({ method: 'GET', url: `/api/incidents/${running}/timeline`, as: admin })
      ).body.filter(
        (event: { type: string; detail?: string }) =>
          event.type === 'escalated' && /^step 2/.test(event.detail ?? ''),
      ).length;

    clock.advance(MINUTE);
    const now = clock.now().getTime();
    const created = await server.request({
      method: 'POST',
      url: '/api/maintenance-windows',
      as: admin,
      payload: {
        starts_at: new Date(now).toISOString(),
        ends_at: new Date(now + 30 * MINUTE).toISOString(),
        matchers: ['team="cache"'],
        reason: 'cache upgrade',
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await pass();
    assert.equal(
      await stepTwo(),
      0,
      'step 2 (admins) is due 10 minutes after step 1, not when a window opens',
    );

    clock.advance(9 * MINUTE + 1000);
    await pass();
    assert.equal(await stepTwo(), 1);
    await server.request({ method: 'POST', url: `/api/incidents/${running}/resolve`, as: admin });
    await server.request({ method: 'DELETE', url: `/api/maintenance-windows/${created.body.id}`, as: admin });
  });

  test('windows are admin-only to change, readable by everyone, validated, and audited', async () => {
    const byMember = await server.request({
      method: 'POST',
      url: '/api/maintenance-windows',
      as: gina,
      payload: { starts_at: '2026-12-04T00:00:00Z', ends_at: '2026-12-04T01:00:00Z', reason: 'x' },
    });
    assert.equal(byMember.status, 403);
    const cases: [object, RegExp][] = [
      [
        { starts_at: 'tonight', ends_at: '2026-12-04T01:00:00Z', reason: 'x' },
        /"starts_at" must be an RFC 3339 time/,
      ],
      // Not 2 March, and not whatever zone the server runs in.
      [
        { starts_at: '2026-02-30T00:00:00Z', ends_at: '2026-03-04T01:00:00Z', reason: 'x' },
        /"starts_at" must be an RFC 3339 time/,
      ],
      [
        { starts_at: '2026-12-04T00:00:00Z', ends_at: '2026-12-04T01:00:00', reason: 'x' },
        /"ends_at" must be an RFC 3339 time with a zone/,
      ],
      [
        { starts_at: '2026-12-04T02:00:00Z', ends_at: '2026-12-04T01:00:00Z', reason: 'x' },
        /"ends_at" must be after/,
      ],
      [{ starts_at: '2026-12-04T00:00:00Z', ends_at: '2026-12-04T01:00:00Z', reason: ' ' }, /"reason"/],
      [
        {
          starts_at: '2026-12-04T00:00:00Z',
          ends_at: '2026-12-04T01:00:00Z',
          reason: 'x',
          matchers: ['=~x'],
        },
        /"matchers.0"/,
      ],
    ];
    for (const [payload, error] of cases) {
      const response = await server.request({
        method: 'POST',
        url: '/api/maintenance-windows',
        as: admin,
        payload,
      });
      assert.equal(response.status, 400, JSON.stringify(payload));
      assert.match(response.body.error, error);
    }
    const created = await server.request({
      method: 'POST',
      url: '/api/maintenance-windows',
      as: admin,
      payload: { starts_at: '2026-12-04T00:00:00Z', ends_at: '2026-12-04T01:00:00Z', reason: 'network work' },
    });
    const list = await server.request({ method: 'GET', url: '/api/maintenance-windows', as: gina });
    assert.ok(list.body.some((window: { id: number }) => window.id === created.body.id));
    const deleted = await server.request({
      method: 'DELETE',
      url: `/api/maintenance-windows/${created.body.id}`,
      as: admin,
    });
    assert.equal(deleted.status, 204);
    const audit = (await server.request({ method: 'GET', url: '/api/audit', as: admin })).body;
    assert.ok(audit.some((entry: { action: string }) => entry.action === 'maintenance_window.deleted'));
  });
});
