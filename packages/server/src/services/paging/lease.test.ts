/**
 * A message belongs to the replica sending it for as long as that replica
 * is at it: a provider slower than the lease (a trickling SMTP server, a
 * webhook receiver that takes minutes) must not let a second replica claim
 * the message and send it again. Two PagingService instances on one
 * database stand for two replicas; the receiver is real HTTP on loopback,
 * and time moves by hand (ManualClock) while real time lets the sender's
 * renewals run.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import {
  forEachDatabase,
  ManualClock,
  openIncident,
  startTestApp,
  testConfig,
  type TestApp,
  type TestUser,
} from '@terdut/test-support';
import { PagingService } from './paging.ts';
import { createPagingMetrics } from './metrics.ts';
import { httpProviders } from './providers.ts';
import { scheduleOnCallLookup } from '../schedules.ts';

const MINUTE = 60_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

forEachDatabase('a send slower than the lease', (database) => {
  let server: TestApp;
  let admin: TestUser;
  let receiver: Server;
  /** What the receiver does with each request before it answers 200. */
  let whileSending: () => Promise<void> = async () => {};
  const received: { event: string; delivery: string }[] = [];
  const clock = new ManualClock('2026-12-07T09:00:00Z');

  before(async () => {
    server = await startTestApp(database(), { clock, config: testConfig() });
    admin = await server.createUser('lease-admin', 'admin');
    const hana = await server.createUser('hana');
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { event: string };
        received.push({ event: body.event, delivery: String(req.headers['x-terdut-delivery']) });
        const work = whileSending;
        whileSending = async () => {};
        void work().finally(() => res.writeHead(200).end());
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const method = await server.request({
      method: 'POST',
      url: `/api/users/${hana.id}/contact-methods`,
      as: hana,
      payload: { kind: 'webhook', target: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/` },
    });
    assert.equal(method.status, 201, JSON.stringify(method.body));
    const policy = await server.request({
      method: 'POST',
      url: '/api/escalation-policies',
      as: admin,
      payload: {
        name: 'slow receiver',
        matchers: ['team="lease"'],
        steps: [{ targets: [{ type: 'user', user_id: hana.id }] }],
      },
    });
    assert.equal(policy.status, 201, JSON.stringify(policy.body));
  });
  after(async () => {
    await server.close();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  /** Another replica's paging worker: its own instance, the same database and clock. */
  const replica = (leaseRenewalMs?: number) => {
    const { db, config } = server;
    const services = server.app.services;
    return new PagingService({
      db,
      clock,
      config: { paging: config.paging, publicUrl: config.publicUrl },
      metrics: createPagingMetrics(new Registry(), db, clock),
      incidents: services.incidents,
      providers: httpProviders({ ...config.paging, now: () => clock.now() }),
      onCall: (ref) => scheduleOnCallLookup(services.schedules, ref),
      ...(leaseRenewalMs !== undefined ? { leaseRenewalMs } : {}),
    });
  };

  /**
   * Opens an incident whose page goes to the slow receiver and sends it from
   * `sender`; meanwhile two minutes pass (twice the lease) and another
   * replica delivers what is due. Answers how often the receiver got the page.
   */
  const pageSentSlowly = async (sender: PagingService): Promise<number> => {
    const before = received.length;
    await openIncident(server, admin, { name: 'SlowReceiver', labels: { team: 'lease' } });
    await sender.escalate();
    let takenOver = -1;
    whileSending = async () => {
      clock.advance(2 * MINUTE);
      // Real time for the sender's renewal to run, as it would over two minutes.
      await sleep(300);
      takenOver = await replica().deliver();
    };
    await sender.deliver();
    // A second send started by the other replica has been answered by now too.
    await sleep(100);
    const pages = received.slice(before).filter((body) => body.event === 'page');
    assert.ok(takenOver >= 0, 'the other replica delivered while the page was being sent');
    return pages.length;
  };

  test('the sender renews its lease while the provider takes its time: the page arrives once', async () => {
    assert.equal(await pageSentSlowly(replica(50)), 1);
  });

  test('(the window it closes) a lease nobody renews runs out mid-send, and the other replica sends again', async () => {
    assert.equal(await pageSentSlowly(replica(60 * MINUTE)), 2);
  });
});
