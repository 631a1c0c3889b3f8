/**
 * Storm folding: more than TERDUT_PAGING_STORM_LIMIT incidents a minute for
 * one person become one summary page at the end of the minute, listing the
 * ones still open: never dropped silently, never a buzz per incident.
 * Pages go to a real webhook receiver on loopback; time moves by hand.
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
  firingAlert,
  notification,
  startWebhookReceiver,
  type WebhookReceiver,
  onCallWith,
} from '@terdut/test-support';

forEachDatabase('storm folding', (database) => {
  let server: TestApp;
  let receiver: WebhookReceiver;
  let admin: TestUser;
  let frank: TestUser;
  const clock = new ManualClock('2026-12-03T09:00:10Z');

  before(async () => {
    receiver = await startWebhookReceiver();
    server = await startTestApp(database(), {
      clock,
      config: testConfig({ TERDUT_PAGING_STORM_LIMIT: '3', TERDUT_PUBLIC_URL: 'https://terdut.example.com' }),
    });
    admin = await server.createUser('storm-admin', 'admin');
    frank = await server.createUser('frank');
    await onCallWith(server, admin, frank, ['2026-12-03'], { kind: 'webhook', target: receiver.url });
  });
  after(async () => {
    await server.close();
    await receiver.close();
  });

  test('8 incidents in one minute: 3 pages, then one summary naming the 4 still open at the end of the minute', async () => {
    const ids: number[] = [];
    for (let index = 0; index < 8; index++) {
      const payload = notification({
        groupKey: `storm-${index}`,
        alerts: [firingAlert({ name: `Storm${index}` })],
      });
      const response = await server.request({
        method: 'POST',
        url: '/api/webhook/alertmanager',
        payload,
        as: admin,
      });
      ids.push(response.body.incident_id);
      await server.app.services.paging.runOnce();
    }
    assert.equal(receiver.received.length, 3, 'the first three page at once');
    // One folded incident is handled before the minute ends: the summary leaves it out.
    await server.request({ method: 'POST', url: `/api/incidents/${ids[7]}/acknowledge`, as: frank });
    const folded = (
      await server.request({ method: 'GET', url: `/api/incidents/${ids[5]}/timeline`, as: admin })
    ).body;
    assert.match(
      folded.find((event: { type: string }) => event.type === 'escalated').detail,
      /folded for frank into one summary page \(more than 3 pages a minute\)/,
    );

    clock.advance(30_000);
    await server.app.services.paging.runOnce();
    assert.equal(receiver.received.length, 3, 'the summary waits for the end of the minute');
    clock.advance(25_000);
    await server.app.services.paging.runOnce();
    assert.equal(receiver.received.length, 4);
    const summary = receiver.received[3]!.body;
    assert.equal(summary.event, 'summary');
    assert.deepEqual(
      summary.incidents.map((incident: { id: number }) => incident.id),
      ids.slice(3, 7),
    );
    assert.equal(summary.incidents[0].url, `https://terdut.example.com/incidents/${ids[3]}`);

    // Still unacknowledged, the folded incidents escalate like any other.
    clock.advance(10 * 60_000);
    await server.app.services.paging.runOnce();
    const later = (
      await server.request({ method: 'GET', url: `/api/incidents/${ids[4]}/timeline`, as: admin })
    ).body;
    assert.ok(
      later.some(
        (event: { type: string; detail?: string }) =>
          event.type === 'escalated' && /step 2/.test(event.detail ?? ''),
      ),
    );
  });
});
