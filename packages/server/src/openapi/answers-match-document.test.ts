/**
 * A real app's answers held to its own OpenAPI document, the way a client
 * generated from the document reads them: every status is one the operation
 * documents, the content type is the documented one, and the body validates
 * against the documented schema (JSON Schema 2020-12, formats checked). A
 * broad sample of operations, successes and refusals, on both databases.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  forEachDatabase,
  ManualClock,
  openIncident,
  startTestApp,
  type TestApp,
  type TestUser,
} from '@terdut/test-support';
import { answerValidator, type OpenApiDocument } from './answer-conformance.ts';

forEachDatabase('answers match the OpenAPI document', (database) => {
  let server: TestApp;
  let check: ReturnType<typeof answerValidator>;
  let admin: TestUser;
  let member: TestUser;
  let alertmanager: TestUser;
  const clock = new ManualClock('2026-07-27T10:00:00Z');

  before(async () => {
    server = await startTestApp(database(), { clock });
    const document = (await server.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    check = answerValidator(document as OpenApiDocument);
    admin = await server.createUser('admin-openapi', 'admin');
    member = await server.createUser('member-openapi', 'member');
    alertmanager = await server.createUser('am-openapi', 'member');
  });
  after(() => server.close());

  /**
   * Calls the app and fails unless the answer is what the document promises
   * for it and has the status `expected`; returns the parsed body.
   */
  async function call(
    expected: number,
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    options: { as?: TestUser | null; payload?: unknown; headers?: Record<string, string> } = {},
  ): Promise<any> {
    const as = options.as === undefined ? admin : options.as;
    const headers: Record<string, string> = { ...options.headers };
    if (as !== null) headers.authorization = `Bearer ${as.key}`;
    const answer = await server.app.inject({
      method,
      url,
      headers,
      ...(options.payload !== undefined ? { payload: options.payload as object } : {}),
    });
    assert.deepEqual(check.problems(method, url, answer), [], `${method} ${url}`);
    assert.equal(answer.statusCode, expected, `${method} ${url}: ${answer.body.slice(0, 300)}`);
    return answer.body.length > 0 && /json/.test(String(answer.headers['content-type']))
      ? answer.json()
      : answer.body;
  }

  test('the checker itself refuses an undocumented status and a body off its schema', () => {
    const ok = {
      statusCode: 200,
      headers: { 'content-type': 'application/json' },
      body: '{"bootstrapped":true}',
    };
    assert.deepEqual(check.problems('GET', '/api/bootstrap', ok), []);
    assert.match(check.problems('GET', '/api/bootstrap', { ...ok, statusCode: 418 })[0]!, /418/);
    assert.match(check.problems('GET', '/api/bootstrap', { ...ok, body: '{}' })[0]!, /bootstrapped/);
    assert.match(
      check.problems('GET', '/api/bootstrap', { ...ok, headers: { 'content-type': 'text/html' } })[0]!,
      /text\/html/,
    );
  });

  test('public operations', async () => {
    await call(200, 'GET', '/api/bootstrap', { as: null });
    await call(200, 'GET', '/api/server-info', { as: null });
    await call(404, 'GET', '/api/calendar/0-nosuchsecret.ics', { as: null });
    await call(400, 'POST', '/api/paging/acknowledge', { as: null, payload: {} });
    await call(403, 'POST', '/api/paging/acknowledge', { as: null, payload: { token: 'forged' } });
    await call(401, 'POST', '/auth/login', {
      as: null,
      payload: { username: 'nobody', password: 'x'.repeat(12) },
    });
    await call(204, 'POST', '/auth/logout', { as: null });
  });

  test('incidents: list, get, timeline, every action, and their refusals', async () => {
    const { id } = await openIncident(server, alertmanager, { severity: 'critical' });
    const list = await call(200, 'GET', '/api/incidents');
    assert.ok(list.some((incident: { id: number }) => incident.id === id));
    await call(200, 'GET', '/api/incidents?status=triggered&limit=5');
    await call(400, 'GET', '/api/incidents?limit=5000');
    await call(401, 'GET', '/api/incidents', { as: null });
    await call(200, 'GET', `/api/incidents/${id}`, { as: member });
    await call(200, 'GET', `/api/incidents/${id}/timeline`);
    await call(400, 'GET', '/api/incidents/0x10');
    await call(404, 'GET', '/api/incidents/999999');
    await call(200, 'POST', `/api/incidents/${id}/acknowledge`, { as: member });
    await call(204, 'DELETE', `/api/incidents/${id}/acknowledge`, { as: member });
    await call(200, 'POST', `/api/incidents/${id}/assign`, { payload: { user_id: member.id } });
    await call(404, 'POST', `/api/incidents/${id}/assign`, { payload: { user_id: 999999 } });
    await call(400, 'POST', `/api/incidents/${id}/assign`, { payload: { user_id: '3' } });
    await call(200, 'POST', `/api/incidents/${id}/snooze`, { payload: { duration: '1h' } });
    await call(400, 'POST', `/api/incidents/${id}/snooze`, { payload: { duration: 'soon' } });
    await call(204, 'DELETE', `/api/incidents/${id}/snooze`);
    const note = await call(201, 'POST', `/api/incidents/${id}/notes`, { payload: { content: 'looking' } });
    await call(204, 'DELETE', `/api/incidents/${id}/notes/${note.id}`);
    await call(200, 'POST', `/api/incidents/${id}/resolve`);
    await call(409, 'POST', `/api/incidents/${id}/resolve`);
    await call(409, 'POST', `/api/incidents/${id}/acknowledge`);
    await call(200, 'POST', `/api/incidents/${id}/archive`);
    await call(204, 'DELETE', `/api/incidents/${id}/archive`);
    await call(200, 'GET', `/api/incidents/${id}`);
    await call(200, 'GET', `/api/incidents/${id}/timeline`);
    await call(200, 'GET', '/api/incidents?status=resolved');
  });

  test('an incident and its alert after Alertmanager resolved them, and after the alert went stale', async () => {
    const opened = await openIncident(server, alertmanager, { severity: 'warning' });
    await call(200, 'POST', `/api/incidents/${opened.id}/assign`, { payload: { user_id: member.id } });
    const resolved = { ...opened.alert, status: 'resolved', endsAt: '2026-07-27T10:05:00Z' };
    await call(200, 'POST', '/api/webhook/alertmanager', {
      as: alertmanager,
      payload: { ...opened.payload, status: 'resolved', alerts: [resolved] },
    });
    const incident = await call(200, 'GET', `/api/incidents/${opened.id}`);
    assert.equal(incident.status, 'resolved');
    await call(200, 'GET', `/api/alerts/${incident.alerts[0].id}`);
    await call(200, 'GET', '/api/alerts?status=resolved');
    await call(200, 'GET', `/api/incidents/${opened.id}/timeline`);
    const stale = await openIncident(server, alertmanager);
    clock.advance(7 * 3600_000);
    await call(200, 'GET', '/api/alerts');
    await call(200, 'GET', `/api/incidents/${stale.id}`);
    await call(200, 'GET', '/api/incidents?status=triggered');
    await call(200, 'GET', '/api/stats/incidents');
    clock.set('2026-07-27T10:00:00Z');
  });

  test('alerts and the webhook', async () => {
    const { id } = await openIncident(server, alertmanager);
    const alerts = await call(200, 'GET', '/api/alerts?status=firing');
    assert.ok(alerts.length > 0);
    await call(200, 'GET', `/api/alerts/${alerts[0].id}`, { as: member });
    await call(200, 'GET', '/api/alerts?archived=true');
    await call(404, 'GET', '/api/alerts/999999');
    await call(400, 'GET', '/api/alerts?status=burning');
    await call(400, 'POST', '/api/webhook/alertmanager', { as: alertmanager, payload: { version: '4' } });
    await call(401, 'POST', '/api/webhook/alertmanager', { as: null, payload: {} });
    await call(200, 'GET', `/api/incidents/${id}`);
  });

  test('users, roles and API keys', async () => {
    await call(200, 'GET', '/api/me', { as: member });
    await call(200, 'GET', '/api/users', { as: member });
    const user = await call(201, 'POST', '/api/users', {
      payload: { username: 'carol-openapi', email: 'carol@example.com' },
    });
    await call(409, 'POST', '/api/users', { payload: { username: 'carol-openapi', email: 'c@example.com' } });
    await call(403, 'POST', '/api/users', { as: member, payload: { username: 'x', email: 'x@example.com' } });
    await call(400, 'POST', '/api/users', { payload: { username: '', email: 1 } });
    await call(200, 'PUT', `/api/users/${user.id}/notify`, { payload: { ntfy_topic: 'carol-pages' } });
    await call(200, 'PUT', `/api/users/${user.id}/role`, { payload: { role: 'admin' } });
    await call(404, 'PUT', '/api/users/999999/role', { payload: { role: 'admin' } });
    const key = await call(201, 'POST', `/api/users/${user.id}/api-keys`, { payload: { name: 'laptop' } });
    await call(200, 'GET', `/api/users/${user.id}/api-keys`);
    await call(204, 'DELETE', `/api/users/${user.id}/api-keys/${key.id}`);
    await call(404, 'DELETE', `/api/users/${user.id}/api-keys/${key.id}`);
    const account = await call(201, 'POST', '/api/service-accounts', {
      payload: { name: 'grafana-openapi', scope: 'instance' },
    });
    await call(200, 'GET', '/api/service-accounts');
    await call(200, 'GET', `/api/service-accounts/${account.service_account.id}/keys`);
    await call(200, 'GET', '/api/service-accounts?name=grafana-openapi');
    await call(204, 'DELETE', `/api/service-accounts/${account.service_account.id}`);
    await call(204, 'DELETE', `/api/users/${user.id}`);
    await call(200, 'GET', '/api/audit');
    await call(403, 'GET', '/api/audit', { as: member });
  });

  test('schedules, rotations, overrides, on-call and feeds', async () => {
    const schedule = await call(201, 'POST', '/api/schedules', {
      payload: { name: 'Primary openapi', time_zone: 'Europe/Berlin' },
    });
    await call(200, 'GET', '/api/schedules', { as: member });
    await call(400, 'POST', '/api/schedules', { payload: { name: 'Bad zone', time_zone: 'Mars/Olympus' } });
    await call(403, 'POST', '/api/schedules', { as: member, payload: { name: 'x', time_zone: 'UTC' } });
    const rotation = await call(201, 'POST', `/api/schedules/${schedule.id}/rotations`, {
      payload: {
        name: 'Week',
        participant_ids: [admin.id, member.id],
        shift_length: 1,
        shift_unit: 'weeks',
        start_date: '2026-07-20',
        handoff_time: '09:00',
      },
    });
    await call(200, 'PUT', `/api/schedules/${schedule.id}/rotations/${rotation.id}`, {
      payload: {
        name: 'Week',
        participant_ids: [member.id, admin.id],
        shift_length: 1,
        shift_unit: 'weeks',
        start_date: '2026-07-20',
        handoff_time: '09:00',
      },
    });
    const override = await call(201, 'POST', `/api/schedules/${schedule.id}/overrides`, {
      payload: { user_id: member.id, starts_at: '2026-07-28T10:00:00Z', ends_at: '2026-07-28T14:00:00Z' },
    });
    await call(200, 'GET', `/api/schedules/${schedule.id}/overrides`);
    await call(200, 'GET', `/api/schedules/${schedule.id}`);
    await call(200, 'PATCH', `/api/schedules/${schedule.id}`, { payload: { name: 'Primary openapi 2' } });
    await call(200, 'GET', `/api/schedules/${schedule.id}/on-call?at=2026-07-28T11:00:00Z`);
    await call(400, 'GET', `/api/schedules/${schedule.id}/on-call?at=yesterday`);
    await call(200, 'GET', `/api/schedules/${schedule.id}/now`);
    await call(
      200,
      'GET',
      `/api/schedules/${schedule.id}/timeline?from=2026-07-27T00:00:00Z&to=2026-08-03T00:00:00Z`,
    );
    await call(404, 'GET', '/api/schedules/999999');
    const feed = await call(201, 'POST', `/api/schedules/${schedule.id}/feed`);
    const feedPath = new URL(feed.url as string).pathname;
    await call(200, 'GET', feedPath, { as: null });
    await call(201, 'POST', `/api/users/${member.id}/calendar-feed`, { as: member });
    await call(204, 'DELETE', `/api/users/${member.id}/calendar-feed`, { as: member });
    await call(204, 'DELETE', `/api/schedules/${schedule.id}/feed`);
    await call(204, 'DELETE', `/api/schedules/${schedule.id}/overrides/${override.id}`);
    await call(204, 'DELETE', `/api/schedules/${schedule.id}/rotations/${rotation.id}`);
    await call(204, 'DELETE', `/api/schedules/${schedule.id}`);
    await call(200, 'GET', '/api/schedule?from=2026-07-27&to=2026-08-02');
    await call(201, 'POST', '/api/schedule', {
      payload: { user_id: member.id, dates: ['2026-07-27', '2026-07-29'] },
    });
    await call(200, 'GET', '/api/schedule/current');
  });

  test('statistics', async () => {
    await call(200, 'GET', '/api/stats/alerts');
    await call(200, 'GET', '/api/stats/alerts/top?limit=5');
    await call(200, 'GET', '/api/stats/alerts/by-hour');
    await call(200, 'GET', '/api/stats/alerts/by-day');
    await call(200, 'GET', '/api/stats/incidents', { as: member });
  });

  test('paging: escalation policies, contact methods, heartbeats, maintenance windows', async () => {
    const policy = await call(201, 'POST', '/api/escalation-policies', {
      payload: {
        name: 'Ops openapi',
        matchers: ['team="ops-openapi"'],
        steps: [
          { delay: '0s', targets: [{ type: 'user', user_id: member.id }] },
          { delay: '5m', targets: [{ type: 'admins' }, { type: 'on_call' }] },
        ],
      },
    });
    await call(200, 'GET', '/api/escalation-policies', { as: member });
    await call(200, 'GET', `/api/escalation-policies/${policy.id}`);
    await call(400, 'POST', '/api/escalation-policies', {
      payload: { name: 'x', steps: [{ delay: 'never', targets: [] }] },
    });
    await call(204, 'DELETE', `/api/escalation-policies/${policy.id}`);
    await call(404, 'GET', `/api/escalation-policies/${policy.id}`);
    const method = await call(201, 'POST', `/api/users/${member.id}/contact-methods`, {
      as: member,
      payload: { kind: 'ntfy', target: 'member-openapi-pages' },
    });
    await call(201, 'POST', `/api/users/${member.id}/contact-methods`, {
      as: member,
      payload: { kind: 'webhook', name: 'pager bridge', target: 'https://pager.example.com/hook' },
    });
    await call(200, 'GET', `/api/users/${member.id}/contact-methods`, { as: member });
    await call(200, 'PATCH', `/api/users/${member.id}/contact-methods/${method.id}`, {
      as: member,
      payload: { enabled: false },
    });
    await call(204, 'DELETE', `/api/users/${member.id}/contact-methods/${method.id}`, { as: member });
    await call(200, 'GET', '/api/paging/me', { as: member });
    const heartbeat = await call(201, 'POST', '/api/heartbeats', {
      payload: { name: 'watchdog-openapi', interval: '5m' },
    });
    await call(200, 'GET', '/api/heartbeats');
    await call(200, 'POST', `/api/heartbeats/${heartbeat.id}/ping`);
    await call(204, 'DELETE', `/api/heartbeats/${heartbeat.id}`);
    const window = await call(201, 'POST', '/api/maintenance-windows', {
      payload: { starts_at: '2026-07-27T11:00:00Z', ends_at: '2026-07-27T12:00:00Z', reason: 'upgrade' },
    });
    await call(200, 'GET', '/api/maintenance-windows');
    await call(204, 'DELETE', `/api/maintenance-windows/${window.id}`);
  });

  test('a body the server will not read is refused as documented: too large, compressed, not JSON', async () => {
    const id = (await openIncident(server, alertmanager)).id;
    const url = `/api/incidents/${id}/notes`;
    await call(413, 'POST', url, {
      payload: JSON.stringify({ content: 'x'.repeat(9 * 1024 * 1024) }),
      headers: { 'content-type': 'application/json' },
    });
    await call(415, 'POST', url, {
      payload: '{"content":"compressed"}',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    await call(415, 'POST', url, { payload: '<content/>', headers: { 'content-type': 'application/xml' } });
    await call(415, 'POST', url, { payload: 'content=hello', headers: { 'content-type': 'text/plain' } });
    await call(400, 'POST', url, { payload: '{"content":', headers: { 'content-type': 'application/json' } });
  });

  test('bad ids are 400 and missing objects 404 on every kind of object', async () => {
    for (const path of [
      '/api/escalation-policies/abc',
      '/api/schedules/abc',
      '/api/alerts/abc',
      '/api/incidents/abc/timeline',
    ]) {
      await call(400, 'GET', path);
    }
    await call(400, 'DELETE', '/api/heartbeats/abc');
    await call(400, 'DELETE', '/api/maintenance-windows/abc');
    await call(400, 'POST', '/api/heartbeats/abc/ping');
    await call(404, 'DELETE', '/api/heartbeats/999999');
    await call(404, 'DELETE', '/api/maintenance-windows/999999');
    await call(404, 'POST', '/api/heartbeats/999999/ping');
  });
});
