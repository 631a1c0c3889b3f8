import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  forEachDatabase,
  createTestPglite,
  startTestApp,
  testConfig,
  ManualClock,
  type TestApp,
  type TestUser,
} from '@terdut/test-support';

const HOUR = 3_600_000;

/** Cookies a browser would hold after these Set-Cookie headers (name → value; cleared ones dropped). */
function cookiesFrom(headers: Record<string, unknown>): Record<string, string> {
  const raw = headers['set-cookie'];
  const lines = raw === undefined ? [] : Array.isArray(raw) ? (raw as string[]) : [raw as string];
  const jar: Record<string, string> = {};
  for (const line of lines) {
    const [pair = ''] = line.split(';');
    const at = pair.indexOf('=');
    jar[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return jar;
}

interface Browser {
  cookie: string;
  csrf: string;
}

forEachDatabase('password sign-in, sessions and CSRF', (database) => {
  const clock = new ManualClock('2026-07-27T10:00:00Z');
  let server: TestApp;
  let admin: TestUser;
  let names = 0;

  before(async () => {
    server = await startTestApp(database(), { clock });
    admin = await server.createUser('root-admin', 'admin');
  });
  after(() => server.close());

  /** A member with a password set by the admin through the API. */
  async function personWithPassword(
    password = 'correct horse battery',
  ): Promise<TestUser & { password: string }> {
    const user = await server.createUser(`person-${++names}`);
    const set = await server.request({
      method: 'PUT',
      url: `/api/users/${user.id}/password`,
      payload: { password },
      as: admin,
    });
    assert.equal(set.status, 204, JSON.stringify(set.body));
    return { ...user, password };
  }

  async function signIn(username: string, password: string, address = '10.0.0.1'): Promise<Browser> {
    const response = await server.app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { username, password },
      remoteAddress: address,
    });
    assert.equal(response.statusCode, 200, response.body);
    const jar = cookiesFrom(response.headers);
    return { cookie: `terdut_session=${jar.terdut_session}`, csrf: jar.terdut_csrf! };
  }

  function asBrowser(browser: Browser, withCsrf = true): Record<string, string> {
    return withCsrf ? { cookie: browser.cookie, 'x-csrf-token': browser.csrf } : { cookie: browser.cookie };
  }

  test('a password shorter than 12 characters is refused with 400 naming the field', async () => {
    const user = await server.createUser(`short-${++names}`);
    const response = await server.request({
      method: 'PUT',
      url: `/api/users/${user.id}/password`,
      payload: { password: 'elevenchars' },
      as: admin,
    });
    assert.equal(response.status, 400);
    assert.match(response.body.error, /"password" must be at least 12 characters/);
  });

  test('signing in sets an HttpOnly, SameSite=Lax session cookie, and /api/me works with it', async () => {
    const person = await personWithPassword();
    const response = await server.app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { username: person.username, password: person.password },
    });
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().user.username, person.username);
    assert.equal(response.json().has_password, true);
    const setCookie = ([] as string[]).concat(response.headers['set-cookie'] as string[]);
    const session = setCookie.find((line) => line.startsWith('terdut_session='))!;
    assert.match(session, /HttpOnly/);
    assert.match(session, /SameSite=Lax/);
    assert.match(session, /Path=\//);
    assert.doesNotMatch(session, /Secure/, 'plain HTTP without a public https URL: not Secure');
    const csrf = setCookie.find((line) => line.startsWith('terdut_csrf='))!;
    assert.doesNotMatch(csrf, /HttpOnly/, 'the web UI must be able to read the CSRF token');

    const jar = cookiesFrom(response.headers);
    const me = await server.request({
      method: 'GET',
      url: '/api/me',
      headers: { cookie: `terdut_session=${jar.terdut_session}` },
    });
    assert.equal(me.status, 200);
    assert.equal(me.body.user.id, person.id);
    assert.equal(me.body.has_password, true);
  });

  test('the session cookie is Secure when a trusted proxy says the request arrived over HTTPS, not when anyone else says so', async () => {
    const behindProxy = await startTestApp(database(), {
      clock,
      config: testConfig({ TERDUT_TRUSTED_PROXIES: '10.0.0.1' }),
    });
    try {
      const signInFrom = async (remoteAddress: string) => {
        const person = await personWithPassword();
        const response = await behindProxy.app.inject({
          method: 'POST',
          url: '/auth/login',
          remoteAddress,
          headers: { 'x-forwarded-proto': 'https' },
          payload: { username: person.username, password: person.password },
        });
        assert.equal(response.statusCode, 200);
        return ([] as string[]).concat(response.headers['set-cookie'] as string[]);
      };
      assert.ok((await signInFrom('10.0.0.1')).every((line) => /; Secure/.test(line)));
      assert.ok((await signInFrom('203.0.113.9')).every((line) => !/; Secure/.test(line)));
    } finally {
      await behindProxy.close();
    }
  });

  test('a session on the webhook, a route for programs, is 403 saying it takes API keys only', async () => {
    const person = await personWithPassword();
    const browser = await signIn(person.username, person.password, '10.3.0.1');
    const response = await server.request({
      method: 'POST',
      url: '/api/webhook/alertmanager',
      headers: asBrowser(browser),
      payload: { version: '4', groupKey: 'from-a-browser', status: 'firing', receiver: 'r', alerts: [] },
    });
    assert.equal(response.status, 403);
    assert.match(response.body.error, /takes API keys only, not a session/);
    const anonymous = await server.request({ method: 'POST', url: '/api/webhook/alertmanager', payload: {} });
    assert.equal(anonymous.status, 401);
  });

  test('a sign-in form posted from another site is refused (no signing visitors in to a chosen account)', async () => {
    const person = await personWithPassword();
    const response = await server.request({
      method: 'POST',
      url: '/auth/login',
      headers: { origin: 'https://evil.example' },
      payload: { username: person.username, password: person.password },
    });
    assert.equal(response.status, 403);
    assert.equal(response.headers['set-cookie'], undefined);
  });

  test('a wrong password and an unknown user get the same 401 answer, in comparable time', async () => {
    const person = await personWithPassword();
    const timed = async (username: string) => {
      const started = performance.now();
      const response = await server.request({
        method: 'POST',
        url: '/auth/login',
        payload: { username, password: 'not the password at all' },
        remoteAddress: '10.9.9.9',
      });
      return { response, ms: performance.now() - started };
    };
    const wrong = await timed(person.username);
    const unknown = await timed(`nobody-${names}`);
    assert.equal(wrong.response.status, 401);
    assert.deepEqual(wrong.response.body, { error: 'wrong username or password' });
    assert.deepEqual(unknown.response.body, wrong.response.body);
    // Both run scrypt (the unknown user against a dummy hash): tens of ms each.
    assert.ok(
      unknown.ms > wrong.ms / 3,
      `unknown user answered in ${unknown.ms} ms, wrong password in ${wrong.ms} ms`,
    );
    assert.ok(unknown.ms > 20, `unknown user answered in ${unknown.ms} ms: no scrypt ran`);
  });

  test('signing out needs the CSRF token, then revokes the session', async () => {
    const person = await personWithPassword();
    const browser = await signIn(person.username, person.password);
    const forged = await server.request({
      method: 'POST',
      url: '/auth/logout',
      headers: asBrowser(browser, false),
    });
    assert.equal(forged.status, 403);
    const out = await server.request({ method: 'POST', url: '/auth/logout', headers: asBrowser(browser) });
    assert.equal(out.status, 204);
    assert.match(String(out.headers['set-cookie']), /terdut_session=;/);
    const me = await server.request({ method: 'GET', url: '/api/me', headers: asBrowser(browser) });
    assert.equal(me.status, 401);
  });

  test('a cookie-authenticated change without the CSRF token is refused with 403; with it, it works', async () => {
    const person = await personWithPassword();
    const browser = await signIn(person.username, person.password);
    const url = `/api/users/${person.id}/api-keys`;
    const refused = await server.request({
      method: 'POST',
      url,
      payload: { name: 'laptop' },
      headers: asBrowser(browser, false),
    });
    assert.equal(refused.status, 403);
    assert.match(refused.body.error, /CSRF token.*X-CSRF-Token/);
    const wrongToken = await server.request({
      method: 'POST',
      url,
      payload: { name: 'laptop' },
      headers: { cookie: browser.cookie, 'x-csrf-token': 'x'.repeat(43) },
    });
    assert.equal(wrongToken.status, 403);
    const crossSite = await server.request({
      method: 'POST',
      url,
      payload: { name: 'laptop' },
      headers: { ...asBrowser(browser), origin: 'https://evil.example' },
    });
    assert.equal(crossSite.status, 403);
    assert.match(crossSite.body.error, /Origin https:\/\/evil.example/);

    const allowed = await server.request({
      method: 'POST',
      url,
      payload: { name: 'laptop' },
      headers: asBrowser(browser),
    });
    assert.equal(allowed.status, 201);
    // Reads need no token, and API keys are not affected at all.
    assert.equal(
      (await server.request({ method: 'GET', url, headers: asBrowser(browser, false) })).status,
      200,
    );
    const withKey = await server.request({
      method: 'POST',
      url,
      payload: { name: 'script' },
      headers: { origin: 'https://elsewhere.example' },
      as: person,
    });
    assert.equal(withKey.status, 201);
  });

  test('a session expires after the TTL without use, and use keeps it alive', async () => {
    const person = await personWithPassword();
    const browser = await signIn(person.username, person.password);
    const me = () => server.request({ method: 'GET', url: '/api/me', headers: asBrowser(browser) });
    clock.advance(11 * HOUR);
    assert.equal((await me()).status, 200, 'used within the 12h TTL');
    clock.advance(11 * HOUR);
    assert.equal((await me()).status, 200, 'the last use moved the expiry');
    clock.advance(12 * HOUR + 60_000);
    assert.equal((await me()).status, 401, 'idle for longer than the TTL');

    // Long-ended sessions are cleared away at the person's next sign-in.
    const sessionsOf = async () =>
      (
        await database().query<{ n: number }>(`SELECT count(*)::int AS n FROM sessions WHERE user_id = $1`, [
          person.id,
        ])
      ).rows[0]!.n;
    assert.equal(await sessionsOf(), 1);
    clock.advance(24 * HOUR);
    await signIn(person.username, person.password);
    assert.equal(await sessionsOf(), 1, 'the expired session was deleted, the new one is there');
  });

  test('a session used every day still ends 30 days after its sign-in (TERDUT_SESSION_MAX_AGE)', async () => {
    const person = await personWithPassword();
    const browser = await signIn(person.username, person.password);
    const me = () => server.request({ method: 'GET', url: '/api/me', headers: asBrowser(browser) });
    // Used every 11 hours, within the 12h TTL, for 29 days and 23 hours.
    for (let hours = 11; hours < 30 * 24; hours += 11) {
      clock.advance(11 * HOUR);
      assert.equal((await me()).status, 200, `used ${hours} hours after the sign-in`);
    }
    clock.advance(6 * HOUR);
    assert.equal((await me()).status, 401, 'thirty days after the sign-in');
    const again = await signIn(person.username, person.password);
    assert.equal(
      (await server.request({ method: 'GET', url: '/api/me', headers: asBrowser(again) })).status,
      200,
      'a new sign-in starts a new session',
    );
  });

  test('using a session records it at most once a minute, not on every request', async () => {
    const person = await personWithPassword();
    const browser = await signIn(person.username, person.password);
    const lastSeen = async () =>
      (
        await database().query<{ last_seen_at: Date }>(
          `SELECT last_seen_at FROM sessions WHERE user_id = $1 AND revoked_at IS NULL`,
          [person.id],
        )
      ).rows[0]!.last_seen_at.getTime();
    const started = await lastSeen();
    const me = () => server.request({ method: 'GET', url: '/api/me', headers: asBrowser(browser) });
    clock.advance(30_000);
    assert.equal((await me()).status, 200);
    assert.equal(await lastSeen(), started, 'no write 30 s after the last one');
    clock.advance(31_000);
    assert.equal((await me()).status, 200);
    assert.equal(await lastSeen(), clock.now().getTime(), 'written once more than a minute had passed');
  });

  test('changing your own password needs the current one and signs you out everywhere else', async () => {
    const person = await personWithPassword('first password 123');
    const here = await signIn(person.username, person.password);
    const elsewhere = await signIn(person.username, person.password);
    const url = `/api/users/${person.id}/password`;

    const missing = await server.request({
      method: 'PUT',
      url,
      payload: { password: 'second password 456' },
      headers: asBrowser(here),
    });
    assert.equal(missing.status, 400);
    assert.match(missing.body.error, /current_password/);
    const wrong = await server.request({
      method: 'PUT',
      url,
      payload: { password: 'second password 456', current_password: 'not it at all' },
      headers: asBrowser(here),
    });
    assert.equal(wrong.status, 403);
    const changed = await server.request({
      method: 'PUT',
      url,
      payload: { password: 'second password 456', current_password: 'first password 123' },
      headers: asBrowser(here),
    });
    assert.equal(changed.status, 204);

    assert.equal(
      (await server.request({ method: 'GET', url: '/api/me', headers: asBrowser(here) })).status,
      200,
    );
    assert.equal(
      (await server.request({ method: 'GET', url: '/api/me', headers: asBrowser(elsewhere) })).status,
      401,
    );
    const old = await server.request({
      method: 'POST',
      url: '/auth/login',
      payload: { username: person.username, password: 'first password 123' },
    });
    assert.equal(old.status, 401);
    await signIn(person.username, 'second password 456');
  });

  test("an admin's password reset revokes all of that person's sessions; members cannot set others'", async () => {
    const person = await personWithPassword();
    const other = await personWithPassword();
    const browser = await signIn(person.username, person.password);
    const byMember = await server.request({
      method: 'PUT',
      url: `/api/users/${other.id}/password`,
      payload: { password: 'taken over 123456' },
      headers: asBrowser(browser),
    });
    assert.equal(byMember.status, 403);
    const reset = await server.request({
      method: 'PUT',
      url: `/api/users/${person.id}/password`,
      payload: { password: 'fresh from the admin' },
      as: admin,
    });
    assert.equal(reset.status, 204);
    assert.equal(
      (await server.request({ method: 'GET', url: '/api/me', headers: asBrowser(browser) })).status,
      401,
    );
    const audit = await database().query<{ action: string }>(
      `SELECT action FROM audit_log WHERE target = $1 ORDER BY id`,
      [`user:${person.id}`],
    );
    assert.ok(audit.rows.some((row) => row.action === 'user.password_changed'));
    assert.ok(audit.rows.some((row) => row.action === 'sign_in'));
  });

  test('deleting a person ends their sessions', async () => {
    const person = await personWithPassword();
    const browser = await signIn(person.username, person.password);
    const deleted = await server.request({ method: 'DELETE', url: `/api/users/${person.id}`, as: admin });
    assert.equal(deleted.status, 204);
    assert.equal(
      (await server.request({ method: 'GET', url: '/api/me', headers: asBrowser(browser) })).status,
      401,
    );
  });

  test('after 5 failures for a username, sign-in answers 429 with Retry-After, even with the right password', async () => {
    const person = await personWithPassword();
    for (let i = 0; i < 5; i++) {
      const failed = await server.request({
        method: 'POST',
        url: '/auth/login',
        payload: { username: person.username, password: `guess number ${i}` },
        remoteAddress: `10.1.0.${i}`,
      });
      assert.equal(failed.status, 401);
    }
    const limited = await server.request({
      method: 'POST',
      url: '/auth/login',
      payload: { username: person.username, password: person.password },
      remoteAddress: '10.1.0.99',
    });
    assert.equal(limited.status, 429);
    assert.match(limited.body.error, /too many failed sign-ins for this username/);
    const retryAfter = Number(limited.headers['retry-after']);
    assert.ok(retryAfter > 0 && retryAfter <= 15 * 60, `Retry-After: ${retryAfter}`);

    clock.advance(retryAfter * 1000);
    await signIn(person.username, person.password, '10.1.0.99');
  });

  test("strangers' wrong passwords do not lock out a browser that signed in before, which still gets only 5 guesses", async () => {
    // Five wrong passwords every 15 minutes, from anywhere, would otherwise keep the person
    // locked out for good, on the night they are paged.
    const person = await personWithPassword();
    const other = await personWithPassword();
    const login = (username: string, password: string, address: string, device?: string) =>
      server.request({
        method: 'POST',
        url: '/auth/login',
        payload: { username, password },
        remoteAddress: address,
        headers: device === undefined ? {} : { cookie: `terdut_device=${device}` },
      });
    const first = await login(person.username, person.password, '10.5.0.1');
    assert.equal(first.status, 200);
    const setCookies = ([] as string[]).concat(first.headers['set-cookie'] as string | string[]);
    const deviceCookie = setCookies.find((line) => line.startsWith('terdut_device='))!;
    assert.ok(deviceCookie, setCookies.join('\n'));
    assert.match(deviceCookie, /; Path=\/auth\/login/);
    assert.match(deviceCookie, /; HttpOnly/);
    assert.match(deviceCookie, /; SameSite=Strict/);
    const device = cookiesFrom(first.headers).terdut_device!;
    const otherDevice = cookiesFrom(
      (await login(other.username, other.password, '10.5.0.2')).headers,
    ).terdut_device!;

    for (let i = 0; i < 5; i++) {
      assert.equal((await login(person.username, `stranger guess ${i}`, `10.5.1.${i}`)).status, 401);
    }
    assert.equal((await login(person.username, person.password, '10.5.1.99')).status, 429, 'no cookie');
    assert.equal(
      (await login(person.username, person.password, '10.5.1.98', otherDevice)).status,
      429,
      "another account's browser",
    );
    assert.equal(
      (
        await login(
          person.username,
          person.password,
          '10.5.1.97',
          device.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')),
        )
      ).status,
      429,
      'an altered cookie',
    );
    assert.equal((await login(person.username, person.password, '10.5.0.1', device)).status, 200);

    // The browser's own guesses are limited like a username's.
    for (let i = 0; i < 5; i++) {
      assert.equal((await login(person.username, `own guess ${i}`, '10.5.0.1', device)).status, 401);
    }
    const limited = await login(person.username, person.password, '10.5.0.1', device);
    assert.equal(limited.status, 429);
    assert.match(limited.body.error, /too many failed sign-ins from this browser/);
    // And the strangers' count was not reset by the owner's sign-in.
    assert.equal((await login(person.username, person.password, '10.5.1.96')).status, 429);
  });

  test('guesses sent all at once get no more tries than one at a time, and the right password after them is refused', async () => {
    const person = await personWithPassword();
    const attempt = (password: string, index: number) =>
      server.request({
        method: 'POST',
        url: '/auth/login',
        payload: { username: person.username, password },
        remoteAddress: `10.2.0.${index}`,
      });
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => attempt(`guess at once ${i}`, i)));
    const statuses = answers.map((answer) => answer.status).sort();
    // Each attempt counts as a failure from the moment it is let in: 5 are, the others are refused.
    assert.deepEqual(statuses, [...Array(5).fill(401), ...Array(15).fill(429)], statuses.join(' '));
    const limited = await attempt(person.password, 99);
    assert.equal(limited.status, 429);
  });

  test('failed sign-ins from one IPv6 network (a /64) count together, so changing the address does not reset the count', async () => {
    // One subscriber (a VPS, a home line) gets a whole /64: counted per address, each of its
    // 2^64 addresses had 30 guesses of its own, and spraying passwords was unlimited.
    for (let i = 0; i < 30; i++) {
      const failed = await server.request({
        method: 'POST',
        url: '/auth/login',
        payload: { username: `sprayed-v6-${i}`, password: 'password1234' },
        remoteAddress: `2001:db8:77:1::${(i + 1).toString(16)}`,
      });
      assert.equal(failed.status, 401);
    }
    const limited = await server.request({
      method: 'POST',
      url: '/auth/login',
      payload: { username: 'sprayed-v6-next', password: 'password1234' },
      remoteAddress: '2001:db8:77:1:aaaa:bbbb:cccc:dddd',
    });
    assert.equal(limited.status, 429, JSON.stringify(limited.body));
    assert.match(limited.body.error, /from your address/);
    const person = await personWithPassword();
    await signIn(person.username, person.password, '2001:db8:77:2::1');
  });

  test('a username spelt with a letter that folds to ASCII only in the database (İ for i) signs nobody in and gets no budget of its own', async () => {
    // PostgreSQL's lower() folds "İ" to "i"; JavaScript's toLowerCase() folds it to "i" plus a
    // combining dot. Matching such a spelling would give each of a name's i's a fresh budget of
    // five guesses. No username holds anything but ASCII letters, digits and . _ @ -.
    const user = await server.createUser(`lili-${++names}`);
    const set = await server.request({
      method: 'PUT',
      url: `/api/users/${user.id}/password`,
      payload: { password: 'correct horse battery' },
      as: admin,
    });
    assert.equal(set.status, 204);
    for (let i = 0; i < 5; i++) {
      const failed = await server.request({
        method: 'POST',
        url: '/auth/login',
        payload: { username: user.username, password: `guess number ${i}` },
        remoteAddress: `10.3.0.${i}`,
      });
      assert.equal(failed.status, 401);
    }
    const variant = await server.request({
      method: 'POST',
      url: '/auth/login',
      payload: { username: user.username.replace('i', '\u0130'), password: 'correct horse battery' },
      remoteAddress: '10.3.0.99',
    });
    assert.equal(variant.status, 401, JSON.stringify(variant.body));
    assert.match(variant.body.error, /wrong username or password/);
  });

  test('a password typed into the username field is stored nowhere in the database as typed', async () => {
    // People do type their password into the wrong field. The failure is counted against that
    // "username" and audited; neither may keep the text, which stays until the next failed sign-in.
    const typed = `Tr0ub4dor&3-secret-${++names}`;
    const failed = await server.request({
      method: 'POST',
      url: '/auth/login',
      payload: { username: typed, password: 'whatever was typed next' },
      remoteAddress: '10.4.0.1',
    });
    assert.equal(failed.status, 401);
    const found = await server.db.query<{ place: string }>(
      `SELECT 'sign_in_failures' AS place FROM sign_in_failures WHERE position(lower($1) IN lower(bucket)) > 0
       UNION ALL
       SELECT 'audit_log' FROM audit_log WHERE position(lower($1) IN lower(detail::text)) > 0`,
      [typed],
    );
    assert.deepEqual(found.rows, []);
  });

  test("an unknown username's audit digest shows a name tried again, but cannot be checked against a guess", async () => {
    // Admins (and the operator's service account) read the audit log. A plain SHA-256 of a
    // password typed into the username field could be checked against a dictionary by anyone
    // who reads it; a digest keyed with the instance's secret cannot.
    const typed = `Summer2026!-${++names}`;
    for (let i = 0; i < 2; i++) {
      const failed = await server.request({
        method: 'POST',
        url: '/auth/login',
        payload: { username: typed, password: 'whatever was typed next' },
        remoteAddress: '10.4.0.2',
      });
      assert.equal(failed.status, 401);
    }
    const audited = await server.request({ method: 'GET', url: '/api/audit?limit=2', as: admin });
    const digests = (audited.body as { action: string; detail: Record<string, unknown> }[]).map(
      (entry) => entry.detail.unknown_username_sha256,
    );
    assert.equal(digests.length, 2);
    assert.match(String(digests[0]), /^[0-9a-f]{16}$/);
    assert.equal(digests[0], digests[1], 'the same name tried twice shows as the same digest');
    const plain = createHash('sha256').update(typed.toLowerCase()).digest('hex');
    assert.ok(!plain.startsWith(String(digests[0])), 'a plain SHA-256 of the typed text');
  });

  test('after 30 failures from one address, that address is refused for every username', async () => {
    const person = await personWithPassword();
    for (let i = 0; i < 30; i++) {
      const failed = await server.request({
        method: 'POST',
        url: '/auth/login',
        payload: { username: `sprayed-${i}`, password: 'password1234' },
        remoteAddress: '192.0.2.66',
      });
      assert.equal(failed.status, 401);
    }
    const limited = await server.request({
      method: 'POST',
      url: '/auth/login',
      payload: { username: person.username, password: person.password },
      remoteAddress: '192.0.2.66',
    });
    assert.equal(limited.status, 429);
    assert.match(limited.body.error, /from your address/);
    await signIn(person.username, person.password, '192.0.2.67');
  });
});

