/**
 * Handoff notices (issue 13) on both databases: a weekly rotation handing
 * over Monday 09:00 Europe/Berlin tells the new person once that their shift
 * started and the previous person once that theirs ended, however many
 * passes and service instances (replicas) see the handoff; a handoff older
 * than the look-back is never told. Time moves by hand (ManualClock); the
 * messages go through the paging outbox to a real webhook receiver on
 * loopback and the ntfy STAND-IN (test/peers/ntfy-standin.ts).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { scheduleOnCallLookup } from '../schedules.ts';
import { zoneAbbreviation } from './handoff-notices.ts';
import { pollTopic, startNtfyStandin, type NtfyStandin } from '../../../../../test/peers/ntfy-standin.ts';
import {
  forEachDatabase,
  ManualClock,
  startTestApp,
  testConfig,
  type TestApp,
  type TestUser,
  startWebhookReceiver,
  type WebhookReceiver,
} from '@terdut/test-support';

const NTFY_TOKEN = 'tk_standintoken0123456789abcdef';
const MINUTE = 60_000;

forEachDatabase('handoff notices', (database) => {
  let server: TestApp;
  let replica: TestApp;
  let ntfy: NtfyStandin;
  let receiver: WebhookReceiver;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  let databases: number;
  const clock = new ManualClock('2026-12-07T07:50:00Z');

  before(async () => {
    ntfy = await startNtfyStandin({ token: NTFY_TOKEN });
    receiver = await startWebhookReceiver();
    const config = testConfig({ TERDUT_NTFY_URL: ntfy.url, TERDUT_NTFY_TOKEN: NTFY_TOKEN });
    server = await startTestApp(database(), { clock, config });
    // A second instance on the same database: another replica.
    replica = await startTestApp(server.db, { clock, config });
    admin = await server.createUser('handoff-admin', 'admin');
    alice = await server.createUser('alice');
    bob = await server.createUser('bob');
    const created = await server.request({
      method: 'POST',
      url: '/api/schedules',
      as: admin,
      payload: { name: 'Databases', time_zone: 'Europe/Berlin' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    databases = created.body.id;
    // Alice from Monday 30 November 09:00, Bob from Monday 7 December 09:00 (08:00 UTC), and so on.
    const rotation = await server.request({
      method: 'POST',
      url: `/api/schedules/${databases}/rotations`,
      as: admin,
      payload: {
        name: 'Weekly',
        participant_ids: [alice.id, bob.id],
        shift_length: 1,
        shift_unit: 'weeks',
        start_date: '2026-11-30',
        handoff_time: '09:00',
      },
    });
    assert.equal(rotation.status, 201, JSON.stringify(rotation.body));
    for (const [person, payload] of [
      [alice, { kind: 'ntfy', target: 'alice-phone' }],
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
    await replica.close();
    await server.close();
    await ntfy.close();
    await receiver.close();
  });

  /** One replica's handoff pass, then its paging pass (which sends what was queued). */
  const pass = async (app: TestApp) => {
    const claimed = await app.app.services.handoffNotices.runOnce();
    await app.app.services.paging.runOnce();
    return claimed;
  };
  const handoffHooks = () => receiver.received.filter((hook) => hook.body?.event === 'handoff');
  const aliceMessages = async () => pollTopic(ntfy.url, 'alice-phone', NTFY_TOKEN);

  test('before the handoff nobody is told anything', async () => {
    assert.equal(await pass(server), 0);
    assert.deepEqual(handoffHooks(), []);
    assert.deepEqual(await aliceMessages(), []);
  });

  test('at the handoff Bob is told his shift started (until Mon 09:00) and Alice that hers ended', async () => {
    clock.set('2026-12-07T08:00:30Z');
    assert.equal(await pass(server), 2);

    const hooks = handoffHooks();
    assert.equal(hooks.length, 1, JSON.stringify(receiver.received.map((hook) => hook.body)));
    const started = hooks[0]!.body;
    assert.equal(started.kind, 'started');
    assert.equal(started.title, 'On call for Databases until Mon 09:00');
    assert.equal(started.person.username, 'bob');
    assert.equal(started.at, '2026-12-07T08:00:00.000Z');
    assert.equal(started.until, '2026-12-14T08:00:00.000Z');
    assert.deepEqual(started.schedule, { id: databases, name: 'Databases', time_zone: 'Europe/Berlin' });

    const ended = await aliceMessages();
    assert.equal(ended.length, 1, JSON.stringify(ended));
    assert.equal(ended[0]!.title, 'Your on-call shift for Databases ended');
    assert.match(ended[0]!.message ?? '', /bob is on call now/);
  });

  test('later passes, on this instance and on another replica, tell nobody twice', async () => {
    clock.advance(MINUTE);
    assert.equal(await pass(server), 0);
    assert.equal(await pass(replica), 0);
    clock.advance(10 * MINUTE); // still inside the look-back
    assert.equal(await pass(replica), 0);
    assert.equal(await pass(server), 0);
    assert.equal(handoffHooks().length, 1);
    assert.equal((await aliceMessages()).length, 1);
  });

  test('two replicas passing at the same moment claim each notice once between them', async () => {
    // The next handoff (Bob to Alice) on Monday 14 December 09:00.
    clock.set('2026-12-14T08:00:05Z');
    const [a, b] = await Promise.all([
      replica.app.services.handoffNotices.runOnce(),
      server.app.services.handoffNotices.runOnce(),
    ]);
    assert.equal(a + b, 2);
    await Promise.all([server.app.services.paging.runOnce(), replica.app.services.paging.runOnce()]);
    const hooks = handoffHooks();
    assert.equal(hooks.length, 2);
    assert.equal(hooks[1]!.body.kind, 'ended');
    const messages = await aliceMessages();
    assert.equal(messages.length, 2);
    assert.equal(messages[1]!.title, 'On call for Databases until Mon 09:00');
  });

  test('a handoff older than the look-back is never told (no flood after downtime)', async () => {
    // Down from before the 21 December handoff until 20 minutes after it.
    clock.set('2026-12-21T08:20:00Z');
    assert.equal(await pass(server), 0);
    assert.equal(await pass(replica), 0);
    assert.equal(handoffHooks().length, 2);
    assert.equal((await aliceMessages()).length, 2);
  });
});

