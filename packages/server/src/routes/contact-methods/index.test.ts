import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { forEachDatabase, startTestApp, testConfig, type TestApp, type TestUser } from '@terdut/test-support';
import { insertContactMethod } from '../../repositories/contact-methods.ts';

forEachDatabase('contact methods', (database) => {
  let server: TestApp;
  let member: TestUser;
  before(async () => {
    server = await startTestApp(database());
    member = await server.createUser('mel');
  });
  after(() => server.close());

  const addWebhook = (target: string) =>
    server.request({
      method: 'POST',
      url: `/api/users/${member.id}/contact-methods`,
      as: member,
      payload: { kind: 'webhook', target },
    });

  test('a webhook aimed at the cloud metadata service (link-local) is refused with 400, in any spelling', async () => {
    for (const target of [
      'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
      'http://0xa9fea9fe/latest/meta-data/',
      'http://[::ffff:169.254.169.254]/',
      'http://[fe80::1]:8080/hook',
      'http://[fd00:ec2::254]/latest/meta-data/',
    ]) {
      const response = await addWebhook(target);
      assert.equal(response.status, 400, target);
      assert.match(response.body.error, /field "target": .* is a link-local or cloud metadata address/);
    }
    // Receivers inside the cluster are ordinary.
    assert.equal((await addWebhook('http://10.0.0.7:9000/terdut')).status, 201);
  });

  test('with TERDUT_WEBHOOK_ALLOW_LINK_LOCAL=true an admin lets webhooks go to link-local addresses', async () => {
    const allowing = await startTestApp(database(), {
      config: testConfig({ TERDUT_WEBHOOK_ALLOW_LINK_LOCAL: 'true' }),
    });
    try {
      const response = await allowing.request({
        method: 'POST',
        url: `/api/users/${member.id}/contact-methods`,
        as: member,
        payload: { kind: 'webhook', target: 'http://169.254.1.2:9000/terdut' },
      });
      assert.equal(response.status, 201, JSON.stringify(response.body));
    } finally {
      await allowing.close();
    }
  });

  test('test messages are bounded per person: the eleventh in 10 minutes is 429 with Retry-After', async () => {
    const tester = await server.createUser('tess');
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const method = await server.request({
      method: 'POST',
      url: `/api/users/${tester.id}/contact-methods`,
      as: tester,
      payload: { kind: 'webhook', target: `http://127.0.0.1:${port}/hook` },
    });
    assert.equal(method.status, 201, JSON.stringify(method.body));
    const send = () =>
      server.request({
        method: 'POST',
        url: `/api/users/${tester.id}/contact-methods/${method.body.id}/test`,
        as: tester,
      });
    for (let sent = 1; sent <= 10; sent++) assert.equal((await send()).status, 200, `test ${sent}`);
    const refused = await send();
    assert.equal(refused.status, 429);
    assert.match(
      refused.body.error,
      /^at most 10 test messages per person every 10 minutes; try again in \d+ s$/,
    );
    assert.ok(Number(refused.headers['retry-after']) > 0);
  });

  test('a link-local webhook saved before the check is not called: its test answers why, at once', async () => {
    const method = await insertContactMethod(
      server.db,
      {
        user_id: member.id,
        kind: 'webhook',
        name: 'old',
        target: 'http://169.254.169.254/latest/meta-data/',
        secret: 'a-secret-of-32-characters-------',
        enabled: true,
      },
      new Date(),
    );
    const started = Date.now();
    const response = await server.request({
      method: 'POST',
      url: `/api/users/${member.id}/contact-methods/${method.id}/test`,
      as: member,
    });
    assert.equal(response.status, 200);
    assert.equal(response.body.delivered, false);
    assert.match(response.body.answer, /169\.254\.169\.254 is a link-local or cloud metadata address/);
    assert.ok(Date.now() - started < 5000, 'refused before any connection attempt');
  });

  test('a receiver that answers without end is read only to its start: the test answers in time, the server holds no gigabytes', async () => {
    const megabyte = Buffer.alloc(1 << 20, 'x');
    let sentMegabytes = 0;
    const endless = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.writeHead(Number(request.url?.slice(1)), { 'content-type': 'text/plain' });
        const pump = () => {
          while (!response.destroyed && response.write(megabyte)) sentMegabytes++;
          if (!response.destroyed) response.once('drain', pump);
        };
        pump();
      });
    });
    await new Promise<void>((resolve) => endless.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(endless.address() as AddressInfo).port}`;
    try {
      for (const [status, delivered] of [
        [200, true],
        [500, false],
      ] as const) {
        sentMegabytes = 0;
        const method = await addWebhook(`${base}/${status}`);
        const started = Date.now();
        const response = await server.request({
          method: 'POST',
          url: `/api/users/${member.id}/contact-methods/${method.body.id}/test`,
          as: member,
        });
        assert.equal(response.status, 200, JSON.stringify(response.body));
        assert.equal(response.body.delivered, delivered);
        if (!delivered) assert.match(response.body.answer, /^webhook answered HTTP 500: x{10}/);
        assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
        assert.ok(sentMegabytes < 64, `the server read ${sentMegabytes} MB of the answer`);
      }
    } finally {
      endless.closeAllConnections();
      await new Promise((resolve) => endless.close(resolve));
    }
  });
});