test('with an https TERDUT_PUBLIC_URL the cookies are Secure even when TLS ends at a proxy that says nothing', async () => {
  const db = await createTestPglite();
  const server = await startTestApp(db, {
    config: testConfig({ TERDUT_PUBLIC_URL: 'https://terdut.example.com' }),
  });
  try {
    const admin = await server.createUser('admin', 'admin');
    await server.request({
      method: 'PUT',
      url: `/api/users/${admin.id}/password`,
      payload: { password: 'admin password 1' },
      as: admin,
    });
    const response = await server.app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { username: 'admin', password: 'admin password 1' },
    });
    assert.equal(response.statusCode, 200);
    const setCookie = ([] as string[]).concat(response.headers['set-cookie'] as string[]);
    assert.deepEqual(setCookie.map((line) => line.split('=', 1)[0]).sort(), [
      'terdut_csrf',
      'terdut_device',
      'terdut_session',
    ]);
    assert.ok(setCookie.every((line) => /; Secure/.test(line)));
  } finally {
    await server.close();
    await db.close();
  }
});

test('behind a trusted proxy, failed sign-ins are counted and audited for the forwarded client address', async () => {
  const db = await createTestPglite();
  const server = await startTestApp(db, { config: testConfig({ TERDUT_TRUSTED_PROXIES: '127.0.0.1' }) });
  try {
    await server.createUser('someone');
    const viaProxy = (forwardedFor: string, remoteAddress: string) =>
      server.request({
        method: 'POST',
        url: '/auth/login',
        headers: { 'x-forwarded-for': forwardedFor },
        payload: { username: 'someone', password: 'not the password' },
        remoteAddress,
      });
    assert.equal((await viaProxy('203.0.113.5', '127.0.0.1')).status, 401);
    // A client that is not the proxy cannot choose its address by sending the header.
    assert.equal((await viaProxy('198.51.100.1', '192.0.2.9')).status, 401);
    const audited = await db.query<{ client_address: string }>(
      `SELECT client_address FROM audit_log WHERE action = 'sign_in.failed' ORDER BY id`,
    );
    assert.deepEqual(
      audited.rows.map((row) => row.client_address),
      ['203.0.113.5', '192.0.2.9'],
    );
    // A password typed into the username field must not land in the audit log.
    await server.request({
      method: 'POST',
      url: '/auth/login',
      payload: { username: 'Tr0ub4dor&3-typed-here', password: 'x'.repeat(12) },
      remoteAddress: '192.0.2.9',
    });
    const details = await db.query<{ detail: Record<string, unknown> }>(
      `SELECT detail FROM audit_log WHERE action = 'sign_in.failed' ORDER BY id`,
    );
    assert.deepEqual(details.rows[0]!.detail, { method: 'password', username: 'someone' });
    assert.doesNotMatch(JSON.stringify(details.rows), /Tr0ub4dor/);
    assert.match(String(details.rows.at(-1)!.detail.unknown_username_sha256), /^[0-9a-f]{16}$/);
    const buckets = await db.query<{ bucket: string }>(
      `SELECT DISTINCT bucket FROM sign_in_failures WHERE bucket LIKE 'address:%' ORDER BY bucket`,
    );
    assert.deepEqual(
      buckets.rows.map((row) => row.bucket),
      ['address:192.0.2.9', 'address:203.0.113.5'],
    );
  } finally {
    await server.close();
    await db.close();
  }
});

test('before bootstrap, password sign-in is refused with "not set up" and writes nothing', async () => {
  const db = await createTestPglite();
  const server = await startTestApp(db);
  try {
    const response = await server.request({
      method: 'POST',
      url: '/auth/login',
      payload: { username: 'anyone', password: 'whatever password' },
    });
    assert.equal(response.status, 403);
    assert.deepEqual(response.body, { error: 'this server has not been set up yet' });
    for (const table of ['users', 'sessions', 'sign_in_failures', 'audit_log']) {
      const count = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
      assert.equal(count.rows[0]!.n, 0, `${table} is empty`);
    }
  } finally {
    await server.close();
    await db.close();
  }
});