/**
 * A handoff time the spring-forward change skips (02:30 on 29 March 2026 in
 * Europe/Berlin) moves forward by the gap, to 03:30 CEST (README "Daylight
 * saving"): the notices and paging agree with the timeline on that instant,
 * and the handoff is told once, not at 03:00.
 */
forEachDatabase('handoff notices at a skipped handoff time', (database) => {
  let server: TestApp;
  let receiver: WebhookReceiver;
  let alice: TestUser;
  let bob: TestUser;
  let schedule: number;
  const clock = new ManualClock('2026-03-29T00:50:00Z');

  before(async () => {
    receiver = await startWebhookReceiver();
    server = await startTestApp(database(), { clock, config: testConfig({ TERDUT_TIMEZONE: 'UTC' }) });
    const admin = await server.createUser('dst-handoff-admin', 'admin');
    alice = await server.createUser('alice');
    bob = await server.createUser('bob');
    const created = await server.request({
      method: 'POST',
      url: '/api/schedules',
      as: admin,
      payload: { name: 'Nights', time_zone: 'Europe/Berlin' },
    });
    schedule = created.body.id;
    // Alice from 28 March 02:30 CET, Bob from the 29th's skipped 02:30, and so on.
    const rotation = await server.request({
      method: 'POST',
      url: `/api/schedules/${schedule}/rotations`,
      as: admin,
      payload: {
        name: 'Daily',
        participant_ids: [alice.id, bob.id],
        shift_length: 1,
        shift_unit: 'days',
        start_date: '2026-03-28',
        handoff_time: '02:30',
      },
    });
    assert.equal(rotation.status, 201, JSON.stringify(rotation.body));
    for (const person of [alice, bob]) {
      const method = await server.request({
        method: 'POST',
        url: `/api/users/${person.id}/contact-methods`,
        as: person,
        payload: { kind: 'webhook', target: receiver.url },
      });
      assert.equal(method.status, 201, JSON.stringify(method.body));
    }
  });
  after(async () => {
    await server.close();
    await receiver.close();
  });

  const pass = async () => {
    const claimed = await server.app.services.handoffNotices.runOnce();
    await server.app.services.paging.runOnce();
    return claimed;
  };

  test('at 03:00 CEST, the end of the gap, nothing is told and Alice is still the one paged', async () => {
    const lookup = scheduleOnCallLookup(server.app.services.schedules, schedule);
    clock.set('2026-03-29T01:00:30Z');
    assert.equal(await pass(), 0);
    assert.deepEqual(await lookup(server.db, clock.now()), [alice.id]);
    assert.deepEqual(await lookup(server.db, new Date('2026-03-29T01:29:59.999Z')), [alice.id]);
    assert.deepEqual(await lookup(server.db, new Date('2026-03-29T01:30:00Z')), [bob.id]);
  });

  test('at 03:30 CEST Bob is told once that his shift started, until Mon 02:30, and Alice that hers ended', async () => {
    clock.set('2026-03-29T01:30:10Z');
    assert.equal(await pass(), 2);
    clock.advance(MINUTE);
    assert.equal(await pass(), 0);
    const hooks = receiver.received.filter((hook) => hook.body?.event === 'handoff').map((hook) => hook.body);
    assert.deepEqual(hooks.map((body) => [body.kind, body.person.username, body.at, body.until]).sort(), [
      ['ended', 'alice', '2026-03-29T01:30:00.000Z', undefined],
      ['started', 'bob', '2026-03-29T01:30:00.000Z', '2026-03-30T00:30:00.000Z'],
    ]);
    assert.equal(hooks.find((body) => body.kind === 'started').title, 'On call for Nights until Mon 02:30');
  });

  test('a shift ending at a wall time the autumn change repeats says which one: until Sun 02:30 CEST', async () => {
    clock.set('2026-10-24T00:30:10Z'); // 02:30 CEST on Saturday; the next 02:30 comes twice
    const seen = receiver.received.length;
    assert.equal(await pass(), 2);
    const started = receiver.received
      .slice(seen)
      .map((hook) => hook.body)
      .find((body) => body?.event === 'handoff' && body.kind === 'started');
    assert.equal(started.until, '2026-10-25T00:30:00.000Z'); // the first 02:30, CEST
    assert.equal(started.title, 'On call for Nights until Sun 02:30 CEST');
    assert.match(started.text, /runs until Sun 02:30 CEST \(Europe\/Berlin\)/);
  });
});

