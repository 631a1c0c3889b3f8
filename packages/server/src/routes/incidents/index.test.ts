import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  forEachDatabase,
  ManualClock,
  startTestApp,
  type TestApp,
  type TestUser,
  openIncident,
  type IncidentSpec,
  firingAlert,
  notification,
  notificationOfSize,
  postNotification,
  resolvedAlert,
} from '@terdut/test-support';
import { Value } from 'typebox/value';
import { IncidentSchema } from '@terdut/contract';
import { findIncidentById, type CountedIncidentRow } from '../../repositories/incidents.ts';
import { listAlertsOfIncident } from '../../repositories/alerts.ts';
import { incidentWithAlertsJson, serializeIncident } from './wire.ts';
import { serializeAlert } from '../alerts/wire.ts';

forEachDatabase('incidents API', (database) => {
  let server: TestApp;
  let alertmanager: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  let admin: TestUser;
  const clock = new ManualClock('2026-07-27T10:00:00Z');

  before(async () => {
    server = await startTestApp(database(), { clock });
    alertmanager = await server.createUser('am-incidents', 'member');
    alice = await server.createUser('alice-incidents', 'member');
    bob = await server.createUser('bob-incidents', 'member');
    admin = await server.createUser('admin-incidents', 'admin');
  });
  after(() => server.close());

  /** A new incident, opened through the webhook as Alertmanager would. */
  const newIncident = async (spec: IncidentSpec = {}): Promise<number> =>
    (await openIncident(server, alertmanager, spec)).id;
  const call = (method: 'GET' | 'POST' | 'DELETE', url: string, as: TestUser, payload?: object) =>
    server.request({ method, url, as, ...(payload !== undefined ? { payload } : {}) });
  const timelineTypes = async (id: number) =>
    ((await call('GET', `/api/incidents/${id}/timeline`, alice)).body as any[]).map((event) => event.type);

  test('every incident endpoint refuses callers without credentials with 401', async () => {
    const id = await newIncident();
    for (const [method, url] of [
      ['GET', '/api/incidents'],
      ['GET', `/api/incidents/${id}`],
      ['GET', `/api/incidents/${id}/timeline`],
      ['POST', `/api/incidents/${id}/acknowledge`],
      ['DELETE', `/api/incidents/${id}/acknowledge`],
      ['POST', `/api/incidents/${id}/assign`],
      ['POST', `/api/incidents/${id}/snooze`],
      ['DELETE', `/api/incidents/${id}/snooze`],
      ['POST', `/api/incidents/${id}/resolve`],
      ['POST', `/api/incidents/${id}/archive`],
      ['DELETE', `/api/incidents/${id}/archive`],
      ['POST', `/api/incidents/${id}/notes`],
      ['DELETE', `/api/incidents/${id}/notes/1`],
    ] as const) {
      const response = await server.request({ method, url });
      assert.equal(response.status, 401, `${method} ${url}`);
    }
  });

  test('an incident has exactly the contract fields, absent ones omitted rather than null', async () => {
    const id = await newIncident({ severity: 'warning' });
    const response = await call('GET', `/api/incidents/${id}`, alice);
    assert.equal(response.status, 200);
    assert.deepEqual(Object.keys(response.body).sort(), [
      'alert_count',
      'alerts',
      'group_key',
      'group_labels',
      'id',
      'severity',
      'status',
      'title',
      'triggered_at',
    ]);
    assert.equal(response.body.status, 'triggered');
    assert.equal(response.body.triggered_at, clock.now().toISOString());
    assert.equal(response.body.alerts.length, 1);
    const list = await call('GET', '/api/incidents', alice);
    const listed = (list.body as any[]).find((item) => item.id === id);
    assert.equal('alerts' in listed, false, 'alerts only on GET /api/incidents/{id}');
  });

  test("the incident page's alerts, written as JSON text, are what the contract's serialiser writes", async () => {
    // Label values JSON must escape, non-ASCII, an alert that fired and
    // resolved in between (ends_at), one without a generator URL, one whose
    // end is in the year 9999, one archived at a time with microseconds
    // (PostgreSQL writes the JSON; the serialiser, Dates).
    const awkward = {
      quote: 'say "hi"',
      backslash: 'C:\\temp\\',
      newline: 'one\ntwo\tthree',
      unicode: 'Grüße, 東京, 🚨',
      control: 'bell\u0007',
    };
    const firing = firingAlert({
      name: 'Awkward',
      severity: 'critical',
      labels: awkward,
      annotations: awkward,
    });
    const flapped = resolvedAlert({ name: 'Awkward', labels: { instance: 'b' }, generatorURL: '' });
    const farFuture = {
      ...firingAlert({ name: 'Awkward', labels: { instance: 'c' } }),
      endsAt: '9999-12-31T23:59:59.999Z',
    };
    const groupKey = `awkward-${process.pid}`;
    const answer = await postNotification(server, alertmanager, notification({ groupKey, alerts: [firing] }));
    await postNotification(
      server,
      alertmanager,
      notification({ groupKey, alerts: [firing, flapped, farFuture] }),
    );
    const id = answer.incident_id!;
    await server.db.query(
      `UPDATE alerts SET archived_at = '2026-12-04 10:00:00.123999+00'
        WHERE id IN (SELECT alert_id FROM incident_alerts WHERE incident_id = $1) AND status = 'resolved'`,
      [id],
    );

    const response = await call('GET', `/api/incidents/${id}`, alice);
    assert.equal(response.status, 200);
    assert.match(String(response.headers['content-type']), /^application\/json/);
    const incident = { ...(await findIncidentById(server.db, id))!, alert_count: 3 };
    const alerts = (await listAlertsOfIncident(server.db, id)).map(serializeAlert);
    const expected = JSON.parse(JSON.stringify({ ...serializeIncident(incident), alerts }));
    assert.deepEqual(response.body, expected);
    assert.equal(response.body.alerts.length, 3);
    assert.deepEqual(response.body.alerts[2].labels, {
      alertname: 'Awkward',
      severity: 'critical',
      ...awkward,
    });
    const ends = response.body.alerts.map((alert: { ends_at?: string }) => alert.ends_at).sort();
    assert.deepEqual(ends, ['9999-12-31T23:59:59.999Z', expected.alerts[1].ends_at, undefined].sort());
    assert.ok(
      ends.some((end: string | undefined) => end?.startsWith('20')),
      'the resolved alert has its end',
    );
    const archived = response.body.alerts.filter((alert: { archived_at?: string }) => alert.archived_at);
    assert.deepEqual(
      archived.map((alert: { archived_at: string }) => alert.archived_at),
      ['2026-12-04T10:00:00.123Z'],
    );
    assert.ok(
      Value.Check(IncidentSchema, response.body),
      JSON.stringify([...Value.Errors(IncidentSchema, response.body)]),
    );
  });

  test('an incident of 70 alerts sends every one, newest first, as the serialiser writes them', async () => {
    // More alerts than PostgreSQL writes in one part, added at two times.
    const groupKey = `many-${process.pid}`;
    const alertsOf = (from: number, count: number) =>
      Array.from({ length: count }, (_, index) =>
        firingAlert({ name: 'Many', labels: { instance: `host-${from + index}`, note: 'Grüße 🚨' } }),
      );
    const answer = await postNotification(
      server,
      alertmanager,
      notification({ groupKey, alerts: alertsOf(0, 45) }),
    );
    clock.advance(60_000);
    await postNotification(server, alertmanager, notification({ groupKey, alerts: alertsOf(0, 70) }));
    const id = answer.incident_id!;

    const response = await call('GET', `/api/incidents/${id}`, alice);
    assert.equal(response.status, 200);
    const alerts = (await listAlertsOfIncident(server.db, id)).map(serializeAlert);
    assert.deepEqual(response.body.alerts, JSON.parse(JSON.stringify(alerts)));
    const instances = response.body.alerts.map(
      (alert: { labels: { instance: string } }) => alert.labels.instance,
    );
    assert.deepEqual(
      instances.slice(0, 25).sort(),
      Array.from({ length: 25 }, (_, index) => `host-${45 + index}`).sort(),
      'the 25 alerts added last come first',
    );
    assert.equal(new Set(instances).size, 70, 'each alert once');
  });

  test('an incident body with no alerts has an empty list', () => {
    const row: CountedIncidentRow = {
      id: 1,
      group_key: 'none',
      title: 'Nothing left',
      group_labels: {},
      status: 'resolved',
      severity: null,
      severity_rank: 0,
      triggered_at: new Date('2026-07-27T10:00:00Z'),
      acknowledged_by: null,
      acknowledged_by_username: null,
      acknowledged_at: null,
      assigned_to: null,
      assigned_to_username: null,
      snoozed_until: null,
      resolved_at: new Date('2026-07-27T11:00:00Z'),
      resolution_source: 'manual',
      archived_at: null,
      alert_count: 0,
    };
    const body = JSON.parse(incidentWithAlertsJson(row, []).toString('utf8'));
    assert.deepEqual(body.alerts, []);
    assert.equal(body.title, 'Nothing left');
  });

  test('unknown incidents answer 404 and malformed ids 400', async () => {
    assert.equal((await call('GET', '/api/incidents/999999', alice)).status, 404);
    assert.equal((await call('GET', '/api/incidents/999999/timeline', alice)).status, 404);
    assert.equal((await call('POST', '/api/incidents/999999/acknowledge', alice)).status, 404);
    assert.equal((await call('POST', '/api/incidents/999999/resolve', alice)).status, 404);
    assert.equal((await call('POST', '/api/incidents/999999/notes', alice, { content: 'x' })).status, 404);
    for (const [method, url, payload] of [
      ['DELETE', '/api/incidents/999999/acknowledge', undefined],
      ['POST', '/api/incidents/999999/assign', { user_id: alice.id }],
      ['POST', '/api/incidents/999999/snooze', { duration: '1h' }],
      ['DELETE', '/api/incidents/999999/snooze', undefined],
      ['POST', '/api/incidents/999999/archive', undefined],
      ['DELETE', '/api/incidents/999999/archive', undefined],
      ['DELETE', '/api/incidents/999999/notes/1', undefined],
    ] as const) {
      const response = await call(method, url, alice, payload);
      assert.equal(response.status, 404, `${method} ${url}`);
      assert.match(response.body.error, /incident 999999 not found/);
    }
    const bad = await call('GET', '/api/incidents/abc', alice);
    assert.equal(bad.status, 400);
    assert.match(bad.body.error, /id/);
  });

  test('acknowledge sets who and when; taking it back clears them; both are on the timeline', async () => {
    const id = await newIncident();
    clock.advance(60_000);
    const ack = await call('POST', `/api/incidents/${id}/acknowledge`, alice);
    assert.equal(ack.status, 200);
    assert.equal(ack.body.status, 'acknowledged');
    assert.equal(ack.body.acknowledged_by, alice.username);
    assert.equal(ack.body.acknowledged_by_id, alice.id);
    assert.equal(ack.body.acknowledged_at, clock.now().toISOString());

    // Acknowledging again changes nothing.
    const again = await call('POST', `/api/incidents/${id}/acknowledge`, bob);
    assert.equal(again.status, 200);
    assert.equal(again.body.acknowledged_by, alice.username);

    const undo = await call('DELETE', `/api/incidents/${id}/acknowledge`, bob);
    assert.equal(undo.status, 204);
    assert.equal(undo.body, '');
    const after = (await call('GET', `/api/incidents/${id}`, alice)).body;
    assert.equal(after.status, 'triggered');
    for (const field of ['acknowledged_by', 'acknowledged_by_id', 'acknowledged_at']) {
      assert.equal(field in after, false, field);
    }
    const events = (await call('GET', `/api/incidents/${id}/timeline`, alice)).body as any[];
    const ackEvent = events.find((event) => event.type === 'acknowledged');
    assert.equal(ackEvent.user_id, alice.id);
    assert.equal(ackEvent.username, alice.username);
    assert.equal(events.at(-1).type, 'unacknowledged');
    assert.equal(events.at(-1).username, bob.username);
  });

  test('assign names the assignee (404 for no such user); the event carries the assignee', async () => {
    const id = await newIncident();
    const assigned = await call('POST', `/api/incidents/${id}/assign`, alice, { user_id: bob.id });
    assert.equal(assigned.status, 200);
    assert.equal(assigned.body.assigned_to, bob.username);
    assert.equal(assigned.body.assigned_to_id, bob.id);
    const event = ((await call('GET', `/api/incidents/${id}/timeline`, alice)).body as any[]).at(-1);
    assert.equal(event.type, 'assigned');
    assert.equal(event.user_id, bob.id);
    assert.equal(event.username, bob.username);

    assert.equal((await call('POST', `/api/incidents/${id}/assign`, alice, { user_id: 999999 })).status, 404);
    const missing = await call('POST', `/api/incidents/${id}/assign`, alice, {});
    assert.equal(missing.status, 400);
    assert.match(missing.body.error, /user_id/);
    assert.equal((await call('POST', `/api/incidents/${id}/assign`, alice, { user_id: 'bob' })).status, 400);
  });

  test('a deleted user keeps their name on the incidents they acknowledged and were assigned', async () => {
    const carol = await server.createUser('carol-incidents', 'member');
    const id = await newIncident();
    await call('POST', `/api/incidents/${id}/acknowledge`, carol);
    await call('POST', `/api/incidents/${id}/assign`, alice, { user_id: carol.id });
    await database().query('UPDATE users SET deleted_at = now() WHERE id = $1', [carol.id]);
    const detail = (await call('GET', `/api/incidents/${id}`, alice)).body;
    assert.equal(detail.acknowledged_by, 'carol-incidents');
    assert.equal(detail.assigned_to, 'carol-incidents');
    // Deleted users cannot be assigned anew.
    const other = await newIncident();
    assert.equal(
      (await call('POST', `/api/incidents/${other}/assign`, alice, { user_id: carol.id })).status,
      404,
    );
  });

  test('snooze takes Go-style durations, hides the incident from the default list until it expires', async () => {
    const id = await newIncident();
    const snoozed = await call('POST', `/api/incidents/${id}/snooze`, alice, { duration: '1h30m' });
    assert.equal(snoozed.status, 200);
    assert.equal(snoozed.body.snoozed_until, new Date(clock.now().getTime() + 90 * 60_000).toISOString());

    const ids = async (query: string) =>
      ((await call('GET', `/api/incidents${query}`, alice)).body as any[]).map((item) => item.id);
    assert.equal((await ids('')).includes(id), false, 'hidden from the default list');
    assert.equal((await ids('?snoozed=true')).includes(id), true);

    // It expires by time alone.
    clock.advance(91 * 60_000);
    assert.equal((await ids('')).includes(id), true);
    assert.equal((await ids('?snoozed=true')).includes(id), false);

    await call('POST', `/api/incidents/${id}/snooze`, alice, { duration: '30m' });
    assert.equal((await ids('?snoozed=true')).includes(id), true);
    const unsnooze = await call('DELETE', `/api/incidents/${id}/snooze`, bob);
    assert.equal(unsnooze.status, 204);
    assert.equal((await ids('')).includes(id), true);
    assert.equal('snoozed_until' in (await call('GET', `/api/incidents/${id}`, alice)).body, false);
    assert.deepEqual((await timelineTypes(id)).slice(-3), ['snoozed', 'snoozed', 'unsnoozed']);
  });

  test('a snoozed incident that is resolved leaves the snoozed list (a snooze no longer holds it)', async () => {
    const id = await newIncident();
    await call('POST', `/api/incidents/${id}/snooze`, alice, { duration: '2h' });
    const ids = async (query: string) =>
      ((await call('GET', `/api/incidents${query}`, alice)).body as any[]).map((item) => item.id);
    assert.equal((await ids('?snoozed=true')).includes(id), true);
    assert.equal((await call('POST', `/api/incidents/${id}/resolve`, alice)).status, 200);
    assert.equal((await ids('?snoozed=true')).includes(id), false);
    assert.equal((await ids('?status=resolved&snoozed=true')).includes(id), false, 'asked for by status too');
    assert.equal((await ids('?status=resolved')).includes(id), true);
  });

  test("a snoozed event's detail is the RFC 3339 time the snooze ends", async () => {
    const id = await newIncident();
    const snoozed = await call('POST', `/api/incidents/${id}/snooze`, alice, { duration: '2h' });
    const timeline = (await call('GET', `/api/incidents/${id}/timeline`, alice)).body as any[];
    const event = timeline.find((entry) => entry.type === 'snoozed');
    assert.equal(event.detail, snoozed.body.snoozed_until);
    assert.equal(event.detail, new Date(clock.now().getTime() + 2 * 3_600_000).toISOString());
  });

  test('snooze refuses anything but a positive Go-style duration with 400 naming the field', async () => {
    const id = await newIncident();
    for (const duration of ['', '90', '1d', 'soon', '-5m', '0m', '1h 30m', '9999h']) {
      const response = await call('POST', `/api/incidents/${id}/snooze`, alice, { duration });
      assert.equal(response.status, 400, duration);
      assert.match(response.body.error, /duration/, duration);
    }
    assert.equal((await call('POST', `/api/incidents/${id}/snooze`, alice, {})).status, 400);
    const zero = await call('POST', `/api/incidents/${id}/snooze`, alice, { duration: '0s' });
    assert.equal(zero.body.error, 'field "duration" must be longer than 0s, got "0s"');
    for (const duration of ['30m', '2h', '1h30m', '45s', '.5h', '+1h']) {
      assert.equal(
        (await call('POST', `/api/incidents/${id}/snooze`, alice, { duration })).status,
        200,
        duration,
      );
    }
  });

  test('resolve closes the incident by hand; everything but notes and archive then answers 409', async () => {
    const id = await newIncident();
    clock.advance(60_000);
    const resolved = await call('POST', `/api/incidents/${id}/resolve`, alice);
    assert.equal(resolved.status, 200);
    assert.equal(resolved.body.status, 'resolved');
    assert.equal(resolved.body.resolution_source, 'manual');
    assert.equal(resolved.body.resolved_at, clock.now().toISOString());
    const event = ((await call('GET', `/api/incidents/${id}/timeline`, alice)).body as any[]).at(-1);
    assert.equal(event.type, 'resolved');
    assert.equal(event.username, alice.username);

    for (const [method, url, payload] of [
      ['POST', `/api/incidents/${id}/resolve`, undefined],
      ['POST', `/api/incidents/${id}/acknowledge`, undefined],
      ['DELETE', `/api/incidents/${id}/acknowledge`, undefined],
      ['POST', `/api/incidents/${id}/assign`, { user_id: bob.id }],
      ['POST', `/api/incidents/${id}/snooze`, { duration: '1h' }],
      ['DELETE', `/api/incidents/${id}/snooze`, undefined],
    ] as const) {
      const response = await call(method, url, bob, payload);
      assert.equal(response.status, 409, `${method} ${url}`);
      assert.deepEqual(response.body, { error: 'incident is resolved' });
    }
    const note = await call('POST', `/api/incidents/${id}/notes`, bob, {
      content: 'post-mortem: disk was full',
    });
    assert.equal(note.status, 201);
  });

  test('only resolved incidents can be archived; archived ones leave the default lists', async () => {
    const id = await newIncident();
    const early = await call('POST', `/api/incidents/${id}/archive`, alice);
    assert.equal(early.status, 409);
    assert.match(early.body.error, /only resolved incidents/);

    await call('POST', `/api/incidents/${id}/resolve`, alice);
    clock.advance(60_000);
    const archived = await call('POST', `/api/incidents/${id}/archive`, alice);
    assert.equal(archived.status, 200);
    assert.equal(archived.body.archived_at, clock.now().toISOString());

    const ids = async (query: string) =>
      ((await call('GET', `/api/incidents${query}`, alice)).body as any[]).map((item) => item.id);
    assert.equal((await ids('?status=resolved')).includes(id), false);
    assert.equal((await ids('?archived=true')).includes(id), true);
    // Its alerts are archived with it.
    const detail = (await call('GET', `/api/incidents/${id}`, alice)).body;
    assert.equal(detail.alerts[0].archived_at, clock.now().toISOString());

    const unarchive = await call('DELETE', `/api/incidents/${id}/archive`, alice);
    assert.equal(unarchive.status, 204);
    assert.equal((await ids('?status=resolved')).includes(id), true);
    const after = (await call('GET', `/api/incidents/${id}`, alice)).body;
    assert.equal('archived_at' in after, false);
    assert.equal('archived_at' in after.alerts[0], false);
    assert.equal((await call('POST', '/api/incidents/999999/archive', alice)).status, 404);
  });

  test('the list is newest first; status filters; limit caps it; bad filters are 400', async () => {
    const older = await newIncident();
    clock.advance(60_000);
    const newer = await newIncident();
    const list = ((await call('GET', '/api/incidents?limit=2', alice)).body as any[]).map((item) => item.id);
    assert.deepEqual(list, [newer, older]);
    await call('POST', `/api/incidents/${newer}/acknowledge`, alice);
    const acknowledged = (await call('GET', '/api/incidents?status=acknowledged', alice)).body as any[];
    assert.ok(acknowledged.every((item) => item.status === 'acknowledged'));
    assert.ok(acknowledged.some((item) => item.id === newer));
    const triggered = (await call('GET', '/api/incidents?status=triggered', alice)).body as any[];
    assert.ok(triggered.every((item) => item.status === 'triggered'));
    const open = (await call('GET', '/api/incidents', alice)).body as any[];
    assert.ok(open.every((item) => item.status !== 'resolved'));

    assert.equal((await call('GET', '/api/incidents?status=closed', alice)).status, 400);
    assert.equal((await call('GET', '/api/incidents?limit=0', alice)).status, 400);
    assert.equal((await call('GET', '/api/incidents?limit=many', alice)).status, 400);
    assert.equal((await call('GET', '/api/incidents?archived=maybe', alice)).status, 400);
  });

  test('alert_count is every alert of the incident: more than one page of the alert feed holds, in the list, the page and the answer of an action', async () => {
    // 1,001 alerts: more than GET /api/alerts answers at once (limit 1000).
    const groupKey = `counted-${process.pid}`;
    const answer = await postNotification(
      server,
      alertmanager,
      notificationOfSize(1001, { groupKey, name: 'Counted' }),
    );
    const id = answer.incident_id!;
    const listed = ((await call('GET', '/api/incidents?limit=1000', alice)).body as any[]).find(
      (item) => item.id === id,
    );
    assert.equal(listed.alert_count, 1001);
    const page = (await call('GET', `/api/incidents/${id}`, alice)).body;
    assert.equal(page.alert_count, 1001);
    assert.equal(page.alerts.length, 1001);
    const acknowledged = await call('POST', `/api/incidents/${id}/acknowledge`, alice);
    assert.equal(acknowledged.body.alert_count, 1001);
    assert.equal((await call('POST', `/api/incidents/${id}/resolve`, alice)).body.alert_count, 1001);
  });

  test('an alert that fired again into a newer incident still counts in the resolved one it first joined', async () => {
    const groupKey = `refired-${process.pid}`;
    const alerts = (build: typeof firingAlert, startsAt: string) =>
      ['a', 'b'].map((instance) => build({ name: 'Refired', labels: { instance }, startsAt }));
    const first = (
      await postNotification(
        server,
        alertmanager,
        notification({ groupKey, alerts: alerts(firingAlert, '2026-07-27T09:00:00Z') }),
      )
    ).incident_id!;
    await postNotification(
      server,
      alertmanager,
      notification({ groupKey, alerts: alerts(resolvedAlert, '2026-07-27T09:00:00Z') }),
    );
    const again = firingAlert({
      name: 'Refired',
      labels: { instance: 'a' },
      startsAt: '2026-07-27T10:00:00Z',
    });
    const second = (await postNotification(server, alertmanager, notification({ groupKey, alerts: [again] })))
      .incident_id!;
    assert.notEqual(second, first, 'the alert that fired again opened a new incident');

    const resolved = ((await call('GET', '/api/incidents?status=resolved', alice)).body as any[]).find(
      (item) => item.id === first,
    );
    assert.equal(resolved.alert_count, 2);
    assert.equal((await call('GET', `/api/incidents/${first}`, alice)).body.alert_count, 2);
    const open = ((await call('GET', '/api/incidents', alice)).body as any[]).find(
      (item) => item.id === second,
    );
    assert.equal(open.alert_count, 1);
    const archived = await call('POST', `/api/incidents/${first}/archive`, alice);
    assert.equal(archived.body.alert_count, 2);
  });

  test('notes: 201 with the event; content must be non-empty; only your own notes, only notes can be deleted', async () => {
    const id = await newIncident();
    const note = await call('POST', `/api/incidents/${id}/notes`, alice, { content: 'looking into it' });
    assert.equal(note.status, 201);
    assert.deepEqual(Object.keys(note.body).sort(), [
      'created_at',
      'detail',
      'id',
      'incident_id',
      'type',
      'user_id',
      'username',
    ]);
    assert.equal(note.body.type, 'note');
    assert.equal(note.body.detail, 'looking into it');
    assert.equal(note.body.incident_id, id);
    assert.equal(note.body.user_id, alice.id);

    // 20,000 characters as the published schema counts them: emoji are one each, though two UTF-16 units.
    const emoji = await call('POST', `/api/incidents/${await newIncident()}/notes`, alice, {
      content: '🔥'.repeat(20_000),
    });
    assert.equal(emoji.status, 201, JSON.stringify(emoji.body).slice(0, 200));
    for (const payload of [
      {},
      { content: '' },
      { content: '   ' },
      { content: ['a', 'b'] },
      { content: '🔥'.repeat(20_001) },
    ]) {
      const bad = await call('POST', `/api/incidents/${id}/notes`, alice, payload);
      assert.equal(bad.status, 400, JSON.stringify(payload));
      assert.match(bad.body.error, /content/);
    }

    const notYours = await call('DELETE', `/api/incidents/${id}/notes/${note.body.id}`, bob);
    assert.equal(notYours.status, 403);
    const adminToo = await call('DELETE', `/api/incidents/${id}/notes/${note.body.id}`, admin);
    assert.equal(adminToo.status, 403);

    const triggered = ((await call('GET', `/api/incidents/${id}/timeline`, alice)).body as any[])[0];
    assert.equal(triggered.type, 'triggered');
    const notANote = await call('DELETE', `/api/incidents/${id}/notes/${triggered.id}`, alice);
    assert.equal(notANote.status, 409);
    assert.match(notANote.body.error, /only notes/);

    assert.equal((await call('DELETE', `/api/incidents/${id}/notes/999999`, alice)).status, 404);
    const other = await newIncident();
    assert.equal((await call('DELETE', `/api/incidents/${other}/notes/${note.body.id}`, alice)).status, 404);

    const deleted = await call('DELETE', `/api/incidents/${id}/notes/${note.body.id}`, alice);
    assert.equal(deleted.status, 204);
    assert.equal((await timelineTypes(id)).includes('note'), false);
  });

  test('the timeline is oldest first and server events carry no user', async () => {
    const id = await newIncident();
    clock.advance(1000);
    await call('POST', `/api/incidents/${id}/acknowledge`, alice);
    clock.advance(1000);
    await call('POST', `/api/incidents/${id}/notes`, bob, { content: 'hi' });
    const events = (await call('GET', `/api/incidents/${id}/timeline`, alice)).body as any[];
    assert.deepEqual(
      events.map((event) => event.type),
      ['triggered', 'alert_added', 'acknowledged', 'note'],
    );
    const times = events.map((event) => Date.parse(event.created_at));
    assert.deepEqual(
      times,
      [...times].sort((a, b) => a - b),
    );
    assert.equal('user_id' in events[0], false);
    assert.equal('username' in events[0], false);
    assert.equal(typeof events[1].alert_id, 'number');
  });
});
