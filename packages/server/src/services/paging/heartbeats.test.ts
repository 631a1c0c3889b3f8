/**
 * Heartbeats: the Watchdog alert refreshes one and opens no incident; a
 * heartbeat not refreshed within interval + grace opens an incident that
 * pages; a ping (or the Watchdog again) resolves it. Time moves by hand.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { pollTopic, startNtfyStandin, type NtfyStandin } from '../../../../../test/peers/ntfy-standin.ts';
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
  startSmtpSink,
  type SmtpSink,
} from '@terdut/test-support';

const MINUTE = 60_000;

forEachDatabase('heartbeats', (database) => {
  let server: TestApp;
  let receiver: WebhookReceiver;
  let ntfy: NtfyStandin;
  let smtp: SmtpSink;
  let admin: TestUser;
  let hana: TestUser;
  const clock = new ManualClock('2026-12-03T10:00:00Z');

  before(async () => {
    receiver = await startWebhookReceiver();
    ntfy = await startNtfyStandin();
    smtp = await startSmtpSink({ user: 'terdut', password: 'smtp-pass' });
    server = await startTestApp(database(), {
      clock,
      config: testConfig({
        TERDUT_NTFY_URL: ntfy.url,
        TERDUT_SMTP_URL: smtp.url,
        TERDUT_SMTP_FROM: 'pager@example.com',
      }),
    });
    admin = await server.createUser('hb-admin', 'admin');
    hana = await server.createUser('hana');
    await onCallWith(server, admin, hana, ['2026-12-03'], { kind: 'webhook', target: receiver.url });
  });
  after(async () => {
    await server.close();
    await receiver.close();
    await ntfy.close();
    await smtp.close();
  });

  const incidentsOf = async (group: string) =>
    (
      await database().query<{ id: number; status: string; title: string }>(
        'SELECT id, status, title FROM incidents WHERE group_key = $1 ORDER BY id',
        [group],
      )
    ).rows;

  test('the Watchdog refreshes its heartbeat and opens nothing; silence opens an incident that pages; a ping resolves it', async () => {
    const created = await server.request({
      method: 'POST',
      url: '/api/heartbeats',
      as: admin,
      payload: { name: 'prometheus', interval: '5m', grace: '1m', matchers: ['alertname="Watchdog"'] },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.interval, '5m');
    const id = created.body.id as number;
    const group = `heartbeat:${id}`;

    clock.advance(4 * MINUTE);
    const watchdog = notification({
      groupKey: '{}:{alertname="Watchdog"}',
      alerts: [firingAlert({ name: 'Watchdog', severity: 'none' })],
    });
    const received = await server.request({
      method: 'POST',
      url: '/api/webhook/alertmanager',
      payload: watchdog,
      as: admin,
    });
    assert.equal(received.status, 200);
    assert.equal(
      (await incidentsOf('{}:{alertname="Watchdog"}')).length,
      0,
      'the Watchdog opens no incident',
    );
    const list = await server.request({ method: 'GET', url: '/api/heartbeats', as: hana });
    assert.equal(list.body[0].last_seen_at, '2026-12-03T10:04:00.000Z');

    // 10:04 + 5m + 1m: still fine at 10:09:59, missed at 10:10:01.
    clock.set('2026-12-03T10:09:59Z');
    assert.equal(await server.app.services.heartbeats.sweep(), 0);
    clock.set('2026-12-03T10:10:01Z');
    assert.equal(await server.app.services.heartbeats.sweep(), 1);
    assert.equal(
      await server.app.services.heartbeats.sweep(),
      0,
      'one incident, however often the sweep runs',
    );
    const [incident] = await incidentsOf(group);
    assert.equal(incident?.title, 'Heartbeat prometheus missed since 2026-12-03T10:09:00.000Z');
    await server.app.services.paging.runOnce();
    assert.equal(
      receiver.received.filter((hook) => hook.body?.incident?.id === incident.id).length,
      1,
      'it pages',
    );

    const ping = await server.request({ method: 'POST', url: `/api/heartbeats/${id}/ping`, as: hana });
    assert.equal(ping.status, 200);
    assert.equal((await incidentsOf(group))[0]?.status, 'resolved');
    const timeline = (
      await server.request({ method: 'GET', url: `/api/incidents/${incident.id}/timeline`, as: admin })
    ).body;
    assert.ok(
      timeline.some(
        (event: { type: string; detail?: string }) =>
          event.type === 'resolved' && /returned/.test(event.detail ?? ''),
      ),
    );
  });

  test('a missed heartbeat pages loud and says which heartbeat is silent and since when, by ntfy, email and webhook', async () => {
    for (const method of [
      { kind: 'ntfy', target: 'hana-heartbeats' },
      { kind: 'email', target: 'hana@example.com' },
    ]) {
      const added = await server.request({
        method: 'POST',
        url: `/api/users/${hana.id}/contact-methods`,
        as: hana,
        payload: method,
      });
      assert.equal(added.status, 201, JSON.stringify(added.body));
    }
    const seenAt = clock.now();
    const created = await server.request({
      method: 'POST',
      url: '/api/heartbeats',
      as: admin,
      payload: { name: 'backup-cron', interval: '30m', grace: '2m' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    clock.advance(33 * MINUTE);
    // The first test's heartbeat is silent by now too: each pages for itself.
    await server.app.services.heartbeats.sweep();
    const [incident] = await incidentsOf(`heartbeat:${created.body.id}`);
    await server.app.services.paging.runOnce();

    const says = new RegExp(
      `Heartbeat backup-cron has had no sign of life since ${seenAt.toISOString()} \\(expected every 30m, grace 2m\\)`,
    );
    const page = (await pollTopic(ntfy.url, 'hana-heartbeats')).find((m) => m.title === incident?.title);
    assert.ok(page, 'the ntfy page went out');
    assert.equal(page.priority, 4, 'high: sound and a pop-over, not a silent priority 2');
    assert.match(page.message, says);
    assert.match(page.message, /Nothing has pinged it since/);
    assert.doesNotMatch(page.message, /No alert is firing/);

    const mail = smtp.messages.find((message) => message.subject === incident?.title);
    assert.ok(mail, `an email with subject "${incident?.title}"`);
    assert.match(mail.text ?? '', says);
    assert.doesNotMatch(mail.text ?? '', /No alert is firing/);

    const hook = receiver.received.find((received) => received.body?.incident?.id === incident?.id);
    assert.deepEqual(hook?.body?.heartbeat, {
      id: created.body.id,
      name: 'backup-cron',
      last_seen_at: seenAt.toISOString(),
      missed_since: new Date(seenAt.getTime() + 30 * MINUTE).toISOString(),
      interval: '30m',
      grace: '2m',
    });
    await server.request({ method: 'POST', url: `/api/heartbeats/${created.body.id}/ping`, as: hana });
  });

  test('a missed-heartbeat incident resolved by hand stays resolved while the silence goes on; the next silence opens a new one', async () => {
    const created = await server.request({
      method: 'POST',
      url: '/api/heartbeats',
      as: admin,
      payload: { name: 'nightly-report', interval: '5m', grace: '0' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id as number;
    const group = `heartbeat:${id}`;
    clock.advance(6 * MINUTE);
    await server.app.services.heartbeats.sweep();
    const [first] = await incidentsOf(group);
    const resolved = await server.request({
      method: 'POST',
      url: `/api/incidents/${first!.id}/resolve`,
      as: hana,
    });
    assert.equal(resolved.status, 200);

    // The sweep runs every 10 s: it paged again at once, with a new incident.
    clock.advance(10_000);
    await server.app.services.heartbeats.sweep();
    clock.advance(60 * MINUTE);
    await server.app.services.heartbeats.sweep();
    assert.deepEqual(
      (await incidentsOf(group)).map((incident) => incident.status),
      ['resolved'],
    );

    await server.request({ method: 'POST', url: `/api/heartbeats/${id}/ping`, as: hana });
    clock.advance(6 * MINUTE);
    await server.app.services.heartbeats.sweep();
    assert.deepEqual(
      (await incidentsOf(group)).map((incident) => incident.status),
      ['resolved', 'triggered'],
    );
    await server.request({ method: 'DELETE', url: `/api/heartbeats/${id}`, as: admin });
  });

  test('deleting a heartbeat whose incident is open resolves that incident: it can never return, and paging ends', async () => {
    const created = await server.request({
      method: 'POST',
      url: '/api/heartbeats',
      as: admin,
      payload: { name: 'retired-cron', interval: '5m', grace: '0' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const group = `heartbeat:${created.body.id}`;
    clock.advance(6 * MINUTE);
    await server.app.services.heartbeats.sweep();
    const [incident] = await incidentsOf(group);
    assert.equal(incident?.status, 'triggered');

    const deleted = await server.request({
      method: 'DELETE',
      url: `/api/heartbeats/${created.body.id}`,
      as: admin,
    });
    assert.equal(deleted.status, 204);
    assert.equal((await incidentsOf(group))[0]?.status, 'resolved');
    const timeline = (
      await server.request({ method: 'GET', url: `/api/incidents/${incident.id}/timeline`, as: admin })
    ).body;
    const resolved = timeline.find((event: { type: string }) => event.type === 'resolved');
    assert.equal(resolved?.detail, 'heartbeat retired-cron was deleted');
    assert.equal(resolved?.user_id, admin.id);

    const pagesBefore = receiver.received.filter((hook) => hook.body?.incident?.id === incident.id);
    clock.advance(60 * MINUTE);
    await server.app.services.paging.runOnce();
    assert.deepEqual(
      receiver.received
        .filter((hook) => hook.body?.incident?.id === incident.id)
        .slice(pagesBefore.length)
        .map((hook) => hook.body.event)
        .filter((event) => event === 'page'),
      [],
      'no page after the delete',
    );
    // The other heartbeats of this suite are silent too by now: they page for themselves.
    for (const heartbeat of (await server.request({ method: 'GET', url: '/api/heartbeats', as: admin })).body)
      await server.request({ method: 'POST', url: `/api/heartbeats/${heartbeat.id}/ping`, as: hana });
  });

  test('heartbeats are validated and admin-only to define; an unknown one cannot be pinged', async () => {
    const byMember = await server.request({
      method: 'POST',
      url: '/api/heartbeats',
      as: hana,
      payload: { name: 'x', interval: '5m' },
    });
    assert.equal(byMember.status, 403);
    const tooShort = await server.request({
      method: 'POST',
      url: '/api/heartbeats',
      as: admin,
      payload: { name: 'x', interval: '10s' },
    });
    assert.equal(tooShort.status, 400);
    assert.match(tooShort.body.error, /"interval" must be a Go-style duration from 30s to 8760h/);
    // Past PostgreSQL's range, such a heartbeat made every sweep fail: no heartbeat was watched any more.
    for (const [field, payload] of [
      ['interval', { name: 'x', interval: '3000000000h' }],
      ['interval', { name: 'x', interval: '30000000000000h' }],
      ['grace', { name: 'x', interval: '5m', grace: '3000000000h' }],
    ] as const) {
      const tooLong = await server.request({ method: 'POST', url: '/api/heartbeats', as: admin, payload });
      assert.equal(tooLong.status, 400, JSON.stringify(payload));
      assert.match(tooLong.body.error, new RegExp(`"${field}" must be .* to 8760h \\(365 days\\)`));
    }
    const longest = await server.request({
      method: 'POST',
      url: '/api/heartbeats',
      as: admin,
      payload: { name: 'yearly', interval: '8760h', grace: '8760h' },
    });
    assert.equal(longest.status, 201, JSON.stringify(longest.body));
    clock.advance(MINUTE);
    await server.app.services.heartbeats.sweep();
    const badMatcher = await server.request({
      method: 'POST',
      url: '/api/heartbeats',
      as: admin,
      payload: { name: 'x', interval: '5m', matchers: ['Watchdog'] },
    });
    assert.equal(badMatcher.status, 400);
    assert.match(badMatcher.body.error, /"matchers.0"/);
    const unknown = await server.request({ method: 'POST', url: '/api/heartbeats/999999/ping', as: hana });
    assert.equal(unknown.status, 404);
  });
});
