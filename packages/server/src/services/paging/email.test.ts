/**
 * Email pages against a real SMTP server in-process (smtp-server): headers,
 * text and HTML parts, the links; the acknowledge link opens a confirmation
 * page whose GET changes nothing, and whose button acknowledges.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { smtpSender } from './email.ts';
import { composeMessage } from './messages.ts';
import { DeliveryError } from './providers.ts';
import { freeLoopbackPort } from '../../../../../test/peers/child-processes.ts';
import {
  forEachDatabase,
  ManualClock,
  startTestApp,
  testConfig,
  type TestApp,
  type TestUser,
  firingAlert,
  notification,
  startSmtpSink,
  type SmtpSink,
} from '@terdut/test-support';

const PUBLIC_URL = 'https://terdut.example.com';
const MINUTE = 60_000;

forEachDatabase('email pages', (database) => {
  let server: TestApp;
  let smtp: SmtpSink;
  let admin: TestUser;
  let erin: TestUser;
  const clock = new ManualClock('2026-12-03T09:00:00Z');

  before(async () => {
    smtp = await startSmtpSink({ user: 'terdut', password: 'smtp-pass' });
    server = await startTestApp(database(), {
      clock,
      config: testConfig({
        TERDUT_PUBLIC_URL: PUBLIC_URL,
        TERDUT_SMTP_URL: smtp.url,
        TERDUT_SMTP_FROM: 'terdut <pager@example.com>',
      }),
    });
    admin = await server.createUser('mail-admin', 'admin');
    erin = await server.createUser('erin');
    await server.request({
      method: 'POST',
      url: '/api/schedule',
      as: admin,
      payload: { user_id: erin.id, dates: ['2026-12-03'] },
    });
    const method = await server.request({
      method: 'POST',
      url: `/api/users/${erin.id}/contact-methods`,
      as: erin,
      payload: { kind: 'email', target: 'erin@example.com' },
    });
    assert.equal(method.status, 201, JSON.stringify(method.body));
  });
  after(async () => {
    await server.close();
    await smtp.close();
  });

  test('the person on call gets an email with text and HTML, the incident link and an acknowledge link', async () => {
    const payload = notification({
      groupKey: 'mail-1',
      alerts: [
        firingAlert({ name: 'MailTest', severity: 'warning', annotations: { summary: 'queue <stuck>' } }),
      ],
    });
    const opened = await server.request({
      method: 'POST',
      url: '/api/webhook/alertmanager',
      payload,
      as: admin,
    });
    const id = opened.body.incident_id as number;
    await server.app.services.paging.runOnce();
    assert.equal(smtp.messages.length, 1);
    const mail = smtp.messages[0]!;
    assert.equal(mail.subject, 'queue <stuck>');
    assert.equal(mail.from?.value[0]?.address, 'pager@example.com');
    assert.equal((mail.to as { text: string }).text, 'erin@example.com');
    // Sent by a program: an out-of-office responder must not answer it (RFC 3834).
    assert.equal(mail.headers.get('auto-submitted'), 'auto-generated');
    assert.ok(mail.date instanceof Date && mail.messageId, 'Date and Message-ID');
    assert.match(mail.text ?? '', /1 alert firing: MailTest/);
    assert.match(mail.text ?? '', new RegExp(`Open the incident: ${PUBLIC_URL}/incidents/${id}`));
    const ackLink = /Acknowledge: (\S+)/.exec(mail.text ?? '')?.[1];
    assert.ok(ackLink?.startsWith(`${PUBLIC_URL}/paging/acknowledge?token=`));
    assert.ok(
      typeof mail.html === 'string' && mail.html.includes('queue &#60;stuck&#62;'),
      'HTML escapes the title',
    );
    assert.ok(mail.html.includes(`href="${PUBLIC_URL}/incidents/${id}"`));
    const notified = (
      await server.request({ method: 'GET', url: `/api/incidents/${id}/timeline`, as: admin })
    ).body.find((event: { type: string }) => event.type === 'notified');
    // Every member reads the timeline; the address is erin's and the admins' to know.
    assert.match(notified.detail, /^email \(contact method \d+\), step 1; message id </);
    assert.doesNotMatch(notified.detail, /erin@example\.com/);

    // A mail scanner fetches the link: a confirmation page, nothing changes.
    const path = ackLink!.slice(PUBLIC_URL.length);
    for (let i = 0; i < 2; i++) {
      const page = await server.request({ method: 'GET', url: path });
      assert.equal(page.status, 200);
      assert.match(String(page.headers['content-type']), /text\/html/);
      assert.match(page.body, /Acknowledge this incident\?/);
      assert.match(page.body, /<form method="post" action="\/paging\/acknowledge">/);
      assert.doesNotMatch(page.body, /<script/);
    }
    const still = await server.request({ method: 'GET', url: `/api/incidents/${id}`, as: admin });
    assert.equal(still.body.status, 'triggered');

    // The person presses the button: the form posts the token.
    const token = new URL(ackLink!).searchParams.get('token')!;
    const pressed = await server.request({
      method: 'POST',
      url: '/paging/acknowledge',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ token }).toString(),
    });
    assert.equal(pressed.status, 200);
    assert.match(pressed.body, /Acknowledged/);
    const acked = await server.request({ method: 'GET', url: `/api/incidents/${id}`, as: admin });
    assert.equal(acked.body.status, 'acknowledged');
    assert.equal(acked.body.acknowledged_by, 'erin');
    const again = await server.request({
      method: 'POST',
      url: '/paging/acknowledge',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ token }).toString(),
    });
    assert.match(again.body, /Already acknowledged/);
    // The link opened again: it says so, offers no button that would change nothing, and links the incident.
    const reopened = await server.request({ method: 'GET', url: path });
    assert.equal(reopened.status, 200);
    assert.match(reopened.body, /It is already acknowledged: paging for it has stopped\./);
    assert.doesNotMatch(reopened.body, /<form|<button/);
    assert.ok(reopened.body.includes(`href="${PUBLIC_URL}/incidents/${id}"`), reopened.body);
  });

  test('every answer of the acknowledge link is a page a browser shows; an expired link links its incident, an altered one does not', async () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const incomplete = [
      { method: 'GET' as const, url: '/paging/acknowledge' },
      { method: 'GET' as const, url: '/paging/acknowledge?token=' },
      { method: 'GET' as const, url: '/paging/acknowledge?token=a&token=b' },
      { method: 'POST' as const, url: '/paging/acknowledge', headers: form, payload: '' },
      { method: 'POST' as const, url: '/paging/acknowledge', headers: form, payload: 'token=' },
    ];
    for (const request of incomplete) {
      const answer = await server.request(request);
      assert.equal(answer.status, 400, `${request.method} ${request.url}`);
      assert.match(String(answer.headers['content-type']), /^text\/html/, `${request.method} ${request.url}`);
      assert.match(answer.body, /<h1>Cannot acknowledge<\/h1>/);
      assert.match(answer.body, /link is incomplete: its <code>token<\/code> is missing/);
    }

    const opened = await server.request({
      method: 'POST',
      url: '/api/webhook/alertmanager',
      payload: notification({ groupKey: 'mail-3', alerts: [firingAlert({ name: 'MailExpired' })] }),
      as: admin,
    });
    const id = opened.body.incident_id as number;
    await server.app.services.paging.runOnce();
    const mail = smtp.messages.findLast((message) => (message.text ?? '').includes(`/incidents/${id}`))!;
    const token = new URL(/Acknowledge: (\S+)/.exec(mail.text ?? '')![1]!).searchParams.get('token')!;
    const incidentHref = `href="${PUBLIC_URL}/incidents/${id}"`;
    // Signed, but for another incident: the signature no longer matches, so nothing is linked.
    const [body, signature] = token.split('.') as [string, string];
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { i: number };
    const altered = `${Buffer.from(JSON.stringify({ ...claims, i: id + 1 })).toString('base64url')}.${signature}`;
    const alteredPage = await server.request({
      method: 'GET',
      url: `/paging/acknowledge?token=${encodeURIComponent(altered)}`,
    });
    assert.equal(alteredPage.status, 403);
    assert.doesNotMatch(alteredPage.body, /\/incidents\//);

    const before = clock.now();
    clock.advance(25 * 60 * MINUTE);
    try {
      const expired = await server.request({
        method: 'GET',
        url: `/paging/acknowledge?token=${encodeURIComponent(token)}`,
      });
      assert.equal(expired.status, 403);
      assert.match(String(expired.headers['content-type']), /^text\/html/);
      assert.match(expired.body, /has expired; open the incident in terdut/);
      assert.ok(expired.body.includes(incidentHref), expired.body);
      const pressed = await server.request({
        method: 'POST',
        url: '/paging/acknowledge',
        headers: form,
        payload: new URLSearchParams({ token }).toString(),
      });
      assert.equal(pressed.status, 403);
      assert.ok(pressed.body.includes(incidentHref), pressed.body);
    } finally {
      clock.set(before);
    }
  });

  test("a mail program shows an incident's page and its resolved notice as one conversation, apart from another incident's", async () => {
    const open = async (groupKey: string) => {
      const opened = await server.request({
        method: 'POST',
        url: '/api/webhook/alertmanager',
        payload: notification({ groupKey, alerts: [firingAlert({ name: `Thread${groupKey}` })] }),
        as: admin,
      });
      return opened.body.incident_id as number;
    };
    const mailsAbout = (id: number) =>
      smtp.messages.filter((message) => (message.text ?? '').includes(`/incidents/${id}`));
    const first = await open('mail-thread-1');
    const second = await open('mail-thread-2');
    await server.app.services.paging.runOnce();
    await server.request({ method: 'POST', url: `/api/incidents/${first}/resolve`, as: admin });
    await server.app.services.paging.runOnce();

    const [page, resolved] = mailsAbout(first);
    assert.ok(page && resolved, `a page and a resolved notice: ${mailsAbout(first).length} emails`);
    assert.match(resolved.subject ?? '', /^Resolved: /);
    const thread = page.inReplyTo;
    assert.match(thread ?? '', new RegExp(`^<incident-${first}@[0-9a-f]{32}\\.terdut>$`));
    for (const mail of [page, resolved]) {
      assert.equal(mail.inReplyTo, thread);
      assert.deepEqual([mail.references ?? []].flat(), [thread]);
      // Each email is a message of its own; none claims to be the thread's root.
      assert.notEqual(mail.messageId, thread);
    }
    assert.notEqual(page.messageId, resolved.messageId);
    const [other] = mailsAbout(second);
    assert.equal(other?.inReplyTo, `<incident-${second}@${thread!.split('@')[1]}`);
    await server.request({ method: 'POST', url: `/api/incidents/${second}/resolve`, as: admin });
  });

  test("an altered link shows a 403 page; a refused address fails at once with the server's answer", async () => {
    const bad = await server.request({ method: 'GET', url: '/paging/acknowledge?token=abc.def' });
    assert.equal(bad.status, 403);
    assert.match(bad.body, /not valid/);

    smtp.refuse('erin@example.com');
    const payload = notification({ groupKey: 'mail-2', alerts: [firingAlert({ name: 'MailRefused' })] });
    const opened = await server.request({
      method: 'POST',
      url: '/api/webhook/alertmanager',
      payload,
      as: admin,
    });
    await server.app.services.paging.runOnce();
    const failed = (
      await server.request({
        method: 'GET',
        url: `/api/incidents/${opened.body.incident_id}/timeline`,
        as: admin,
      })
    ).body.find((event: { type: string }) => event.type === 'notification_failed');
    assert.match(failed?.detail ?? '', /email \(contact method \d+\), step 1: SMTP server .* answered 550/);
  });
});

test('an SMTP server whose certificate is not trusted, or that refuses the connection: the answer says which', async () => {
  // smtp-server's built-in certificate is self-signed (and expired).
  const tls = new SMTPServer({ secure: true, authOptional: true, logger: false });
  tls.on('error', () => {});
  await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
  const { port } = tls.server.address() as AddressInfo;
  const message = { title: 't', text: 'x', priority: 3, tags: [], webhookBody: {} };
  try {
    const answers: string[] = [];
    for (const url of [`smtps://127.0.0.1:${port}`, `smtp://127.0.0.1:${await freeLoopbackPort()}`]) {
      await assert.rejects(
        smtpSender({ url, from: 'pager@example.com', password: undefined }).send(
          'erin@example.com',
          message,
          '1',
        ),
        (error: unknown) => error instanceof DeliveryError && answers.push(error.message) > 0,
      );
    }
    assert.match(answers[0]!, /^SMTP server 127\.0\.0\.1:\d+ not reachable \(ESOCKET: .*certificate/);
    assert.match(answers[1]!, /not reachable \(ESOCKET: connect ECONNREFUSED/);
  } finally {
    await new Promise<void>((resolve) => tls.close(() => resolve()));
  }
});

test('a storm summary links the queue of unacknowledged incidents and says so (the web app has no page at /incidents)', async () => {
  const smtp = await startSmtpSink({ user: 'terdut', password: 'smtp-pass' });
  try {
    const message = composeMessage({
      purpose: 'summary',
      person: { id: 7, username: 'frank' },
      publicUrl: PUBLIC_URL,
      folded: [
        { id: 12, title: 'disk full', severity: 'critical', missed_heartbeat: false },
        { id: 13, title: 'queue stuck', severity: 'warning', missed_heartbeat: false },
      ],
    });
    // The same link is the ntfy message's click.
    assert.equal(message.incidentUrl, `${PUBLIC_URL}/?filter=triggered`);
    await smtpSender({ url: smtp.url, from: 'pager@example.com', password: undefined }).send(
      'frank@example.com',
      message,
      '1',
    );
    const [mail] = smtp.messages;
    assert.match(mail?.text ?? '', /^#12 disk full$/m);
    assert.ok(
      (mail?.text ?? '').includes(`Open the unacknowledged incidents: ${PUBLIC_URL}/?filter=triggered`),
      mail?.text,
    );
    assert.doesNotMatch(mail?.text ?? '', /Open the incident:/);
    assert.ok(
      String(mail?.html).includes(
        `<a href="${PUBLIC_URL}/?filter=triggered">Open the unacknowledged incidents</a>`,
      ),
      String(mail?.html),
    );
  } finally {
    await smtp.close();
  }
});
