import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { forEachDatabase, startTestApp, type TestApp, type TestUser } from '@terdut/test-support';

forEachDatabase('escalation policies and contact methods', (database) => {
  let server: TestApp;
  let admin: TestUser;
  let member: TestUser;
  let other: TestUser;
  before(async () => {
    server = await startTestApp(database());
    admin = await server.createUser('policy-admin', 'admin');
    member = await server.createUser('policy-member');
    other = await server.createUser('policy-other');
  });
  after(() => server.close());

  const create = (payload: object, as: TestUser = admin) =>
    server.request({ method: 'POST', url: '/api/escalation-policies', as, payload });

  test('an admin creates a policy; it reads back with Go-style delays, defaults filled in, and is audited', async () => {
    const created = await create({
      name: 'web team',
      matchers: ['team="web"', 'severity=~"critical|high"'],
      steps: [
        { targets: [{ type: 'on_call' }] },
        { delay: '15m', targets: [{ type: 'user', user_id: member.id }, { type: 'admins' }] },
      ],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual(
      { ...created.body, id: 0, created_at: '', updated_at: '' },
      {
        id: 0,
        name: 'web team',
        position: 1,
        default: false,
        matchers: ['team="web"', 'severity=~"critical|high"'],
        steps: [
          { delay: '0s', targets: [{ type: 'on_call' }] },
          { delay: '15m', targets: [{ type: 'user', user_id: member.id }, { type: 'admins' }] },
        ],
        repeat: 0,
        repeat_delay: '10m',
        notify_on_resolve: true,
        created_at: '',
        updated_at: '',
      },
    );
    const read = await server.request({
      method: 'GET',
      url: `/api/escalation-policies/${created.body.id}`,
      as: member,
    });
    assert.equal(read.status, 200);
    assert.equal(read.body.name, 'web team');
    const audit = await server.request({ method: 'GET', url: '/api/audit', as: admin });
    assert.ok(
      audit.body.some(
        (entry: { action: string; target: string }) =>
          entry.action === 'escalation_policy.created' &&
          entry.target === `escalation_policy:${created.body.id}`,
      ),
    );
  });

  test('bad policies are 400s naming the field, and nothing is stored', async () => {
    const cases: [object, RegExp][] = [
      [{ name: 'x', steps: [] }, /"steps" must list 1 to/],
      [{ name: 'x', steps: [{ targets: [] }] }, /"steps.0.targets" must name at least one target/],
      [
        {
          name: 'x',
          steps: [{ targets: [{ type: 'admins' }] }, { delay: '10s', targets: [{ type: 'admins' }] }],
        },
        /"steps.1.delay" must be from 30s to 24h/,
      ],
      [
        { name: 'x', steps: [{ delay: 'soon', targets: [{ type: 'admins' }] }] },
        /"steps.0.delay" must be a Go-style duration/,
      ],
      [
        { name: 'x', matchers: ['team'], steps: [{ targets: [{ type: 'admins' }] }] },
        /"matchers.0": "team" is not a matcher/,
      ],
      [
        { name: 'x', steps: [{ targets: [{ type: 'user', user_id: 999_999 }] }] },
        /user 999999 is not a person/,
      ],
      [{ name: 'x', repeat: -1, steps: [{ targets: [{ type: 'admins' }] }] }, /"repeat"/],
      [{ name: 'x', steps: [{ targets: [{ type: 'everyone' }] }] }, /targets/],
      [{ name: ' ', steps: [{ targets: [{ type: 'admins' }] }] }, /"name"/],
    ];
    for (const [payload, error] of cases) {
      const response = await create(payload);
      assert.equal(response.status, 400, JSON.stringify(payload));
      assert.match(response.body.error, error, JSON.stringify(payload));
    }
    const list = await server.request({ method: 'GET', url: '/api/escalation-policies', as: admin });
    assert.ok(!list.body.some((policy: { name: string }) => policy.name === 'x'));
  });

  test('members may read policies but not change them; a taken name and a second default are 409', async () => {
    const refused = await create({ name: 'mine', steps: [{ targets: [{ type: 'admins' }] }] }, member);
    assert.equal(refused.status, 403);
    const first = await create({
      name: 'fallback',
      default: true,
      steps: [{ targets: [{ type: 'admins' }] }],
    });
    assert.equal(first.status, 201);
    const second = await create({
      name: 'fallback 2',
      default: true,
      steps: [{ targets: [{ type: 'admins' }] }],
    });
    assert.equal(second.status, 409);
    assert.match(second.body.error, /already the default/);
    const sameName = await create({ name: 'fallback', steps: [{ targets: [{ type: 'admins' }] }] });
    assert.equal(sameName.status, 409);
    assert.match(sameName.body.error, /named "fallback" exists/);
  });

  test('PUT replaces a policy, DELETE removes it (then 404)', async () => {
    const created = await create({ name: 'to change', steps: [{ targets: [{ type: 'admins' }] }] });
    const replaced = await server.request({
      method: 'PUT',
      url: `/api/escalation-policies/${created.body.id}`,
      as: admin,
      payload: {
        name: 'changed',
        repeat: 2,
        repeat_delay: '1h',
        notify_on_resolve: false,
        steps: [{ delay: '1m', targets: [{ type: 'on_call' }] }],
      },
    });
    assert.equal(replaced.status, 200, JSON.stringify(replaced.body));
    assert.equal(replaced.body.name, 'changed');
    assert.equal(replaced.body.repeat, 2);
    assert.equal(replaced.body.repeat_delay, '1h');
    assert.equal(replaced.body.notify_on_resolve, false);
    assert.equal(replaced.body.steps[0].delay, '1m');
    assert.equal(replaced.body.position, created.body.position);
    const byMember = await server.request({
      method: 'DELETE',
      url: `/api/escalation-policies/${created.body.id}`,
      as: member,
    });
    assert.equal(byMember.status, 403);
    const deleted = await server.request({
      method: 'DELETE',
      url: `/api/escalation-policies/${created.body.id}`,
      as: admin,
    });
    assert.equal(deleted.status, 204);
    const again = await server.request({
      method: 'GET',
      url: `/api/escalation-policies/${created.body.id}`,
      as: admin,
    });
    assert.equal(again.status, 404);
  });

  test("contact methods: your own as a member, anyone's as an admin; the webhook secret is shown once", async () => {
    const own = await server.request({
      method: 'POST',
      url: `/api/users/${member.id}/contact-methods`,
      as: member,
      payload: { kind: 'webhook', target: 'https://hooks.example.com/terdut' },
    });
    assert.equal(own.status, 201, JSON.stringify(own.body));
    assert.match(own.body.secret, /^[0-9a-f]{64}$/);
    const list = await server.request({
      method: 'GET',
      url: `/api/users/${member.id}/contact-methods`,
      as: member,
    });
    assert.equal(list.body.length, 1);
    assert.equal('secret' in list.body[0], false, 'never shown again');

    const foreign = await server.request({
      method: 'GET',
      url: `/api/users/${member.id}/contact-methods`,
      as: other,
    });
    assert.equal(foreign.status, 403);
    const foreignAdd = await server.request({
      method: 'POST',
      url: `/api/users/${member.id}/contact-methods`,
      as: other,
      payload: { kind: 'ntfy', target: 'hijack' },
    });
    assert.equal(foreignAdd.status, 403);
    const byAdmin = await server.request({
      method: 'POST',
      url: `/api/users/${member.id}/contact-methods`,
      as: admin,
      payload: { kind: 'ntfy', target: 'member-pager' },
    });
    assert.equal(byAdmin.status, 201);

    const off = await server.request({
      method: 'PATCH',
      url: `/api/users/${member.id}/contact-methods/${byAdmin.body.id}`,
      as: member,
      payload: { enabled: false },
    });
    assert.equal(off.status, 200);
    assert.equal(off.body.enabled, false);
    const removed = await server.request({
      method: 'DELETE',
      url: `/api/users/${member.id}/contact-methods/${byAdmin.body.id}`,
      as: member,
    });
    assert.equal(removed.status, 204);
    const gone = await server.request({
      method: 'DELETE',
      url: `/api/users/${member.id}/contact-methods/${byAdmin.body.id}`,
      as: member,
    });
    assert.equal(gone.status, 404);
  });

  test('bad contact methods are 400s naming the field', async () => {
    const cases: [object, RegExp][] = [
      // Not the ntfy_topic field's "(or "" to clear it)": an empty target is refused here.
      [
        { kind: 'ntfy', target: 'has space' },
        /"target" must be 1-64 characters: letters, digits, "_" or "-"$/,
      ],
      [{ kind: 'webhook', target: 'not a url' }, /"target" must be the webhook's absolute http\(s\) URL/],
      [{ kind: 'webhook', target: 'ftp://example.com/x' }, /"target" must be an http\(s\) URL/],
      [{ kind: 'webhook', target: 'https://user:pw@example.com/x' }, /must not carry credentials/],
      [{ kind: 'webhook', target: 'https://example.com/x', secret: 'short' }, /"secret" must be at least 16/],
      [{ kind: 'sms', target: '+123' }, /kind/],
    ];
    for (const [payload, error] of cases) {
      const response = await server.request({
        method: 'POST',
        url: `/api/users/${other.id}/contact-methods`,
        as: other,
        payload,
      });
      assert.equal(response.status, 400, JSON.stringify(payload));
      assert.match(response.body.error, error);
    }
  });

  test('the acknowledge capability route needs no API key but refuses garbage with 403', async () => {
    const response = await server.request({
      method: 'POST',
      url: '/api/paging/acknowledge',
      payload: { token: 'not-a-capability' },
    });
    assert.equal(response.status, 403);
    const missing = await server.request({ method: 'POST', url: '/api/paging/acknowledge', payload: {} });
    assert.equal(missing.status, 400);
  });
});
