import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { forEachDatabase, startTestApp, type TestApp, type TestUser } from '@terdut/test-support';
import { findUnstorableText } from './text-safety.ts';

test('findUnstorableText names the first bad value or key, and accepts paired surrogates', () => {
  assert.equal(findUnstorableText({ a: ['ok', '😀 emoji'], b: { c: 'fine' } }), undefined);
  assert.deepEqual(findUnstorableText({ a: ['ok', 'x\u0000'] }), { path: 'a.1', inKey: false });
  assert.deepEqual(findUnstorableText({ a: { 'k\ud800': 1 } }), { path: 'a', inKey: true });
  assert.deepEqual(findUnstorableText('\udc00'), { path: '', inKey: false });
  // Deep nesting must not overflow the stack (a 500 would be the result).
  let deep: unknown = 'x\u0000';
  for (let i = 0; i < 100_000; i++) deep = [deep];
  assert.equal(findUnstorableText(deep)?.inKey, false);
});

forEachDatabase('text no database can store, and malformed ids', (database) => {
  let server: TestApp;
  let admin: TestUser;
  let incidentId: number;
  before(async () => {
    server = await startTestApp(database());
    admin = await server.createUser('ada', 'admin');
    const opened = await server.request({
      method: 'POST',
      url: '/api/webhook/alertmanager',
      as: admin,
      payload: {
        version: '4',
        groupKey: 'g',
        status: 'firing',
        receiver: 'terdut',
        alerts: [
          {
            status: 'firing',
            labels: { alertname: 'A' },
            startsAt: '2026-07-27T09:00:00Z',
            fingerprint: 'f1',
          },
        ],
      },
    });
    incidentId = opened.body.incident_id;
  });
  after(() => server.close());

  /** Sends raw JSON text so the escapes arrive as written. */
  const send = (method: 'POST' | 'PUT', url: string, json: string, as: TestUser | undefined = admin) =>
    server.request({ method, url, as, headers: { 'content-type': 'application/json' }, payload: json });

  for (const [name, escape] of [
    ['NUL', '\\u0000'],
    ['an unpaired surrogate', '\\ud800'],
  ] as const) {
    test(`${name} in a note, an e-mail, a key name, a login username or ?name= is 400 naming the field`, async () => {
      const cases: Array<[Promise<{ status: number; body: any }>, RegExp]> = [
        [
          send('POST', `/api/incidents/${incidentId}/notes`, `{"content":"a${escape}b"}`),
          /field "content" contains/,
        ],
        [
          send('POST', '/api/users', `{"username":"eve","email":"eve${escape}@example.com"}`),
          /field "email" contains/,
        ],
        [send('POST', `/api/users/${admin.id}/api-keys`, `{"name":"ci${escape}"}`), /field "name" contains/],
        [
          send('POST', '/auth/login', `{"username":"ada${escape}","password":"whatever-long"}`, undefined),
          /field "username" contains/,
        ],
        [
          server.request({
            method: 'GET',
            url: `/api/service-accounts?name=x${escape === '\\u0000' ? '%00' : '%ED%A0%80'}`,
            as: admin,
          }),
          escape === '\\u0000' ? /query field "name" contains/ : /./,
        ],
      ];
      for (const [pending, expected] of cases) {
        const response = await pending;
        // A lone surrogate cannot even be spelt in a URL (its UTF-8 is invalid and decodes to U+FFFD): 200 is storable.
        if (response.status === 200) {
          assert.equal(escape, '\\ud800');
          continue;
        }
        assert.equal(response.status, 400, JSON.stringify(response.body));
        assert.match(response.body.error, expected);
        assert.match(response.body.error, /NUL character or an unpaired surrogate/);
      }
      // The incident still works afterwards.
      const note = await send('POST', `/api/incidents/${incidentId}/notes`, '{"content":"fine"}');
      assert.equal(note.status, 201);
    });
  }

  test('ids in paths are decimal digits: 0x10, " 1", 1e3, 1.0, -1 and 0 are 400 naming the parameter', async () => {
    for (const id of ['0x10', '%201', '1e3', '1.0', '-1', '0', '01', 'abc', '1%00']) {
      const response = await server.request({ method: 'GET', url: `/api/incidents/${id}`, as: admin });
      assert.equal(response.status, 400, `${id}: ${JSON.stringify(response.body)}`);
      assert.match(response.body.error, /path field "id" must be an id: decimal digits/);
    }
  });

  test('ids beyond what a row can have (2^53 … 2^63 and beyond, 1e400) are 400 or 404, never 500', async () => {
    for (const id of [
      '9007199254740993',
      '9223372036854775807',
      '9223372036854775808',
      '1'.repeat(400),
      '1e400',
      '1e21',
    ]) {
      const response = await server.request({
        method: 'GET',
        url: `/api/incidents/${id}/timeline`,
        as: admin,
      });
      // 414: the router refuses a parameter over 100 characters before anything else.
      assert.ok([400, 404, 414].includes(response.status), `${id.slice(0, 30)} → ${response.status}`);
    }
    const second = await server.request({
      method: 'DELETE',
      url: `/api/users/${admin.id}/api-keys/9223372036854775808`,
      as: admin,
    });
    assert.equal(second.status, 404);
  });

  test('a well-formed id just beyond 2^53−1, with as many digits, is 404 like a longer one', async () => {
    for (const id of ['9007199254740992', '9999999999999999', '99999999999999999']) {
      const response = await server.request({ method: 'GET', url: `/api/incidents/${id}`, as: admin });
      assert.equal(response.status, 404, `${id}: ${JSON.stringify(response.body)}`);
      assert.equal(response.body.error, `no object has id ${id}`);
    }
  });

  test('an id in a body beyond 2^53 is 400, not a database error', async () => {
    const response = await send(
      'POST',
      `/api/incidents/${incidentId}/assign`,
      '{"user_id": 9223372036854775808}',
    );
    assert.equal(response.status, 400);
    assert.match(response.body.error, /"user_id"/);
  });
});
