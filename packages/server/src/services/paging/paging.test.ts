/**
 * Paging end to end inside one process, on both databases: Alertmanager
 * notifications open incidents, the worker pass (`paging.runOnce()`) pages
 * through the ntfy STAND-IN (test/peers/ntfy-standin.ts) and a real webhook
 * receiver on loopback, and time moves by hand (ManualClock), so "step 2
 * fires after 5 minutes and not before" takes no real time and the
 * production rule (steps at least 30s apart) stays in force.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freeLoopbackPort } from '../../../../../test/peers/child-processes.ts';
import {
  NTFY_MESSAGE_SIZE_LIMIT,
  pollTopic,
  pressHttpAction,
  pressHttpActionInBrowser,
  startNtfyStandin,
  type NtfyStandin,
} from '../../../../../test/peers/ntfy-standin.ts';
import {
  forEachDatabase,
  ManualClock,
  startTestApp,
  testConfig,
  type TestApp,
  type TestUser,
  firingAlert,
  notification,
  openIncident,
  resolvedAlert,
  startWebhookReceiver,
  type WebhookReceiver,
} from '@terdut/test-support';

const NTFY_TOKEN = 'tk_standintoken0123456789abcdef';
const MINUTE = 60_000;

forEachDatabase('paging', (database) => {
  let server: TestApp;
  let ntfy: NtfyStandin;
  let receiver: WebhookReceiver;
  let publicUrl: string;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  let bobHookSecret: string;
  const clock = new ManualClock('2026-12-03T09:00:00Z');
  let groupCounter = 0;

  before(async () => {
    ntfy = await startNtfyStandin({ token: NTFY_TOKEN });
    receiver = await startWebhookReceiver();
    const port = await freeLoopbackPort();
    publicUrl = `http://127.0.0.1:${port}`;
    server = await startTestApp(database(), {
      clock,
      config: testConfig({
        TERDUT_PUBLIC_URL: publicUrl,
        TERDUT_NTFY_URL: ntfy.url,
        TERDUT_NTFY_TOKEN: NTFY_TOKEN,
        TERDUT_PAGING_RETRY_BUDGET: '10m',
        // These tests open many incidents within one (manual) minute; storm.test.ts covers folding.
        TERDUT_PAGING_STORM_LIMIT: '1000',
      }),
    });
    // The phone presses the Acknowledge button over real HTTP.
    await server.app.listen({ port, host: '127.0.0.1' });
    admin = await server.createUser('page-admin', 'admin');
    alice = await server.createUser('alice');
    bob = await server.createUser('bob');
    await server.request({
      method: 'POST',
      url: '/api/schedule',
      as: admin,
      payload: { user_id: alice.id, dates: ['2026-12-03', '2026-12-04'] },
    });
    const ntfyMethod = await server.request({
      method: 'POST',
      url: `/api/users/${alice.id}/contact-methods`,
      as: alice,
      payload: { kind: 'ntfy', target: 'alice-pager', name: 'phone' },
    });
    assert.equal(ntfyMethod.status, 201, JSON.stringify(ntfyMethod.body));
    const hook = await server.request({
      method: 'POST',
      url: `/api/users/${bob.id}/contact-methods`,
      as: bob,
      payload: { kind: 'webhook', target: receiver.url },
    });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    bobHookSecret = hook.body.secret;
  });
  after(async () => {
    await server.close();
    await ntfy.close();
    await receiver.close();
  });

  const pass = () => server.app.services.paging.runOnce();
  const openPaged = (labels: Record<string, string> = {}, severity = 'critical') => {
    groupCounter += 1;
    return openIncident(server, admin, {
      name: `PagingTest${groupCounter}`,
      severity,
      labels,
      annotations: { summary: 'disk almost full', description: 'less than 5% left' },
    });
  };
  const timeline = async (id: number) =>
    (await server.request({ method: 'GET', url: `/api/incidents/${id}/timeline`, as: admin })).body as {
      type: string;
      username?: string;
      detail?: string;
    }[];
  const pagesFor = async (id: number) =>
    (await pollTopic(ntfy.url, 'alice-pager', NTFY_TOKEN)).filter(
      (m) => m.click === `${publicUrl}/incidents/${id}`,
    );
  const hooksFor = (id: number) => receiver.received.filter((hook) => hook.body?.incident?.id === id);

  test('GET /api/paging/me warns a person who is on call without a working contact method', async () => {
    const me = await server.request({ method: 'GET', url: '/api/paging/me', as: alice });
    assert.deepEqual(me.body, { on_call_now: true, working_contact_methods: 1 });
    const newcomer = await server.createUser('newcomer');
    await server.request({
      method: 'POST',
      url: '/api/schedule',
      as: admin,
      payload: { user_id: newcomer.id, dates: ['2026-12-21'] },
    });
    clock.set('2026-12-21T12:00:00Z');
    try {
      const warned = await server.request({ method: 'GET', url: '/api/paging/me', as: newcomer });
      assert.equal(warned.body.on_call_now, true);
      assert.equal(warned.body.working_contact_methods, 0);
      assert.match(warned.body.warning, /on call now but have no working contact method/);
      // An API client is told the route to call, with its own id.
      assert.ok(
        warned.body.warning.endsWith(`; add one with POST /api/users/${newcomer.id}/contact-methods`),
        warned.body.warning,
      );
    } finally {
      clock.set('2026-12-03T09:00:00Z');
    }
  });

  test("GET /api/paging/me: on call in a team's schedule (not the default) is on call now too", async () => {
    const oncaller = await server.createUser('team-oncaller');
    const team = await server.request({
      method: 'POST',
      url: '/api/schedules',
      as: admin,
      payload: { name: 'Team readiness', time_zone: 'UTC' },
    });
    assert.equal(team.status, 201);
    const override = await server.request({
      method: 'POST',
      url: `/api/schedules/${team.body.id}/overrides`,
      as: admin,
      payload: { user_id: oncaller.id, starts_at: '2026-12-03T08:00:00Z', ends_at: '2026-12-03T10:00:00Z' },
    });
    assert.equal(override.status, 201);
    try {
      const me = await server.request({ method: 'GET', url: '/api/paging/me', as: oncaller });
      assert.equal(me.body.on_call_now, true);
      assert.match(me.body.warning, /on call now but have no working contact method/);
    } finally {
      await server.request({ method: 'DELETE', url: `/api/schedules/${team.body.id}`, as: admin });
    }
  });

  test('a new incident pages the person on call at once: ntfy message with priority, link and Acknowledge action', async () => {
    const { id } = await openPaged({ instance: 'db-1:9100' });
    await pass();
    const [page, ...others] = await pagesFor(id);
    assert.ok(page, 'alice got a page');
    assert.equal(others.length, 0);
    assert.equal(page.title, 'disk almost full');
    assert.equal(page.priority, 5);
    assert.match(page.message, /1 alert firing: PagingTest\d+/);
    assert.match(page.message, /on db-1:9100: disk almost full/);
    assert.ok(page.tags?.includes('rotating_light'));
    const [acknowledge] = page.actions ?? [];
    assert.equal(acknowledge?.action, 'http');
    assert.equal(acknowledge?.label, 'Acknowledge');
    assert.equal(acknowledge?.url, `${publicUrl}/api/paging/acknowledge`);
    // Resolve opens the incident page (it asks to confirm there), never resolves in one press.
    const resolve = page.actions?.[1];
    assert.equal(resolve?.action, 'view');
    assert.equal(resolve?.label, 'Resolve…');
    assert.equal(resolve?.url, `${publicUrl}/incidents/${id}`);
    assert.ok(!JSON.stringify(page).includes(alice.key), 'the page never carries an API key');

    const events = await timeline(id);
    assert.match(
      events.find((e) => e.type === 'escalated')?.detail ?? '',
      /step 1 of "built-in default": paging alice/,
    );
    const notified = events.find((e) => e.type === 'notified');
    assert.equal(notified?.username, 'alice');
    assert.match(
      notified?.detail ?? '',
      new RegExp(`ntfy \\(contact method \\d+\\), step 1; message id ${page.id}`),
    );
    // Every member reads the timeline; whoever knows the topic can press alice's Acknowledge.
    assert.ok(!JSON.stringify(events).includes('alice-pager'), 'the topic is not on the timeline');
  });

  test('pressing Acknowledge as the phone does acknowledges as alice; pressing again is a harmless 200', async () => {
    const { id } = await openPaged();
    await pass();
    const [page] = await pagesFor(id);
    const first = await pressHttpAction(page!.actions![0]!);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(first.body, { result: 'acknowledged', incident_id: id });
    const incident = (await server.request({ method: 'GET', url: `/api/incidents/${id}`, as: admin })).body;
    assert.equal(incident.status, 'acknowledged');
    assert.equal(incident.acknowledged_by, 'alice');
    const second = await pressHttpAction(page!.actions![0]!);
    assert.equal(second.status, 200);
    assert.deepEqual(second.body, { result: 'already acknowledged', incident_id: id });

    // Acknowledged: 10 minutes later the admins are not paged.
    clock.advance(11 * MINUTE);
    await pass();
    assert.equal((await timeline(id)).filter((e) => e.type === 'escalated').length, 1);
  });

  test("pressing Acknowledge in ntfy's web app (a browser on the ntfy server's origin) acknowledges, and a refusal shows as one", async () => {
    const { id } = await openPaged();
    await pass();
    const action = (await pagesFor(id))[0]!.actions![0]!;
    const pressed = await pressHttpActionInBrowser(action, 'https://ntfy.example.com');
    assert.equal(pressed.status, 200, JSON.stringify(pressed));
    assert.deepEqual('body' in pressed && pressed.body, { result: 'acknowledged', incident_id: id });
    const incident = (await server.request({ method: 'GET', url: `/api/incidents/${id}`, as: admin })).body;
    assert.equal(incident.status, 'acknowledged');
    // The app reads a refusal's status (and says so), rather than failing to fetch.
    const forged = await pressHttpActionInBrowser(
      { ...action, body: JSON.stringify({ token: 'not-a-capability' }) },
      'https://ntfy.example.com',
    );
    assert.equal(forged.status, 403, JSON.stringify(forged));
    await server.request({ method: 'POST', url: `/api/incidents/${id}/resolve`, as: admin });
  });

  test('an ntfy topic that ntfy keeps for itself (app, login, …) is refused when saved; every page to it would fail', async () => {
    // ntfy refuses to publish there: what terdut would meet at every page.
    const published = await fetch(`${ntfy.url}/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${NTFY_TOKEN}` },
      body: JSON.stringify({ topic: 'app', message: 'hello' }),
    });
    assert.equal(published.status, 400);
    for (const topic of ['app', 'login', 'v1']) {
      const added = await server.request({
        method: 'POST',
        url: `/api/users/${bob.id}/contact-methods`,
        as: bob,
        payload: { kind: 'ntfy', target: topic },
      });
      assert.equal(added.status, 400, `${topic}: ${JSON.stringify(added.body)}`);
      assert.match(added.body.error, /"target".*ntfy keeps/);
    }
    const set = await server.request({
      method: 'PUT',
      url: `/api/users/${bob.id}/notify`,
      as: bob,
      payload: { ntfy_topic: 'settings' },
    });
    assert.equal(set.status, 400, JSON.stringify(set.body));
    // Only the exact names: ntfy compares them as they are.
    const fine = await server.request({
      method: 'POST',
      url: `/api/users/${bob.id}/contact-methods`,
      as: bob,
      payload: { kind: 'ntfy', target: 'app-bob-7f3k' },
    });
    assert.equal(fine.status, 201, JSON.stringify(fine.body));
    await server.request({
      method: 'DELETE',
      url: `/api/users/${bob.id}/contact-methods/${fine.body.id}`,
      as: bob,
    });
  });

  test('an altered or expired capability is refused with 403 and changes nothing', async () => {
    const { id } = await openPaged();
    await pass();
    const action = (await pagesFor(id))[0]!.actions![0]!;
    const token = (JSON.parse(action.body!) as { token: string }).token;
    const [body, mac] = token.split('.');
    const claims = JSON.parse(Buffer.from(body!, 'base64url').toString()) as Record<string, unknown>;
    const forged = `${Buffer.from(JSON.stringify({ ...claims, i: id + 1000 })).toString('base64url')}.${mac}`;
    const altered = await pressHttpAction({ ...action, body: JSON.stringify({ token: forged }) });
    assert.equal(altered.status, 403);
    clock.advance(25 * 3_600_000);
    const expired = await pressHttpAction(action);
    assert.equal(expired.status, 403);
    assert.match(JSON.stringify(expired.body), /expired/);
    const incident = (await server.request({ method: 'GET', url: `/api/incidents/${id}`, as: admin })).body;
    assert.equal(incident.status, 'triggered');
    clock.set('2026-12-03T09:00:00Z');
    await server.request({ method: 'POST', url: `/api/incidents/${id}/resolve`, as: admin });
  });

  test('a routed policy: step 2 fires after its delay and not before, by signed webhook; acknowledging stops it', async () => {
    const created = await server.request({
      method: 'POST',
      url: '/api/escalation-policies',
      as: admin,
      payload: {
        name: 'database team',
        matchers: ['team=~"db|storage"'],
        steps: [
          { targets: [{ type: 'on_call' }] },
          { delay: '5m', targets: [{ type: 'user', user_id: bob.id }] },
        ],
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    try {
      const { id } = await openPaged({ team: 'db' });
      await pass();
      assert.equal((await pagesFor(id)).length, 1);
      clock.advance(5 * MINUTE - 1000);
      await pass();
      assert.equal(hooksFor(id).length, 0, 'not before its delay');
      clock.advance(2000);
      await pass();
      const [hook, ...more] = hooksFor(id);
      assert.ok(hook, 'bob paged after 5 minutes');
      assert.equal(more.length, 0);
      const timestamp = String(hook.headers['x-terdut-timestamp']);
      const expected = createHmac('sha256', bobHookSecret)
        .update(`${timestamp}.${hook.rawBody}`)
        .digest('hex');
      assert.equal(hook.headers['x-terdut-signature'], `sha256=${expected}`);
      assert.equal(hook.body.event, 'page');
      assert.equal(hook.body.step, 2);
      assert.equal(hook.body.person.username, 'bob');
      assert.equal(hook.body.incident.url, `${publicUrl}/incidents/${id}`);
      assert.equal(hook.body.acknowledge.url, `${publicUrl}/api/paging/acknowledge`);
      assert.match(
        (await timeline(id)).map((e) => e.detail).join('\n'),
        /step 2 of "database team": paging bob/,
      );

      // Another incident of the team, acknowledged after step 1: bob is never paged.
      const second = await openPaged({ team: 'storage' });
      await pass();
      await server.request({ method: 'POST', url: `/api/incidents/${second.id}/acknowledge`, as: alice });
      clock.advance(10 * MINUTE);
      await pass();
      assert.equal(hooksFor(second.id).length, 0);
    } finally {
      await server.request({
        method: 'DELETE',
        url: `/api/escalation-policies/${created.body.id}`,
        as: admin,
      });
    }
  });

  test('a step naming a user deleted since the policy was saved says so on the timeline and moves on at once', async () => {
    const leaver = await server.createUser('leaver');
    const created = await server.request({
      method: 'POST',
      url: '/api/escalation-policies',
      as: admin,
      payload: {
        name: 'leaver first',
        matchers: ['team="payments"'],
        steps: [
          { targets: [{ type: 'user', user_id: leaver.id }] },
          { delay: '30m', targets: [{ type: 'user', user_id: bob.id }] },
        ],
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    try {
      const deleted = await server.request({ method: 'DELETE', url: `/api/users/${leaver.id}`, as: admin });
      assert.equal(deleted.status, 204);
      const { id } = await openPaged({ team: 'payments' });
      await pass();
      const details = (await timeline(id)).map((e) => e.detail).join('\n');
      assert.match(
        details,
        new RegExp(`step 1 of "leaver first": nobody to page; skipped user ${leaver.id} \\(deleted\\)`),
      );
      assert.equal(hooksFor(id).length, 1, 'bob is paged at once');
      await server.request({ method: 'POST', url: `/api/incidents/${id}/resolve`, as: admin });
    } finally {
      await server.request({
        method: 'DELETE',
        url: `/api/escalation-policies/${created.body.id}`,
        as: admin,
      });
    }
  });

  test('a policy that reaches nobody now waits repeat_delay before each repeat, and pages whoever can be reached by then', async () => {
    const latecomer = await server.createUser('latecomer');
    const created = await server.request({
      method: 'POST',
      url: '/api/escalation-policies',
      as: admin,
      payload: {
        name: 'keep trying',
        matchers: ['team="search"'],
        steps: [{ targets: [{ type: 'user', user_id: latecomer.id }] }],
        repeat: 2,
        repeat_delay: '10m',
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    try {
      const { id } = await openPaged({ team: 'search' });
      await pass();
      const steps = async () =>
        (await timeline(id)).filter((e) => e.type === 'escalated' || e.type === 'escalation_finished');
      assert.deepEqual(
        (await steps()).map((e) => e.type),
        ['escalated'],
        'the repeats wait their repeat_delay; they did not all fire at once',
      );
      const method = await server.request({
        method: 'POST',
        url: `/api/users/${latecomer.id}/contact-methods`,
        as: latecomer,
        payload: { kind: 'webhook', target: receiver.url },
      });
      assert.equal(method.status, 201, JSON.stringify(method.body));
      clock.advance(10 * MINUTE);
      await pass();
      const [hook] = hooksFor(id);
      assert.equal(hook?.body.person.username, 'latecomer');
      assert.equal(hook?.body.repeat, 1);
      clock.advance(10 * MINUTE);
      await pass();
      assert.deepEqual(
        hooksFor(id).map((received) => received.body.repeat),
        [1, 2],
      );
      assert.equal((await steps()).at(-1)?.type, 'escalation_finished');
      await server.request({ method: 'POST', url: `/api/incidents/${id}/resolve`, as: admin });
    } finally {
      await server.request({
        method: 'DELETE',
        url: `/api/escalation-policies/${created.body.id}`,
        as: admin,
      });
    }
  });

  test('a snooze pauses paging; when it runs out unacknowledged, paging starts again at step 1', async () => {
    const { id } = await openPaged();
    await pass();
    assert.equal((await pagesFor(id)).length, 1);
    await server.request({
      method: 'POST',
      url: `/api/incidents/${id}/snooze`,
      as: alice,
      payload: { duration: '30m' },
    });
    clock.advance(15 * MINUTE);
    await pass();
    assert.equal((await pagesFor(id)).length, 1, 'nobody paged while snoozed (admins would be due at 10m)');
    clock.advance(16 * MINUTE);
    await pass();
    assert.equal((await pagesFor(id)).length, 2, 'alice paged again at step 1 after the snooze');
    const steps = (await timeline(id)).filter((e) => e.type === 'escalated').map((e) => e.detail);
    assert.deepEqual(
      steps.map((d) => /step (\d)/.exec(d ?? '')?.[1]),
      ['1', '1'],
    );
    await server.request({ method: 'POST', url: `/api/incidents/${id}/acknowledge`, as: alice });
  });

  test("taking the acknowledgement back restarts at step 1, and the first page's button no longer stops it", async () => {
    const { id } = await openPaged();
    await pass();
    const [firstPage] = await pagesFor(id);
    const pressed = await pressHttpAction(firstPage!.actions![0]!);
    assert.deepEqual(pressed.body, { result: 'acknowledged', incident_id: id });
    await server.request({ method: 'DELETE', url: `/api/incidents/${id}/acknowledge`, as: alice });
    await pass();
    const pages = await pagesFor(id);
    assert.equal(pages.length, 2);

    // Whoever still holds the first message is not who is being paged now.
    const stale = await pressHttpAction(firstPage!.actions![0]!);
    assert.equal(stale.status, 403);
    assert.match(
      (stale.body as { error: string }).error,
      /earlier page of incident \d+, which has been paged again since/,
    );
    const incident = (await server.request({ method: 'GET', url: `/api/incidents/${id}`, as: admin })).body;
    assert.equal(incident.status, 'triggered');

    const current = await pressHttpAction(pages[1]!.actions![0]!);
    assert.deepEqual(current.body, { result: 'acknowledged', incident_id: id });
    // Acknowledged again, the old button is as harmless as any second press.
    const again = await pressHttpAction(firstPage!.actions![0]!);
    assert.deepEqual(again.body, { result: 'already acknowledged', incident_id: id });
  });

  test('a new alert joining an acknowledged incident tells the acknowledger once; repeated notifications do not', async () => {
    const { id, payload, alert } = await openPaged({}, 'warning');
    await pass();
    await server.request({ method: 'POST', url: `/api/incidents/${id}/acknowledge`, as: alice });
    const joined = notification({
      groupKey: payload.groupKey,
      alerts: [alert, firingAlert({ name: 'Newcomer', severity: 'critical', labels: { instance: 'db-2' } })],
    });
    for (let i = 0; i < 3; i++) {
      // Alertmanager repeats the group's state; only the first one carries news.
      await server.request({ method: 'POST', url: '/api/webhook/alertmanager', payload: joined, as: admin });
      await pass();
    }
    const messages = await pagesFor(id);
    assert.equal(messages.length, 2, messages.map((m) => m.title).join(' | '));
    assert.match(messages[1]!.title ?? '', /^Update: /);
    assert.match(messages[1]!.message, /a new alert joined it \(severity now critical\)/);
    assert.match(messages[1]!.message, /Newcomer/);
    assert.equal(messages[1]!.actions, undefined);
    await server.request({ method: 'POST', url: `/api/incidents/${id}/resolve`, as: alice });
  });

  test('resolving sends everyone who was paged a short resolved message', async () => {
    const { id, alert, payload } = await openPaged();
    await pass();
    const resolved = notification({
      groupKey: payload.groupKey,
      alerts: [resolvedAlert({ ...alertSpec(alert) })],
    });
    await server.request({ method: 'POST', url: '/api/webhook/alertmanager', payload: resolved, as: admin });
    await pass();
    const messages = await pagesFor(id);
    assert.equal(messages.length, 2);
    assert.match(messages[1]!.title ?? '', /^Resolved: /);
    assert.equal(messages[1]!.actions, undefined, 'nothing to acknowledge any more');
    assert.match((await timeline(id)).map((e) => e.detail).join('\n'), /resolved notice/);
  });

  test('a page still on its way when the incident resolves is followed by the resolved message', async () => {
    // gina's receiver is slow: the incident resolves while her page is being sent.
    const gina = await server.createUser('gina');
    const received: { event: string; incident: { id: number } }[] = [];
    const slow = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as (typeof received)[number];
        received.push(body);
        const resolving =
          body.event === 'page'
            ? server.request({ method: 'POST', url: `/api/incidents/${body.incident.id}/resolve`, as: admin })
            : Promise.resolve();
        void resolving.then(() => res.writeHead(200).end());
      });
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const method = await server.request({
      method: 'POST',
      url: `/api/users/${gina.id}/contact-methods`,
      as: gina,
      payload: { kind: 'webhook', target: `http://127.0.0.1:${(slow.address() as AddressInfo).port}/` },
    });
    assert.equal(method.status, 201, JSON.stringify(method.body));
    const policy = await server.request({
      method: 'POST',
      url: '/api/escalation-policies',
      as: admin,
      payload: {
        name: 'in flight',
        matchers: ['team="inflight"'],
        steps: [{ targets: [{ type: 'user', user_id: gina.id }] }],
      },
    });
    assert.equal(policy.status, 201, JSON.stringify(policy.body));
    try {
      const { id } = await openPaged({ team: 'inflight' });
      await pass();
      assert.equal(
        (await server.request({ method: 'GET', url: `/api/incidents/${id}`, as: admin })).body.status,
        'resolved',
      );
      await pass();
      assert.deepEqual(
        received.map((body) => body.event),
        ['page', 'resolved'],
      );
      // The page is step 1 with its alerts; the notice is no step of the escalation and lists none.
      const [page, notice] = received as unknown as Record<string, unknown>[];
      assert.equal(page!.step, 1);
      assert.equal((page!.alerts as unknown[]).length, 1);
      assert.equal('step' in notice!, false);
      assert.equal('alerts' in notice!, false);
    } finally {
      await server.request({
        method: 'DELETE',
        url: `/api/escalation-policies/${policy.body.id}`,
        as: admin,
      });
      await new Promise<void>((resolve) => slow.close(() => resolve()));
    }
  });

  test('a page that fails for good after its incident was acknowledged stays cancelled: no notification_failed on a handled incident', async () => {
    // ivan's receiver refuses the page (410, final), but only after the incident was acknowledged meanwhile.
    const ivan = await server.createUser('ivan');
    const refusing = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { incident: { id: number } };
        void server
          .request({ method: 'POST', url: `/api/incidents/${body.incident.id}/acknowledge`, as: admin })
          .then(() => res.writeHead(410).end('gone'));
      });
    });
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    const method = await server.request({
      method: 'POST',
      url: `/api/users/${ivan.id}/contact-methods`,
      as: ivan,
      payload: { kind: 'webhook', target: `http://127.0.0.1:${(refusing.address() as AddressInfo).port}/` },
    });
    assert.equal(method.status, 201, JSON.stringify(method.body));
    const policy = await server.request({
      method: 'POST',
      url: '/api/escalation-policies',
      as: admin,
      payload: {
        name: 'refused late',
        matchers: ['team="refusedlate"'],
        steps: [{ targets: [{ type: 'user', user_id: ivan.id }] }],
      },
    });
    assert.equal(policy.status, 201, JSON.stringify(policy.body));
    try {
      const { id } = await openPaged({ team: 'refusedlate' });
      await pass();
      assert.equal(
        (await server.request({ method: 'GET', url: `/api/incidents/${id}`, as: admin })).body.status,
        'acknowledged',
      );
      const types = (await timeline(id)).map((e) => e.type);
      assert.ok(types.includes('acknowledged'));
      assert.ok(!types.includes('notification_failed'), `timeline: ${types.join(', ')}`);
      const rows = await database().query<{ state: string }>(
        'SELECT state FROM page_deliveries WHERE incident_id = $1',
        [id],
      );
      assert.deepEqual(rows.rows, [{ state: 'cancelled' }]);
      await server.request({ method: 'POST', url: `/api/incidents/${id}/resolve`, as: admin });
    } finally {
      await server.request({
        method: 'DELETE',
        url: `/api/escalation-policies/${policy.body.id}`,
        as: admin,
      });
      await new Promise<void>((resolve) => refusing.close(() => resolve()));
    }
  });

  test('nobody on call: the built-in default pages every admin at once; an admin without a contact method is skipped and the timeline says so', async () => {
    clock.set('2026-12-10T09:00:00Z'); // nobody is on call that day
    try {
      const { id } = await openPaged();
      await pass();
      await pass();
      const details = (await timeline(id)).filter((e) => e.type === 'escalated').map((e) => e.detail);
      assert.match(details[0] ?? '', /step 1 of "built-in default": nobody to page/);
      assert.match(
        details[1] ?? '',
        /step 2 of "built-in default": nobody to page; skipped page-admin \(no working contact method\)/,
      );
      assert.ok((await timeline(id)).some((e) => e.type === 'escalation_finished'));
      await server.request({ method: 'POST', url: `/api/incidents/${id}/resolve`, as: admin });
    } finally {
      clock.set('2026-12-03T09:00:00Z');
    }
  });

  test('ntfy answering 429 is retried later and delivered; the timeline shows the attempts', async () => {
    ntfy.limitNext(2);
    const { id } = await openPaged();
    await pass();
    assert.equal((await pagesFor(id)).length, 0);
    for (let i = 0; i < 2; i++) {
      clock.advance(MINUTE);
      await pass();
    }
    assert.equal((await pagesFor(id)).length, 1);
    const notified = (await timeline(id)).find((e) => e.type === 'notified');
    assert.match(notified?.detail ?? '', /delivered on attempt 3/);
    await server.request({ method: 'POST', url: `/api/incidents/${id}/acknowledge`, as: alice });
  });

  test('a page with a very long summary still reaches the phone, shortened to what ntfy takes as a message', async () => {
    // Alertmanager allows annotations of 16 KiB; ntfy takes a message under
    // 4096 bytes and a JSON publish under twice that (NTFY_MESSAGE_SIZE_LIMIT).
    const summary = 'Replication lag on db-ü is growing; see the runbook. '.repeat(150);
    const { id } = await openIncident(server, admin, {
      name: 'LongSummary',
      severity: 'critical',
      annotations: { summary },
    });
    await pass();
    const [page] = await pagesFor(id);
    assert.ok(page, JSON.stringify((await timeline(id)).filter((e) => e.type === 'notification_failed')));
    assert.ok(page.title?.startsWith('Replication lag on db-ü is growing'));
    assert.ok(page.title?.endsWith('…'));
    assert.match(page.message, /^1 alert firing: LongSummary\n- LongSummary: Replication lag/);
    assert.ok(page.message.endsWith('…'));
    assert.ok(Buffer.byteLength(page.message) < NTFY_MESSAGE_SIZE_LIMIT);
    assert.deepEqual(
      page.actions?.map((action) => action.label),
      ['Acknowledge', 'Resolve…'],
    );
    await server.request({ method: 'POST', url: `/api/incidents/${id}/acknowledge`, as: alice });
  });

  test('the provider down (connection refused) for a while: delivered afterwards; longer than the budget: notification_failed and the escalation moves on', async () => {
    const downPort = await freeLoopbackPort();
    const carol = await server.createUser('carol');
    const dave = await server.createUser('dave');
    await server.request({
      method: 'POST',
      url: `/api/users/${carol.id}/contact-methods`,
      as: carol,
      payload: {
        kind: 'webhook',
        target: `http://127.0.0.1:${downPort}/hook`,
        secret: 'carol-secret-0123456789',
      },
    });
    const daveHook = await server.request({
      method: 'POST',
      url: `/api/users/${dave.id}/contact-methods`,
      as: dave,
      payload: { kind: 'webhook', target: receiver.url },
    });
    assert.equal(daveHook.status, 201);
    const policy = await server.request({
      method: 'POST',
      url: '/api/escalation-policies',
      as: admin,
      payload: {
        name: 'carol then dave',
        matchers: ['route="carol"'],
        steps: [
          { targets: [{ type: 'user', user_id: carol.id }] },
          { delay: '30m', targets: [{ type: 'user', user_id: dave.id }] },
        ],
      },
    });
    assert.equal(policy.status, 201, JSON.stringify(policy.body));

    // Down for two minutes, then back.
    const first = await openPaged({ route: 'carol' });
    await pass();
    clock.advance(MINUTE);
    await pass();
    const late = await startWebhookReceiver(downPort);
    try {
      clock.advance(MINUTE);
      await pass();
      assert.equal(late.received.filter((h) => h.body?.incident?.id === first.id).length, 1);
      const notified = (await timeline(first.id)).find((e) => e.type === 'notified');
      assert.match(notified?.detail ?? '', /delivered on attempt 3/);
      await server.request({ method: 'POST', url: `/api/incidents/${first.id}/acknowledge`, as: carol });
    } finally {
      await late.close();
    }

    // Down for longer than the 10-minute budget.
    const second = await openPaged({ route: 'carol' });
    await pass();
    for (let minute = 0; minute < 11; minute++) {
      clock.advance(MINUTE);
      await pass();
    }
    const events = await timeline(second.id);
    const failed = events.find((e) => e.type === 'notification_failed');
    assert.equal(failed?.username, 'carol');
    assert.match(
      failed?.detail ?? '',
      /webhook .*not reachable \(ECONNREFUSED\); gave up after \d+ attempts in 10m/,
    );
    assert.ok(
      hooksFor(second.id).some((h) => h.body.person.username === 'dave'),
      'dave paged without waiting 30m',
    );
    assert.match(events.map((e) => e.detail).join('\n'), /step 2 of "carol then dave": paging dave/);
    await server.request({ method: 'POST', url: `/api/incidents/${second.id}/resolve`, as: admin });
    await server.request({ method: 'DELETE', url: `/api/escalation-policies/${policy.body.id}`, as: admin });
  });

  test('an ntfy_topic changed after its page was decided gets the page at the new topic; one cleared gets none, and the escalation moves on', async () => {
    const tara = await server.createUser('tara');
    const setTopic = async (topic: string) => {
      const set = await server.request({
        method: 'PUT',
        url: `/api/users/${tara.id}/notify`,
        as: tara,
        payload: { ntfy_topic: topic },
      });
      assert.equal(set.status, 200, JSON.stringify(set.body));
    };
    const policy = await server.request({
      method: 'POST',
      url: '/api/escalation-policies',
      as: admin,
      payload: {
        name: 'tara then bob',
        matchers: ['route="tara"'],
        steps: [
          { targets: [{ type: 'user', user_id: tara.id }] },
          { delay: '30m', targets: [{ type: 'user', user_id: bob.id }] },
        ],
      },
    });
    assert.equal(policy.status, 201, JSON.stringify(policy.body));
    const onTopic = async (topic: string, id: number) =>
      (await pollTopic(ntfy.url, topic, NTFY_TOKEN)).filter(
        (m) => m.click === `${publicUrl}/incidents/${id}`,
      );
    try {
      // The step decides tara's page; before it is sent she moves to a new topic (the old one leaked).
      await setTopic('tara-leaked-topic');
      const moved = await openPaged({ route: 'tara' });
      await server.app.services.paging.escalate();
      await setTopic('tara-new-topic');
      await server.app.services.paging.deliver();
      assert.equal((await onTopic('tara-leaked-topic', moved.id)).length, 0, 'nothing to the old topic');
      const [page] = await onTopic('tara-new-topic', moved.id);
      assert.ok(page, JSON.stringify(await timeline(moved.id)));
      assert.equal((await pressHttpAction(page.actions![0]!)).status, 200);

      // She clears it before the next page is sent: no page anywhere, and bob need not wait 30m.
      const cleared = await openPaged({ route: 'tara' });
      await server.app.services.paging.escalate();
      await setTopic(''); // the contract's way to clear it
      await pass();
      assert.equal((await onTopic('tara-new-topic', cleared.id)).length, 0);
      assert.equal((await onTopic('tara-leaked-topic', cleared.id)).length, 0);
      const events = await timeline(cleared.id);
      assert.match(
        events.find((e) => e.type === 'notification_failed')?.detail ?? '',
        /^ntfy \(ntfy_topic\), step 1: tara has cleared their ntfy_topic$/,
      );
      await pass(); // step 2 is due at once, not in 30 minutes
      assert.ok(hooksFor(cleared.id).some((hook) => hook.body.person.username === 'bob'));
      await server.request({ method: 'POST', url: `/api/incidents/${cleared.id}/resolve`, as: admin });
    } finally {
      await server.request({
        method: 'DELETE',
        url: `/api/escalation-policies/${policy.body.id}`,
        as: admin,
      });
    }
  });

  test("a failed page on a policy's last step does not cut the repeat_delay before the next pass", async () => {
    // kai's receiver refuses every page for good (410): each page fails at once.
    const kai = await server.createUser('kai');
    let refused = 0;
    const refusing = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        refused++;
        res.writeHead(410).end();
      });
    });
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    const method = await server.request({
      method: 'POST',
      url: `/api/users/${kai.id}/contact-methods`,
      as: kai,
      payload: { kind: 'webhook', target: `http://127.0.0.1:${(refusing.address() as AddressInfo).port}/` },
    });
    assert.equal(method.status, 201, JSON.stringify(method.body));
    const policy = await server.request({
      method: 'POST',
      url: '/api/escalation-policies',
      as: admin,
      payload: {
        name: 'kai twice',
        matchers: ['route="refused"'],
        steps: [{ targets: [{ type: 'user', user_id: kai.id }] }],
        repeat: 1,
        repeat_delay: '10m',
      },
    });
    assert.equal(policy.status, 201, JSON.stringify(policy.body));
    try {
      const { id } = await openPaged({ route: 'refused' });
      await pass();
      await pass();
      assert.ok((await timeline(id)).some((e) => e.type === 'notification_failed'));
      assert.equal(refused, 1, 'the repeat waits its 10 minutes, as after a step that reached nobody');
      clock.advance(10 * MINUTE + 1000);
      await pass();
      await pass();
      assert.equal(refused, 2);
      await server.request({ method: 'POST', url: `/api/incidents/${id}/resolve`, as: admin });
    } finally {
      await server.request({
        method: 'DELETE',
        url: `/api/escalation-policies/${policy.body.id}`,
        as: admin,
      });
      await new Promise<void>((resolve) => refusing.close(() => resolve()));
    }
  });

  test('a late failure of an earlier step does not cut the delay of the step waiting now', async () => {
    const downPort = await freeLoopbackPort();
    const [gus, hal, ivy] = [
      await server.createUser('gus'),
      await server.createUser('hal'),
      await server.createUser('ivy'),
    ];
    await server.request({
      method: 'POST',
      url: `/api/users/${gus.id}/contact-methods`,
      as: gus,
      payload: {
        kind: 'webhook',
        target: `http://127.0.0.1:${downPort}/hook`,
        secret: 'gus-secret-0123456789',
      },
    });
    for (const person of [hal, ivy]) {
      await server.request({
        method: 'POST',
        url: `/api/users/${person.id}/contact-methods`,
        as: person,
        payload: { kind: 'webhook', target: receiver.url },
      });
    }
    const policy = await server.request({
      method: 'POST',
      url: '/api/escalation-policies',
      as: admin,
      payload: {
        name: 'gus, hal, ivy',
        matchers: ['route="late"'],
        steps: [
          { targets: [{ type: 'user', user_id: gus.id }] },
          { delay: '5m', targets: [{ type: 'user', user_id: hal.id }] },
          { delay: '30m', targets: [{ type: 'user', user_id: ivy.id }] },
        ],
      },
    });
    assert.equal(policy.status, 201, JSON.stringify(policy.body));
    const paged = (id: number, username: string) =>
      hooksFor(id).filter((h) => h.body.person.username === username).length;

    const incident = await openPaged({ route: 'late' });
    await pass();
    // Step 2 reaches hal after 5 minutes; gus's step-1 message fails after the 10-minute budget.
    for (let minute = 1; minute <= 12; minute++) {
      clock.advance(MINUTE);
      await pass();
    }
    assert.equal(paged(incident.id, 'hal'), 1);
    const events = await timeline(incident.id);
    assert.ok(events.some((e) => e.type === 'notification_failed' && e.username === 'gus'));
    assert.equal(paged(incident.id, 'ivy'), 0, 'step 3 waits its 30 minutes after step 2');

    clock.advance(22 * MINUTE); // 34 minutes after the start: still before step 3
    await pass();
    assert.equal(paged(incident.id, 'ivy'), 0);
    clock.advance(MINUTE + 1000); // 35 minutes: 5 + 30
    await pass();
    assert.equal(paged(incident.id, 'ivy'), 1);
    await server.request({ method: 'POST', url: `/api/incidents/${incident.id}/resolve`, as: admin });
    await server.request({ method: 'DELETE', url: `/api/escalation-policies/${policy.body.id}`, as: admin });
  });

  test('a receiver that redirects is named with where it points, without the path or query of that address', async () => {
    const methods = await server.request({
      method: 'GET',
      url: `/api/users/${bob.id}/contact-methods`,
      as: bob,
    });
    const testUrl = `/api/users/${bob.id}/contact-methods/${methods.body[0].id}/test`;
    receiver.answer(301, { location: 'https://hooks.example.com/moved/here?token=s3cr3t' });
    try {
      const moved = await server.request({ method: 'POST', url: testUrl, as: bob });
      assert.equal(moved.status, 200);
      assert.equal(moved.body.delivered, false);
      assert.match(
        moved.body.answer,
        /webhook answered HTTP 301, a redirect to https:\/\/hooks\.example\.com: .*the address it redirects to/,
      );
      assert.doesNotMatch(moved.body.answer, /moved|s3cr3t/);
      assert.equal(receiver.received.at(-1)?.body?.event, 'test', 'sent once, not followed');
    } finally {
      receiver.answer(200);
    }
  });

  test("a 4xx that will never succeed fails at once with the provider's answer, and POST …/test reports it too", async () => {
    const methods = await server.request({
      method: 'GET',
      url: `/api/users/${bob.id}/contact-methods`,
      as: bob,
    });
    const testUrl = `/api/users/${bob.id}/contact-methods/${methods.body[0].id}/test`;
    const ok = await server.request({ method: 'POST', url: testUrl, as: bob });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.delivered, true);
    // A second test is another message: a receiver dropping repeated X-Terdut-Delivery ids shows it too.
    await server.request({ method: 'POST', url: testUrl, as: bob });
    const tests = receiver.received.filter((hook) => hook.body?.event === 'test').slice(-2);
    assert.equal(tests.length, 2);
    assert.notEqual(tests[0]!.headers['x-terdut-delivery'], tests[1]!.headers['x-terdut-delivery']);
    receiver.answer(410);
    try {
      const refused = await server.request({ method: 'POST', url: testUrl, as: bob });
      assert.equal(refused.body.delivered, false);
      assert.match(refused.body.answer, /webhook answered HTTP 410/);

      const policy = await server.request({
        method: 'POST',
        url: '/api/escalation-policies',
        as: admin,
        payload: {
          name: 'bob only',
          matchers: ['route="bob"'],
          steps: [{ targets: [{ type: 'user', user_id: bob.id }] }],
        },
      });
      const { id } = await openPaged({ route: 'bob' });
      await pass();
      const failed = (await timeline(id)).find((e) => e.type === 'notification_failed');
      assert.match(failed?.detail ?? '', /webhook answered HTTP 410: \{"error":"receiver refuses"\}$/);
      const rows = await database().query<{ attempts: number; state: string }>(
        'SELECT attempts, state FROM page_deliveries WHERE incident_id = $1',
        [id],
      );
      assert.deepEqual(rows.rows, [{ attempts: 1, state: 'failed' }]);
      await server.request({ method: 'POST', url: `/api/incidents/${id}/resolve`, as: admin });
      await server.request({
        method: 'DELETE',
        url: `/api/escalation-policies/${policy.body.id}`,
        as: admin,
      });
    } finally {
      receiver.answer(200);
    }
  });
});

/** The AlertSpec that rebuilds `alert` (same labels and start, so the same fingerprint). */
function alertSpec(alert: ReturnType<typeof firingAlert>) {
  const { alertname, severity, ...labels } = alert.labels;
  return {
    name: alertname!,
    ...(severity !== undefined ? { severity } : {}),
    labels,
    annotations: alert.annotations,
    startsAt: alert.startsAt,
  };
}
