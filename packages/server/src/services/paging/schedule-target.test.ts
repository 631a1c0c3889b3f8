/**
 * An escalation step that pages "whoever is on call in schedule S" (issue 13),
 * on both databases: the worker asks that schedule, not the default one, and
 * a schedule id that does not exist is refused when the policy is saved. A
 * schedule a policy's step pages cannot be deleted (409 naming the steps); an
 * escalation that started before its schedule went says so and moves on.
 * Pages go through the ntfy STAND-IN and a real webhook receiver on loopback.
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
  openIncident,
  startWebhookReceiver,
  type WebhookReceiver,
} from '@terdut/test-support';

const NTFY_TOKEN = 'tk_standintoken0123456789abcdef';

forEachDatabase('escalation step targeting a schedule', (database) => {
  let server: TestApp;
  let ntfy: NtfyStandin;
  let receiver: WebhookReceiver;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  let databases: number;
  const clock = new ManualClock('2026-12-03T09:00:00Z');

  before(async () => {
    ntfy = await startNtfyStandin({ token: NTFY_TOKEN });
    receiver = await startWebhookReceiver();
    server = await startTestApp(database(), {
      clock,
      config: testConfig({ TERDUT_NTFY_URL: ntfy.url, TERDUT_NTFY_TOKEN: NTFY_TOKEN }),
    });
    admin = await server.createUser('target-admin', 'admin');
    alice = await server.createUser('alice');
    bob = await server.createUser('bob');
    // Alice is on call in the default schedule, Bob in "Databases".
    const day = await server.request({
      method: 'POST',
      url: '/api/schedule',
      as: admin,
      payload: { user_id: alice.id, dates: ['2026-12-03'] },
    });
    assert.equal(day.status, 201, JSON.stringify(day.body));
    const created = await server.request({
      method: 'POST',
      url: '/api/schedules',
      as: admin,
      payload: { name: 'Databases', time_zone: 'Europe/Berlin' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    databases = created.body.id;
    const override = await server.request({
      method: 'POST',
      url: `/api/schedules/${databases}/overrides`,
      as: admin,
      payload: { user_id: bob.id, starts_at: '2026-12-03T00:00:00Z', ends_at: '2026-12-04T00:00:00Z' },
    });
    assert.equal(override.status, 201, JSON.stringify(override.body));
    for (const [person, payload] of [
      [alice, { kind: 'ntfy', target: 'alice-pager' }],
      [bob, { kind: 'webhook', target: receiver.url }],
    ] as const) {
      const method = await server.request({
        method: 'POST',
        url: `/api/users/${person.id}/contact-methods`,
        as: person,
        payload,
      });
      assert.equal(method.status, 201, JSON.stringify(method.body));
    }
  });
  after(async () => {
    await server.close();
    await ntfy.close();
    await receiver.close();
  });

  test('a step naming a schedule that does not exist is refused, naming the field', async () => {
    const response = await server.request({
      method: 'POST',
      url: '/api/escalation-policies',
      as: admin,
      payload: {
        name: 'Ghost',
        steps: [{ targets: [{ type: 'admins' }, { type: 'on_call', schedule_id: 9999 }] }],
      },
    });
    assert.equal(response.status, 400);
    assert.match(response.body.error, /"steps\.0\.targets\.1\.schedule_id": schedule 9999 does not exist/);
  });

  test('a policy paging the on-call person of "Databases" pages Bob, not the default schedule\'s Alice', async () => {
    const policy = await server.request({
      method: 'POST',
      url: '/api/escalation-policies',
      as: admin,
      payload: {
        name: 'Databases',
        default: true,
        steps: [{ targets: [{ type: 'on_call', schedule_id: databases }] }],
      },
    });
    assert.equal(policy.status, 201, JSON.stringify(policy.body));
    assert.deepEqual(policy.body.steps[0].targets, [{ type: 'on_call', schedule_id: databases }]);

    const opened = await server.request({
      method: 'POST',
      url: '/api/webhook/alertmanager',
      as: admin,
      payload: notification({ groupKey: 'db-target', alerts: [firingAlert({ name: 'ReplicaLag' })] }),
    });
    assert.equal(opened.status, 200, JSON.stringify(opened.body));
    await server.app.services.paging.runOnce();

    const pages = receiver.received.filter((hook) => hook.body?.event === 'page');
    assert.equal(pages.length, 1, JSON.stringify(receiver.received.map((hook) => hook.body)));
    assert.equal(pages[0]!.body.person.username, 'bob');
    assert.deepEqual(await pollTopic(ntfy.url, 'alice-pager', NTFY_TOKEN), []);
  });

  const call = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
    server.request({ method, url, as: admin, ...(payload ? { payload } : {}) });
  const timeline = async (id: number) =>
    ((await call('GET', `/api/incidents/${id}/timeline`)).body as { type: string; detail: string }[])
      .map((event) => event.detail)
      .join('\n');

  test('deleting a schedule that policies page is refused with 409 naming each policy and step; after the steps change it goes', async () => {
    const payments = (await call('POST', '/api/schedules', { name: 'Payments', time_zone: 'UTC' })).body.id;
    const dbTeam = await call('POST', '/api/escalation-policies', {
      name: 'DB team',
      matchers: ['team="db"'],
      steps: [
        { targets: [{ type: 'admins' }] },
        {
          delay: '5m',
          targets: [
            { type: 'user', user_id: alice.id },
            { type: 'on_call', schedule_id: payments },
          ],
        },
      ],
    });
    assert.equal(dbTeam.status, 201, JSON.stringify(dbTeam.body));
    const nights = await call('POST', '/api/escalation-policies', {
      name: 'Payments nights',
      matchers: ['team="payments"'],
      steps: [
        { targets: [{ type: 'on_call', schedule_id: payments }] },
        { delay: '5m', targets: [{ type: 'admins' }] },
        { delay: '5m', targets: [{ type: 'on_call', schedule_id: payments }, { type: 'admins' }] },
      ],
    });
    assert.equal(nights.status, 201, JSON.stringify(nights.body));

    const refused = await call('DELETE', `/api/schedules/${payments}`);
    assert.equal(refused.status, 409);
    assert.equal(
      refused.body.error,
      `schedule Payments is paged by policy 'DB team' step 2, policy 'Payments nights' steps 1 and 3; ` +
        'change those steps first (PUT /api/escalation-policies/{id}), then delete the schedule',
    );
    assert.equal(
      (await call('GET', `/api/schedules/${payments}`)).status,
      200,
      'the schedule is still there',
    );

    // Deleting one policy and changing the other's steps frees the schedule.
    assert.equal((await call('DELETE', `/api/escalation-policies/${nights.body.id}`)).status, 204);
    const still = await call('DELETE', `/api/schedules/${payments}`);
    assert.equal(still.status, 409);
    assert.match(still.body.error, /^schedule Payments is paged by policy 'DB team' step 2;/);
    const changed = await call('PUT', `/api/escalation-policies/${dbTeam.body.id}`, {
      name: 'DB team',
      matchers: ['team="db"'],
      steps: [
        { targets: [{ type: 'admins' }] },
        { delay: '5m', targets: [{ type: 'user', user_id: alice.id }] },
      ],
    });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    assert.equal((await call('DELETE', `/api/schedules/${payments}`)).status, 204);
    assert.equal((await call('DELETE', `/api/escalation-policies/${dbTeam.body.id}`)).status, 204);
  });

  test('an escalation that started before its schedule was deleted says so on the timeline and moves on to the next step at once', async () => {
    const search = (await call('POST', '/api/schedules', { name: 'Search', time_zone: 'UTC' })).body.id;
    const steps = (middle: object[]) => [
      { targets: [{ type: 'user', user_id: alice.id }] },
      { delay: '5m', targets: middle },
      { delay: '5m', targets: [{ type: 'user', user_id: bob.id }] },
    ];
    const policy = await call('POST', '/api/escalation-policies', {
      name: 'Search team',
      matchers: ['team="search"'],
      steps: steps([{ type: 'on_call', schedule_id: search }]),
    });
    assert.equal(policy.status, 201, JSON.stringify(policy.body));
    const incident = await openIncident(server, admin, {
      groupKey: 'search-gone',
      name: 'IndexStale',
      labels: { team: 'search' },
    });
    await server.app.services.paging.runOnce();
    assert.match(await timeline(incident.id), /step 1 of "Search team": paging alice/);

    // The policy stops paging Search, so Search may go; the running escalation keeps its copy.
    const changed = await call('PUT', `/api/escalation-policies/${policy.body.id}`, {
      name: 'Search team',
      matchers: ['team="search"'],
      steps: steps([{ type: 'admins' }]),
    });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    assert.equal((await call('DELETE', `/api/schedules/${search}`)).status, 204);

    const before = receiver.received.length;
    clock.advance(5 * 60_000);
    await server.app.services.paging.runOnce();
    const details = await timeline(incident.id);
    assert.match(
      details,
      new RegExp(`step 2 of "Search team": nobody to page; skipped schedule ${search} \\(deleted\\)`),
    );
    assert.match(details, /step 3 of "Search team": paging bob/, 'step 3 fired at once, not 5 minutes later');
    const pages = receiver.received.slice(before).filter((hook) => hook.body?.event === 'page');
    assert.deepEqual(
      pages.map((hook) => [hook.body.person.username, hook.body.step]),
      [['bob', 3]],
    );
    await call('POST', `/api/incidents/${incident.id}/resolve`);
    await call('DELETE', `/api/escalation-policies/${policy.body.id}`);
  });

  test('GET /api/paging/me: on call in the Databases schedule is on call now, and without a contact method is warned so', async () => {
    const me = await server.request({ method: 'GET', url: '/api/paging/me', as: bob });
    assert.deepEqual(me.body, { on_call_now: true, working_contact_methods: 1 });
    const methods = await server.request({
      method: 'GET',
      url: `/api/users/${bob.id}/contact-methods`,
      as: bob,
    });
    for (const method of methods.body) {
      await server.request({
        method: 'PATCH',
        url: `/api/users/${bob.id}/contact-methods/${method.id}`,
        as: bob,
        payload: { enabled: false },
      });
    }
    const unreachable = await server.request({ method: 'GET', url: '/api/paging/me', as: bob });
    assert.equal(unreachable.body.on_call_now, true);
    assert.match(unreachable.body.warning, /on call now but have no working contact method/);
    for (const method of methods.body) {
      await server.request({
        method: 'PATCH',
        url: `/api/users/${bob.id}/contact-methods/${method.id}`,
        as: bob,
        payload: { enabled: true },
      });
    }
  });
});