test('the zone named in a notice is the name people there use: CEST in Berlin, EDT in New York', () => {
  // The repeated hours of 2026's autumn changes, first and second time round.
  assert.equal(zoneAbbreviation(new Date('2026-10-25T00:30:00Z'), 'Europe/Berlin'), 'CEST');
  assert.equal(zoneAbbreviation(new Date('2026-10-25T01:30:00Z'), 'Europe/Berlin'), 'CET');
  assert.equal(zoneAbbreviation(new Date('2026-11-01T05:30:00Z'), 'America/New_York'), 'EDT');
  assert.equal(zoneAbbreviation(new Date('2026-11-01T06:30:00Z'), 'America/New_York'), 'EST');
  // A zone neither names gets its offset, which still tells the two apart.
  assert.equal(zoneAbbreviation(new Date('2026-04-05T01:30:00Z'), 'America/Santiago'), 'GMT-3');
});

/**
 * An override taken back while it runs (Carol covering Alice has to leave at
 * noon) ends then: Alice is on call again from that moment and is told so,
 * Carol is told her cover ended, and the morning still shows Carol, who was
 * the one paged. Deleting the override outright rewrote the morning to
 * Alice's and left no handoff at noon, so nobody was told anything.
 */
forEachDatabase('handoff notices when an override is taken back while it runs', (database) => {
  let server: TestApp;
  let receiver: WebhookReceiver;
  let admin: TestUser;
  let alice: TestUser;
  let carol: TestUser;
  let schedule: number;
  const clock = new ManualClock('2026-12-08T09:00:10Z'); // 10:00 CET, Tuesday

  before(async () => {
    receiver = await startWebhookReceiver();
    server = await startTestApp(database(), { clock, config: testConfig({ TERDUT_TIMEZONE: 'UTC' }) });
    admin = await server.createUser('taken-back-admin', 'admin');
    alice = await server.createUser('alice');
    carol = await server.createUser('carol');
    const created = await server.request({
      method: 'POST',
      url: '/api/schedules',
      as: admin,
      payload: { name: 'Databases', time_zone: 'Europe/Berlin' },
    });
    schedule = created.body.id;
    const rotation = await server.request({
      method: 'POST',
      url: `/api/schedules/${schedule}/rotations`,
      as: admin,
      payload: {
        name: 'Weekly',
        participant_ids: [alice.id],
        shift_length: 1,
        shift_unit: 'weeks',
        start_date: '2026-11-30',
        handoff_time: '09:00',
      },
    });
    assert.equal(rotation.status, 201, JSON.stringify(rotation.body));
    for (const person of [alice, carol]) {
      const method = await server.request({
        method: 'POST',
        url: `/api/users/${person.id}/contact-methods`,
        as: person,
        payload: { kind: 'webhook', target: receiver.url },
      });
      assert.equal(method.status, 201, JSON.stringify(method.body));
    }
  });
  after(async () => {
    await server.close();
    await receiver.close();
  });

  const pass = async () => {
    const claimed = await server.app.services.handoffNotices.runOnce();
    await server.app.services.paging.runOnce();
    return claimed;
  };
  const notices = () =>
    receiver.received
      .filter((hook) => hook.body?.event === 'handoff')
      .map((hook) => [hook.body.kind, hook.body.person.username, hook.body.at]);

  test('Alice is told she is on call again and Carol that her cover ended, and the morning stays Carol’s', async () => {
    const override = await server.request({
      method: 'POST',
      url: `/api/schedules/${schedule}/overrides`,
      as: admin,
      payload: {
        user_id: carol.id,
        starts_at: '2026-12-08T10:00:00+01:00',
        ends_at: '2026-12-08T18:00:00+01:00',
      },
    });
    assert.equal(override.status, 201, JSON.stringify(override.body));
    // Adding it told both (it began ten seconds ago, at 10:00, the instant the notices name).
    assert.equal(await pass(), 0);

    clock.set('2026-12-08T11:00:00Z'); // noon: Carol has to leave
    const taken = await server.request({
      method: 'DELETE',
      url: `/api/schedules/${schedule}/overrides/${override.body.id}`,
      as: admin,
    });
    assert.equal(taken.status, 204);
    clock.advance(20_000);
    // Taking it back told both; the passes, which see that handoff too, add nothing.
    assert.equal(await pass(), 0);
    assert.deepEqual(notices().sort(), [
      ['ended', 'alice', '2026-12-08T09:00:00.000Z'],
      ['ended', 'carol', '2026-12-08T11:00:00.000Z'],
      ['started', 'alice', '2026-12-08T11:00:00.000Z'],
      ['started', 'carol', '2026-12-08T09:00:00.000Z'],
    ]);

    const at = async (instant: string) =>
      (
        await server.request({
          method: 'GET',
          url: `/api/schedules/${schedule}/on-call?at=${instant}`,
          as: admin,
        })
      ).body.username;
    assert.equal(await at('2026-12-08T10:30:00Z'), 'carol', 'the morning is still Carol’s');
    assert.equal(await at('2026-12-08T11:00:00Z'), 'alice');
    assert.equal(await at('2026-12-08T16:00:00Z'), 'alice');
    const lookup = scheduleOnCallLookup(server.app.services.schedules, schedule);
    assert.deepEqual(await lookup(server.db, clock.now()), [alice.id]);
    // Gone from the list of overrides to come, where the page shows its Delete button.
    const coming = await server.request({
      method: 'GET',
      url: `/api/schedules/${schedule}/overrides?from=${clock.now().toISOString()}`,
      as: admin,
    });
    assert.deepEqual(coming.body, []);
  });
});

