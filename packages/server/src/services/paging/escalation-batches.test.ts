/**
 * A paging pass advances due escalations in batches, one transaction each.
 * One escalation that cannot advance must not hold back the pages of the
 * others in its batch, nor the sending of pages already decided: they go
 * out, and it is tried again at the next pass.
 * The fault is injected with a trigger that refuses one incident's
 * `escalated` timeline entry (a STAND-IN for a step that fails, which a
 * real database does not do on demand); pages go to a real webhook
 * receiver on loopback, and time moves by hand.
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

const TEN_MINUTES = 10 * 60_000;

forEachDatabase('escalation batches', (database) => {
  let server: TestApp;
  let receiver: WebhookReceiver;
  let admin: TestUser;
  let grace: TestUser;
  const clock = new ManualClock('2026-12-03T09:00:10Z');

  before(async () => {
    receiver = await startWebhookReceiver();
    server = await startTestApp(database(), {
      clock,
      config: testConfig({ TERDUT_PAGING_STORM_LIMIT: '1000' }),
    });
    admin = await server.createUser('batch-admin', 'admin');
    grace = await server.createUser('grace');
    await onCallWith(server, admin, grace, ['2026-12-03'], { kind: 'webhook', target: receiver.url });
  });
  after(async () => {
    await server.close();
    await receiver.close();
  });

  const open = async (name: string): Promise<number> => {
    const response = await server.request({
      method: 'POST',
      url: '/api/webhook/alertmanager',
      payload: notification({ groupKey: name, alerts: [firingAlert({ name })] }),
      as: admin,
    });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.incident_id;
  };
  const steps = async (id: number): Promise<string[]> =>
    (await server.request({ method: 'GET', url: `/api/incidents/${id}/timeline`, as: admin })).body
      .filter((event: { type: string }) => event.type === 'escalated')
      .map((event: { detail: string }) => /^step \d+/.exec(event.detail)![0]);
  const pagedIncidents = () => new Set(receiver.received.map((hook) => hook.body?.incident?.id));

  test('an escalation that fails in a batch holds back nobody else: the others page, it pages once it can', async () => {
    await server.db.query(`
      CREATE FUNCTION refuse_batch_fault() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.type = 'escalated' AND (SELECT group_key FROM incidents WHERE id = NEW.incident_id) = 'BatchFault' THEN
          RAISE EXCEPTION 'injected fault: BatchFault cannot escalate';
        END IF;
        RETURN NEW;
      END $$`);
    await server.db.query(`
      CREATE TRIGGER refuse_batch_fault BEFORE INSERT ON incident_events
        FOR EACH ROW EXECUTE FUNCTION refuse_batch_fault()`);

    // Each opening wakes a pass: the healthy ones page grace, the faulty one fails alone.
    const faulty = await open('BatchFault');
    const first = await open('BatchHealthy1');
    const second = await open('BatchHealthy2');
    await server.app.services.paging.settle();
    // The pass fails on the faulty one, and still sends the others' pages.
    await assert.rejects(server.app.services.paging.runOnce(), /injected fault/);
    assert.ok(pagedIncidents().has(first) && pagedIncidents().has(second));
    assert.equal(pagedIncidents().has(faulty), false, 'its page was rolled back with its step');

    // Ten minutes on, all three are due at once (step 2 of the healthy ones,
    // still step 1 of the faulty one): one batch, whose transaction fails.
    clock.advance(TEN_MINUTES);
    await assert.rejects(server.app.services.paging.runOnce(), /injected fault/);
    assert.deepEqual(await steps(first), ['step 1', 'step 2']);
    assert.deepEqual(await steps(second), ['step 1', 'step 2']);
    assert.deepEqual(await steps(faulty), []);

    // Mended, it pages at the next pass.
    await server.db.query('DROP TRIGGER refuse_batch_fault ON incident_events');
    await server.app.services.paging.runOnce();
    assert.ok(pagedIncidents().has(faulty));
    assert.deepEqual(await steps(faulty), ['step 1']);
  });
});
