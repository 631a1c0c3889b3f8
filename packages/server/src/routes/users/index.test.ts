import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { forEachDatabase, startTestApp, type TestApp, type TestUser } from '@terdut/test-support';
import { insertSession } from '../../repositories/sessions.ts';

forEachDatabase('users and /api/me', (database) => {
  let server: TestApp;
  let admin: TestUser;
  let member: TestUser;
  before(async () => {
    server = await startTestApp(database());
    admin = await server.createUser('ada', 'admin');
    member = await server.createUser('max');
  });
  after(() => server.close());

  const createPerson = async (username: string, role?: 'admin' | 'member') => {
    const response = await server.request({
      method: 'POST',
      url: '/api/users',
      as: admin,
      payload: { username, email: `${username}@example.com`, ...(role ? { role } : {}) },
    });
    assert.equal(response.status, 201, JSON.stringify(response.body));
    return response.body;
  };

  test('GET /api/me answers the caller and whether they have a password', async () => {
    const response = await server.request({ method: 'GET', url: '/api/me', as: member });
    assert.equal(response.status, 200);
    assert.deepEqual(Object.keys(response.body).sort(), ['has_password', 'user']);
    assert.equal(response.body.has_password, false);
    assert.equal(response.body.user.id, member.id);
    assert.equal(response.body.user.username, 'max');
    assert.equal(response.body.user.email, 'max@example.com');
    assert.equal(response.body.user.role, 'member');
    assert.match(response.body.user.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    assert.equal('ntfy_topic' in response.body.user, false, 'a blank topic is omitted, not null');
  });

  test('an admin creates a member; the answer is 201 with exactly the User fields', async () => {
    const user = await createPerson('grace');
    assert.deepEqual(Object.keys(user).sort(), ['created_at', 'email', 'id', 'role', 'username']);
    assert.equal(user.username, 'grace');
    assert.equal(user.email, 'grace@example.com');
    assert.equal(user.role, 'member');
  });

  test('a taken username is refused with 409', async () => {
    await createPerson('linus');
    const again = await server.request({
      method: 'POST',
      url: '/api/users',
      as: admin,
      payload: { username: 'linus', email: 'other@example.com' },
    });
    assert.equal(again.status, 409);
    assert.match(again.body.error, /username "linus" is taken/);
  });

  test('a member may not create users (403)', async () => {
    const response = await server.request({
      method: 'POST',
      url: '/api/users',
      as: member,
      payload: { username: 'sneaky', email: 'sneaky@example.com' },
    });
    assert.equal(response.status, 403);
    assert.match(response.body.error, /only admins/);
  });

  test('bad usernames and emails are refused with 400 naming the field', async () => {
    const cases = [
      [{ email: 'a@example.com' }, /"username" is required/],
      [{ username: 'has space', email: 'a@example.com' }, /"username" must be/],
      [{ username: 'service:x', email: 'a@example.com' }, /"username" must be/],
      [{ username: 'x'.repeat(65), email: 'a@example.com' }, /"username" must be/],
      [{ username: 'okname' }, /"email" is required/],
      [{ username: 'okname', email: 'not-an-address' }, /"email" must be an email address/],
      // Each of these makes nodemailer send elsewhere or to several: a list, a display name, a comment.
      [{ username: 'okname', email: 'erin@example.com,' }, /"email" must be an email address/],
      [{ username: 'okname', email: 'erin@example.com, mallory@example.net' }, /"email" must be/],
      [{ username: 'okname', email: '<erin@example.com>' }, /"email" must be an email address/],
      [{ username: 'okname', email: 'erin(x)@example.com' }, /"email" must be an email address/],
      [{ username: 'okname', email: '.erin@example.com' }, /"email" must be an email address/],
      [{ username: 'okname', email: 'erin@-example.com' }, /"email" must be an email address/],
      [{ username: 'okname', email: 'a@example.com', role: 'owner' }, /"role"/],
    ] as const;
    for (const [payload, error] of cases) {
      const response = await server.request({ method: 'POST', url: '/api/users', as: admin, payload });
      assert.equal(response.status, 400, JSON.stringify(payload));
      assert.match(response.body.error, error);
    }
    for (const [username, email] of [
      ['obrien', "o'brien+pager@mail.example.co.uk"],
      ['juergen', 'jürgen@bücher.example'],
    ]) {
      const payload = { username, email };
      const response = await server.request({ method: 'POST', url: '/api/users', as: admin, payload });
      assert.equal(response.status, 201, JSON.stringify(response.body));
    }
  });

  test('GET /api/users lists people newest first and no service accounts', async () => {
    const created = await server.request({
      method: 'POST',
      url: '/api/service-accounts',
      as: admin,
      payload: { name: 'listing-robot', scope: 'instance' },
    });
    const newest = await createPerson('newest-person');
    const response = await server.request({ method: 'GET', url: '/api/users', as: member });
    assert.equal(response.status, 200);
    assert.ok(Array.isArray(response.body));
    assert.equal(response.body[0].id, newest.id);
    const names = response.body.map((user: { username: string }) => user.username);
    assert.ok(names.includes('ada') && names.includes('max'));
    assert.equal(created.status, 201);
    assert.ok(!names.some((name: string) => name.includes('listing-robot')));
  });

  test('a member sets and clears their own ntfy topic; blank is omitted', async () => {
    const set = await server.request({
      method: 'PUT',
      url: `/api/users/${member.id}/notify`,
      as: member,
      payload: { ntfy_topic: 'max-pager' },
    });
    assert.equal(set.status, 200);
    assert.equal(set.body.ntfy_topic, 'max-pager');
    const me = await server.request({ method: 'GET', url: '/api/me', as: member });
    assert.equal(me.body.user.ntfy_topic, 'max-pager');

    const cleared = await server.request({
      method: 'PUT',
      url: `/api/users/${member.id}/notify`,
      as: member,
      payload: { ntfy_topic: '' },
    });
    assert.equal(cleared.status, 200);
    assert.equal('ntfy_topic' in cleared.body, false);
    const row = await database().query<{ ntfy_topic: string | null }>(
      'SELECT ntfy_topic FROM users WHERE id = $1',
      [member.id],
    );
    assert.equal(row.rows[0]!.ntfy_topic, null, 'blank is stored as NULL');
  });

  test("a member may not set someone else's topic (403); an admin may", async () => {
    const other = await createPerson('topic-target');
    const refused = await server.request({
      method: 'PUT',
      url: `/api/users/${other.id}/notify`,
      as: member,
      payload: { ntfy_topic: 'hijack' },
    });
    assert.equal(refused.status, 403);
    const allowed = await server.request({
      method: 'PUT',
      url: `/api/users/${other.id}/notify`,
      as: admin,
      payload: { ntfy_topic: 'team-ops' },
    });
    assert.equal(allowed.status, 200);
    assert.equal(allowed.body.ntfy_topic, 'team-ops');
  });

  test("GET /api/users shows a member their own ntfy topic but not someone else's; admins see all", async () => {
    const paged = await createPerson('topic-holder');
    const topic = 'topic-holder-pager-7f3k2q';
    for (const [who, as] of [
      [paged.id, admin],
      [member.id, member],
    ] as const) {
      await server.request({
        method: 'PUT',
        url: `/api/users/${who}/notify`,
        as,
        payload: { ntfy_topic: topic + who },
      });
    }
    const topicOf = (body: { id: number; ntfy_topic?: string }[], id: number) =>
      body.find((user) => user.id === id)?.ntfy_topic;

    // Whoever reads a topic reads that person's pages and can press their Acknowledge.
    const asMember = await server.request({ method: 'GET', url: '/api/users', as: member });
    assert.equal(asMember.status, 200);
    assert.equal(topicOf(asMember.body, paged.id), undefined);
    assert.ok(!JSON.stringify(asMember.body).includes(topic + paged.id));
    assert.equal(topicOf(asMember.body, member.id), topic + member.id);
    const asAdmin = await server.request({ method: 'GET', url: '/api/users', as: admin });
    assert.equal(topicOf(asAdmin.body, paged.id), topic + paged.id);
    await server.request({
      method: 'PUT',
      url: `/api/users/${member.id}/notify`,
      as: member,
      payload: { ntfy_topic: '' },
    });
  });

  test('notify: a topic with spaces is 400, a missing field is 400, an unknown user is 404', async () => {
    const spaces = await server.request({
      method: 'PUT',
      url: `/api/users/${member.id}/notify`,
      as: member,
      payload: { ntfy_topic: 'two words' },
    });
    assert.equal(spaces.status, 400);
    assert.match(spaces.body.error, /"ntfy_topic"/);
    const missing = await server.request({
      method: 'PUT',
      url: `/api/users/${member.id}/notify`,
      as: member,
      payload: {},
    });
    assert.equal(missing.status, 400);
    assert.match(missing.body.error, /"ntfy_topic" is required/);
    const unknown = await server.request({
      method: 'PUT',
      url: '/api/users/999999/notify',
      as: admin,
      payload: { ntfy_topic: 'x' },
    });
    assert.equal(unknown.status, 404);
  });

  test('an admin deletes a person: 204, gone from the list, their keys stop working', async () => {
    const doomed = await server.createUser('doomed');
    const response = await server.request({ method: 'DELETE', url: `/api/users/${doomed.id}`, as: admin });
    assert.equal(response.status, 204);
    const list = await server.request({ method: 'GET', url: '/api/users', as: admin });
    assert.ok(!list.body.some((user: { id: number }) => user.id === doomed.id));
    const withKey = await server.request({ method: 'GET', url: '/api/me', as: doomed });
    assert.equal(withKey.status, 401);
    const keys = await database().query('SELECT id FROM api_keys WHERE user_id = $1', [doomed.id]);
    assert.equal(keys.rows.length, 0, 'the API keys are deleted, not just unusable');
    const again = await server.request({ method: 'DELETE', url: `/api/users/${doomed.id}`, as: admin });
    assert.equal(again.status, 404);
  });

  test('deleting a person revokes their browser sessions, so a later recovery cannot revive them', async () => {
    const person = await server.createUser('session-holder');
    await insertSession(database(), {
      id: 'session-of-holder',
      userId: person.id,
      method: 'password',
      now: new Date(),
    });
    await server.request({ method: 'DELETE', url: `/api/users/${person.id}`, as: admin });
    const live = await database().query('SELECT id FROM sessions WHERE user_id = $1 AND revoked_at IS NULL', [
      person.id,
    ]);
    assert.equal(live.rows.length, 0);
  });

  test('a deleted username can be used again', async () => {
    const first = await createPerson('reused');
    await server.request({ method: 'DELETE', url: `/api/users/${first.id}`, as: admin });
    const second = await createPerson('reused');
    assert.notEqual(second.id, first.id);
  });

  test('a member may not delete users (403)', async () => {
    const response = await server.request({ method: 'DELETE', url: `/api/users/${admin.id}`, as: member });
    assert.equal(response.status, 403);
  });

  test('an admin cannot delete themselves (409)', async () => {
    const response = await server.request({ method: 'DELETE', url: `/api/users/${admin.id}`, as: admin });
    assert.equal(response.status, 409);
    assert.match(response.body.error, /yourself/);
  });

  test('an admin makes a member admin and back; a member may not change roles', async () => {
    const person = await createPerson('promotable');
    const promoted = await server.request({
      method: 'PUT',
      url: `/api/users/${person.id}/role`,
      as: admin,
      payload: { role: 'admin' },
    });
    assert.equal(promoted.status, 200);
    assert.equal(promoted.body.role, 'admin');
    const demoted = await server.request({
      method: 'PUT',
      url: `/api/users/${person.id}/role`,
      as: admin,
      payload: { role: 'member' },
    });
    assert.equal(demoted.body.role, 'member');
    const byMember = await server.request({
      method: 'PUT',
      url: `/api/users/${person.id}/role`,
      as: member,
      payload: { role: 'admin' },
    });
    assert.equal(byMember.status, 403);
    const badRole = await server.request({
      method: 'PUT',
      url: `/api/users/${person.id}/role`,
      as: admin,
      payload: { role: 'root' },
    });
    assert.equal(badRole.status, 400);
    assert.match(badRole.body.error, /"role"/);
    const unknown = await server.request({
      method: 'PUT',
      url: '/api/users/999999/role',
      as: admin,
      payload: { role: 'admin' },
    });
    assert.equal(unknown.status, 404);
  });

  test('the last admin can be neither demoted nor deleted (409)', async () => {
    // Every other admin is demoted first, so `ada` is the only one left.
    const others = await database().query<{ id: number }>(
      "SELECT id FROM users WHERE role = 'admin' AND kind = 'person' AND deleted_at IS NULL AND id <> $1",
      [admin.id],
    );
    for (const { id } of others.rows) {
      await server.request({
        method: 'PUT',
        url: `/api/users/${id}/role`,
        as: admin,
        payload: { role: 'member' },
      });
    }
    const demote = await server.request({
      method: 'PUT',
      url: `/api/users/${admin.id}/role`,
      as: admin,
      payload: { role: 'member' },
    });
    assert.equal(demote.status, 409);
    assert.match(demote.body.error, /last admin/);

    // An instance service account acts as an admin but is not a person: it
    // cannot remove the last person able to manage the instance either.
    const robot = await server.request({
      method: 'POST',
      url: '/api/service-accounts',
      as: admin,
      payload: { name: 'last-admin-robot', scope: 'instance' },
    });
    assert.equal(robot.status, 201);
    const deleted = await server.request({
      method: 'DELETE',
      url: `/api/users/${admin.id}`,
      as: robot.body.key.key,
    });
    assert.equal(deleted.status, 409);
    assert.match(deleted.body.error, /last admin/);
  });

  test('every identity endpoint refuses a caller without credentials (401)', async () => {
    const endpoints = [
      ['GET', '/api/me'],
      ['GET', '/api/users'],
      ['POST', '/api/users'],
      ['DELETE', `/api/users/${member.id}`],
      ['PUT', `/api/users/${member.id}/notify`],
      ['PUT', `/api/users/${member.id}/role`],
      ['GET', `/api/users/${member.id}/api-keys`],
      ['POST', `/api/users/${member.id}/api-keys`],
      ['DELETE', `/api/users/${member.id}/api-keys/1`],
      ['POST', '/api/service-accounts'],
      ['GET', '/api/service-accounts'],
      ['POST', '/api/service-accounts/1/keys'],
      ['DELETE', '/api/service-accounts/1/keys/1'],
      ['DELETE', '/api/service-accounts/1'],
      ['GET', '/api/audit'],
      ['POST', '/api/bootstrap'],
      ['POST', '/api/bootstrap/recover'],
    ] as const;
    for (const [method, url] of endpoints) {
      const response = await server.request({
        method,
        url,
        payload: method === 'GET' || method === 'DELETE' ? undefined : {},
      });
      assert.equal(response.status, 401, `${method} ${url}`);
      assert.equal(typeof response.body.error, 'string');
    }
    const status = await server.request({ method: 'GET', url: '/api/bootstrap' });
    assert.equal(status.status, 200, 'GET /api/bootstrap is public');
  });

  test('a user id that is not a number is 400 naming the parameter', async () => {
    const response = await server.request({ method: 'DELETE', url: '/api/users/abc', as: admin });
    assert.equal(response.status, 400);
    assert.match(response.body.error, /id/);
  });
});