/**
 * A change that moves who is on call now is a handoff at the moment it is
 * saved: an override from an hour ago, a rotation added or edited, a day
 * given away through the day API. The timeline shows the new person from
 * earlier, outside the passes' look-back, so before this nobody was told:
 * the new person did not know they would be paged, and the one relieved
 * went on thinking they would be. Each notice is told once, by the change
 * itself (passes on every replica afterwards add nothing), and an override
 * from a minute ago, which the passes see as a handoff too, once as well.
 */
forEachDatabase('handoff notices when a change moves who is on call now', (database) => {
  let server: TestApp;
  let replica: TestApp;
  let receiver: WebhookReceiver;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let dave: TestUser;
  let payments: number;
  let rotation: number;
  // Tuesday 8 December 2026, 11:00 CET: the second week of a weekly rotation
  // that began Monday 30 November 09:00, Alice's week then Bob's.
  const clock = new ManualClock('2026-12-08T10:00:00Z');
  const weekly = (participants: TestUser[]) => ({
    name: 'Weekly',
    participant_ids: participants.map((person) => person.id),
    shift_length: 1,
    shift_unit: 'weeks',
    start_date: '2026-11-30',
    handoff_time: '09:00',
  });

  before(async () => {
    receiver = await startWebhookReceiver();
    const config = testConfig({ TERDUT_TIMEZONE: 'UTC' });
    server = await startTestApp(database(), { clock, config });
    replica = await startTestApp(server.db, { clock, config });
    admin = await server.createUser('change-admin', 'admin');
    alice = await server.createUser('alice');
    bob = await server.createUser('bob');
    carol = await server.createUser('carol');
    dave = await server.createUser('dave');
    for (const person of [alice, bob, carol, dave]) {
      const method = await server.request({
        method: 'POST',
        url: `/api/users/${person.id}/contact-methods`,
        as: person,
        payload: { kind: 'webhook', target: receiver.url },
      });
      assert.equal(method.status, 201, JSON.stringify(method.body));
    }
    const created = await server.request({
      method: 'POST',
      url: '/api/schedules',
      as: admin,
      payload: { name: 'Payments', time_zone: 'Europe/Berlin' },
    });
    payments = created.body.id;
  });
  after(async () => {
    await replica.close();
    await server.close();
    await receiver.close();
  });

  const call = async (method: 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) => {
    const response = await server.request({ method, url, as: admin, ...(payload ? { payload } : {}) });
    assert.ok(response.status < 300, `${method} ${url}: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  };
  const handoffs = () => receiver.received.filter((hook) => hook.body?.event === 'handoff');
  /** The notices `change` sends (as the paging pass after it sends them), sorted. */
  const toldBy = async (change: () => Promise<unknown>) => {
    const seen = handoffs().length;
    await change();
    await server.app.services.paging.runOnce();
    return handoffs()
      .slice(seen)
      .map((hook) => hook.body)
      .sort((a, b) => `${a.kind}${a.person.username}`.localeCompare(`${b.kind}${b.person.username}`));
  };
  const short = (bodies: any[]) => bodies.map((body) => [body.kind, body.person.username, body.at]);
  /** Passes on both replicas a little later claim nothing and send nothing. */
  const passesAddNothing = async () => {
    const seen = handoffs().length;
    clock.advance(30_000);
    for (const app of [server, replica, server]) {
      assert.equal(await app.app.services.handoffNotices.runOnce(), 0);
      await app.app.services.paging.runOnce();
    }
    assert.equal(
      handoffs().length,
      seen,
      JSON.stringify(
        short(
          handoffs()
            .slice(seen)
            .map((h) => h.body),
        ),
      ),
    );
  };

  test('a rotation added with Bob on call now tells Bob at once, until Mon 09:00', async () => {
    const told = await toldBy(async () => {
      rotation = (await call('POST', `/api/schedules/${payments}/rotations`, weekly([alice, bob]))).id;
    });
    assert.deepEqual(short(told), [['started', 'bob', '2026-12-08T10:00:00.000Z']]);
    assert.equal(told[0].title, 'On call for Payments until Mon 09:00');
    assert.equal(told[0].until, '2026-12-14T08:00:00.000Z');
    await passesAddNothing();
  });

  test('an override from an hour ago tells Carol she is on call from now and Bob that he is relieved', async () => {
    clock.set('2026-12-08T10:05:00Z');
    const told = await toldBy(() =>
      call('POST', `/api/schedules/${payments}/overrides`, {
        user_id: carol.id,
        starts_at: '2026-12-08T10:00:00+01:00',
        ends_at: '2026-12-08T18:00:00+01:00',
      }),
    );
    assert.deepEqual(short(told), [
      ['ended', 'bob', '2026-12-08T10:05:00.000Z'],
      ['started', 'carol', '2026-12-08T10:05:00.000Z'],
    ]);
    assert.equal(told[0].next.username, 'carol');
    assert.match(told[0].text, /carol is on call now/);
    assert.equal(told[1].title, 'On call for Payments until Tue 18:00');
    assert.match(told[1].text, /started \(from bob\)/);
    await passesAddNothing();
  });

  test('an override from a minute ago is told once, at its start, though the passes see that handoff too', async () => {
    clock.set('2026-12-08T10:30:00Z');
    const told = await toldBy(() =>
      call('POST', `/api/schedules/${payments}/overrides`, {
        user_id: dave.id,
        starts_at: '2026-12-08T10:29:00Z',
        ends_at: '2026-12-08T11:00:00Z',
      }),
    );
    assert.deepEqual(short(told), [
      ['ended', 'carol', '2026-12-08T10:29:00.000Z'],
      ['started', 'dave', '2026-12-08T10:29:00.000Z'],
    ]);
    await passesAddNothing();
  });

  test('a change that leaves the same person on call tells nobody', async () => {
    const told = await toldBy(async () => {
      await call('POST', `/api/schedules/${payments}/overrides`, {
        user_id: alice.id,
        starts_at: '2026-12-09T09:00:00Z',
        ends_at: '2026-12-09T10:00:00Z',
      });
      await call('PUT', `/api/schedules/${payments}/rotations/${rotation}`, {
        ...weekly([alice, bob]),
        name: 'Weekly rota',
      });
    });
    assert.deepEqual(told, []);
  });

  test('editing the rotation so that Alice is on call now tells Alice and relieves Bob', async () => {
    // Carol's cover ended at 18:00 CET; Bob's week shows through again.
    clock.set('2026-12-08T17:30:00Z');
    const told = await toldBy(() =>
      call('PUT', `/api/schedules/${payments}/rotations/${rotation}`, weekly([bob, alice])),
    );
    assert.deepEqual(short(told), [
      ['ended', 'bob', '2026-12-08T17:30:00.000Z'],
      ['started', 'alice', '2026-12-08T17:30:00.000Z'],
    ]);
    assert.equal(told[1].title, 'On call for Payments until Mon 09:00');
    await passesAddNothing();
  });

  test('two admins covering at once take turns: whoever is relieved is the one who was on call', async () => {
    clock.set('2026-12-08T18:00:00Z');
    const cover = (person: TestUser) =>
      call('POST', `/api/schedules/${payments}/overrides`, {
        user_id: person.id,
        starts_at: '2026-12-08T17:00:00Z',
        ends_at: '2026-12-08T19:00:00Z',
      });
    let first = '';
    const told = await toldBy(async () => {
      const [c, d] = await Promise.all([cover(carol), cover(dave)]);
      first = c.id < d.id ? 'carol' : 'dave';
    });
    const second = first === 'carol' ? 'dave' : 'carol';
    const at = '2026-12-08T18:00:00.000Z';
    assert.deepEqual(
      short(told),
      [
        ['ended', 'alice', at],
        ['ended', first, at],
        ['started', 'carol', at],
        ['started', 'dave', at],
      ].sort((a, b) => `${a[0]}${a[1]}`.localeCompare(`${b[0]}${b[1]}`)),
    );
    const onCall = await server.request({
      method: 'GET',
      url: `/api/schedules/${payments}/on-call?at=2026-12-08T18:00:00Z`,
      as: admin,
    });
    assert.equal(onCall.body.username, second);
    await passesAddNothing();
  });

  test('today given away through the day API tells Dave, and taking it back tells him it ended', async () => {
    clock.set('2026-12-08T20:00:00Z');
    let entry = 0;
    const given = await toldBy(async () => {
      entry = (await call('POST', '/api/schedule', { user_id: dave.id, dates: ['2026-12-08'] }))[0].id;
    });
    assert.deepEqual(short(given), [['started', 'dave', '2026-12-08T20:00:00.000Z']]);
    assert.equal(given[0].schedule.name, 'Default');
    assert.equal(given[0].until, '2026-12-09T00:00:00.000Z');

    clock.set('2026-12-08T21:00:00Z');
    const taken = await toldBy(() => call('DELETE', `/api/schedule/${entry}`));
    assert.deepEqual(short(taken), [['ended', 'dave', '2026-12-08T21:00:00.000Z']]);
    assert.match(taken[0].text, /nobody is on call now/);
    await passesAddNothing();
  });

  test('an edit taken back at once tells Bob he is on call again, though he was told at the handoff', async () => {
    // Monday 14 December 09:00 CET: Alice hands over to Bob, and both are told.
    clock.set('2026-12-14T08:00:10Z');
    const handedOver = await toldBy(() => server.app.services.handoffNotices.runOnce());
    assert.deepEqual(short(handedOver), [
      ['ended', 'alice', '2026-12-14T08:00:00.000Z'],
      ['started', 'bob', '2026-12-14T08:00:00.000Z'],
    ]);

    clock.set('2026-12-14T08:05:00Z');
    const edited = await toldBy(() =>
      call('PUT', `/api/schedules/${payments}/rotations/${rotation}`, weekly([carol, alice])),
    );
    assert.deepEqual(short(edited), [
      ['ended', 'bob', '2026-12-14T08:00:00.000Z'],
      ['started', 'carol', '2026-12-14T08:00:00.000Z'],
    ]);

    clock.set('2026-12-14T08:07:00Z');
    const takenBack = await toldBy(() =>
      call('PUT', `/api/schedules/${payments}/rotations/${rotation}`, weekly([bob, alice])),
    );
    assert.deepEqual(short(takenBack), [
      ['ended', 'carol', '2026-12-14T08:07:00.000Z'],
      ['started', 'bob', '2026-12-14T08:07:00.000Z'],
    ]);
    await passesAddNothing();
  });
});

/**
 * Deleting a person on call now moves who is on call without any schedule
 * being edited: their rotation shifts fall through to the layers below and
 * their overrides vanish. Whoever is on call in their place is told at
 * once, once, in every schedule that named them; the person deleted is not
 * told (they are gone), and deleting someone not on call now tells nobody.
 */
forEachDatabase('handoff notices when a person on call now is deleted', (database) => {
  let server: TestApp;
  let replica: TestApp;
  let receiver: WebhookReceiver;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let dave: TestUser;
  let erin: TestUser;
  let frank: TestUser;
  let payments: number;
  let search: number;
  let ledger: number;
  // Tuesday 8 December 2026, Bob's week in Payments (Alice's the week before).
  const clock = new ManualClock('2026-12-08T09:30:00Z');

  before(async () => {
    receiver = await startWebhookReceiver();
    const config = testConfig({ TERDUT_TIMEZONE: 'UTC' });
    server = await startTestApp(database(), { clock, config });
    replica = await startTestApp(server.db, { clock, config });
    admin = await server.createUser('delete-admin', 'admin');
    alice = await server.createUser('alice');
    bob = await server.createUser('bob');
    carol = await server.createUser('carol');
    dave = await server.createUser('dave');
    erin = await server.createUser('erin');
    frank = await server.createUser('frank');
    for (const person of [alice, bob, carol, dave, erin, frank]) {
      await call('POST', `/api/users/${person.id}/contact-methods`, {
        kind: 'webhook',
        target: receiver.url,
      });
    }
    const rotation = (
      name: string,
      people: TestUser[],
      shift_unit: 'days' | 'weeks',
      start_date = '2026-11-30',
      handoff_time = '09:00',
    ) => ({
      name,
      participant_ids: people.map((person) => person.id),
      shift_length: 1,
      shift_unit,
      start_date,
      handoff_time,
    });
    // Payments: Carol backs up on the layer below the weekly Alice, Bob.
    payments = (await call('POST', '/api/schedules', { name: 'Payments', time_zone: 'Europe/Berlin' })).id;
    await call('POST', `/api/schedules/${payments}/rotations`, rotation('Backstop', [carol], 'days'));
    await call('POST', `/api/schedules/${payments}/rotations`, rotation('Weekly', [alice, bob], 'weeks'));
    // Search: Dave's rotation, Bob covering this morning.
    search = (await call('POST', '/api/schedules', { name: 'Search', time_zone: 'UTC' })).id;
    await call('POST', `/api/schedules/${search}/rotations`, rotation('Weekly', [dave], 'weeks'));
    await call('POST', `/api/schedules/${search}/overrides`, {
      user_id: bob.id,
      starts_at: '2026-12-08T09:00:00Z',
      ends_at: '2026-12-08T12:00:00Z',
    });
    // Ledger: Erin hands over to Bob at 10:00 UTC today, Frank below them.
    ledger = (await call('POST', '/api/schedules', { name: 'Ledger', time_zone: 'UTC' })).id;
    await call('POST', `/api/schedules/${ledger}/rotations`, rotation('Backstop', [frank], 'weeks'));
    await call(
      'POST',
      `/api/schedules/${ledger}/rotations`,
      rotation('Daily', [erin, bob], 'days', '2026-12-07', '10:00'),
    );
    // Default: today is Bob's, and nobody is below him.
    await call('POST', '/api/schedule', { user_id: bob.id, dates: ['2026-12-08'] });
    await server.app.services.handoffNotices.runOnce();
    await server.app.services.paging.runOnce();
  });
  after(async () => {
    await replica.close();
    await server.close();
    await receiver.close();
  });

  async function call(method: 'POST' | 'DELETE', url: string, payload?: object) {
    const response = await server.request({ method, url, as: admin, ...(payload ? { payload } : {}) });
    assert.ok(response.status < 300, `${method} ${url}: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  }
  const handoffs = () => receiver.received.filter((hook) => hook.body?.event === 'handoff');
  /** The notices `change` sends (as the paging pass after it sends them): kind, person, schedule, at. */
  const toldBy = async (change: () => Promise<unknown>) => {
    const seen = handoffs().length;
    await change();
    await server.app.services.paging.runOnce();
    return handoffs()
      .slice(seen)
      .map((hook) => hook.body)
      .sort((a, b) => `${a.schedule.name}${a.kind}`.localeCompare(`${b.schedule.name}${b.kind}`));
  };
  const short = (bodies: any[]) =>
    bodies.map((body) => [body.schedule.name, body.kind, body.person.username, body.at]);

  test('deleting Bob tells Carol, Dave and Frank at once that they are on call in his place, and nobody else', async () => {
    clock.set('2026-12-08T10:00:30Z');
    const handedOver = await toldBy(() => server.app.services.handoffNotices.runOnce());
    assert.deepEqual(short(handedOver), [
      ['Ledger', 'ended', 'erin', '2026-12-08T10:00:00.000Z'],
      ['Ledger', 'started', 'bob', '2026-12-08T10:00:00.000Z'],
    ]);

    clock.set('2026-12-08T10:05:00Z');
    const told = await toldBy(() => call('DELETE', `/api/users/${bob.id}`));
    // In Ledger the timeline now shows Erin handing over to Frank at 10:00, a
    // handoff the passes see too: Frank is told under its instant, once, and
    // Erin, told at 10:00 already, is not told again.
    assert.deepEqual(short(told), [
      ['Ledger', 'started', 'frank', '2026-12-08T10:00:00.000Z'],
      ['Payments', 'started', 'carol', '2026-12-08T10:05:00.000Z'],
      ['Search', 'started', 'dave', '2026-12-08T10:05:00.000Z'],
    ]);
    assert.match(told[1].text, /started \(from bob\)/);
    assert.equal(told[1].title, 'On call for Payments until Mon 09:00'); // then Alice's week
    assert.equal(told[2].title, 'On call for Search'); // Dave alone: no handoff ahead

    const now = await server.request({ method: 'GET', url: '/api/schedule/current', as: admin });
    assert.equal(now.status, 404, 'nobody is on call in the default schedule: nobody to tell');
  });

  test('deleting Alice, next in the rotation but not on call now, tells nobody', async () => {
    assert.deepEqual(await toldBy(() => call('DELETE', `/api/users/${alice.id}`)), []);
  });

  test('passes on both replicas afterwards tell nobody again', async () => {
    const seen = handoffs().length;
    clock.advance(30_000);
    for (const app of [server, replica, server]) {
      assert.equal(await app.app.services.handoffNotices.runOnce(), 0);
      await app.app.services.paging.runOnce();
    }
    assert.deepEqual(
      handoffs()
        .slice(seen)
        .map((hook) => hook.body),
      [],
    );
  });
});
