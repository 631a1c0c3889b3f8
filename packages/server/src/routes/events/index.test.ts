import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import {
  forEachDatabase,
  startTestApp,
  type TestApp,
  type TestUser,
  openIncident,
} from '@terdut/test-support';
import { ChangeFeed, type Change } from './change-feed.ts';

/** Reads server-sent events from `url` until `until` returns true for one; resolves with the events seen. */
async function readEvents(
  url: string,
  key: string,
  until: (event: { event: string; data: string }) => boolean,
  onReady: () => Promise<void>,
): Promise<{ event: string; data: string }[]> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 10_000);
  const response = await fetch(url, {
    headers: { authorization: `Bearer ${key}` },
    signal: controller.signal,
  });
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /text\/event-stream/);
  const seen: { event: string; data: string }[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const chunk of response.body!) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1] ?? '';
        if (event === undefined) continue;
        seen.push({ event, data });
        if (event === 'ready') await onReady();
        if (until({ event, data })) return seen;
      }
    }
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return seen;
}

forEachDatabase('live changes', (database) => {
  let server: TestApp;
  let url: string;
  let admin: TestUser;

  before(async () => {
    server = await startTestApp(database());
    await server.app.listen({ port: 0, host: '127.0.0.1' });
    url = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`;
    admin = await server.createUser('live-admin', 'admin');
  });
  after(() => server.close());

  test('a listener hears a notification once, and never one from a rolled-back transaction', async () => {
    const heard: string[] = [];
    const stop = await database().listen('terdut_test_channel', (payload) => heard.push(payload));
    await database()
      .transaction(async (tx) => {
        await tx.query(`SELECT pg_notify('terdut_test_channel', 'rolled back')`);
        throw new Error('roll back');
      })
      .catch(() => {});
    await database().notify('terdut_test_channel', 'hello');
    const deadline = Date.now() + 5000;
    while (heard.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await stop();
    await database().notify('terdut_test_channel', 'after stop');
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(heard, ['hello']);
  });

  test('a burst of writes reaches a listener as each distinct change, not once per write', async () => {
    const feed = new ChangeFeed(database());
    const heard: Change[] = [];
    await feed.subscribe((change) => heard.push(change));
    const webhook: Change[] = [{ topic: 'alerts' }, { topic: 'incidents' }];
    // Thirty webhook answers at once, and one acknowledgement among them.
    await Promise.all(
      Array.from({ length: 30 }, (_, n) =>
        feed.announce(n === 15 ? [{ topic: 'incidents', incident_id: 7 }] : webhook),
      ),
    );
    // One more after the burst is sent on its own.
    await feed.announce([{ topic: 'schedule' }]);
    const deadline = Date.now() + 5000;
    while (!heard.some((change) => change.topic === 'schedule') && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    await feed.close();
    const count = (topic: string, id?: number) =>
      heard.filter((change) => change.topic === topic && change.incident_id === id).length;
    assert.equal(count('alerts'), 1, JSON.stringify(heard));
    assert.equal(count('incidents'), 1, JSON.stringify(heard));
    assert.equal(count('incidents', 7), 1, JSON.stringify(heard));
    assert.equal(count('schedule'), 1, JSON.stringify(heard));
  });

  test('GET /api/events needs a signed-in caller', async () => {
    const response = await fetch(`${url}/api/events`);
    assert.equal(response.status, 401);
    await response.arrayBuffer();
  });

  test('a webhook and an acknowledgement reach the event stream as changes of their topic', async () => {
    let incidentId = 0;
    const events = await readEvents(
      `${url}/api/events`,
      admin.key,
      (event) =>
        event.event === 'change' && JSON.parse(event.data).incident_id === incidentId && incidentId > 0,
      async () => {
        incidentId = (await openIncident(server, admin, { name: 'LiveStream' })).id;
        // Through the network (inject skips onResponse's timing, not its hook, but a real request is what browsers make).
        const ack = await fetch(`${url}/api/incidents/${incidentId}/acknowledge`, {
          method: 'POST',
          headers: { authorization: `Bearer ${admin.key}` },
        });
        assert.equal(ack.status, 200);
        await ack.arrayBuffer();
      },
    );
    const changes = events.filter((event) => event.event === 'change').map((event) => JSON.parse(event.data));
    assert.deepEqual(changes.slice(0, 2), [{ topic: 'alerts' }, { topic: 'incidents' }]);
    assert.deepEqual(changes.at(-1), { topic: 'incidents', incident_id: incidentId });
  });
});
