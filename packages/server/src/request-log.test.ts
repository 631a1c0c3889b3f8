import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { buildApp, LOG_OPTIONS } from './app.ts';
import { redactUrl } from './http/logged-request.ts';
import { openPglite } from './db/database.ts';
import { migrate } from './db/migrate.ts';
import { testConfig } from '../../../test/support/app.ts';

test('each request is logged once, on completion, with its status and time and without credentials', async () => {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const logger = pino({ level: 'info', ...LOG_OPTIONS }, sink);
  const db = await openPglite(undefined);
  await migrate(db);
  const app = await buildApp({ db, config: testConfig(), logger });
  try {
    const secret = 'a'.repeat(64);
    const denied = await app.inject({
      method: 'GET',
      url: '/api/incidents',
      headers: { authorization: `Bearer ${secret}` },
    });
    assert.equal(denied.statusCode, 401);
    const healthy = await app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(healthy.statusCode, 200);

    const requests = lines.filter((line) => line.reqId !== undefined);
    assert.deepEqual(
      requests.map((line) => [
        line.msg,
        (line.req as { url: string }).url,
        (line.res as { statusCode: number }).statusCode,
      ]),
      [
        ['request completed', '/api/incidents', 401],
        ['request completed', '/healthz', 200],
      ],
    );
    for (const line of requests) assert.equal(typeof line.responseTime, 'number');
    assert.doesNotMatch(JSON.stringify(lines), new RegExp(secret));
  } finally {
    await app.close();
    await db.close();
  }
});

test('credentials carried in a URL are redacted in the log: acknowledge links, sign-in callbacks, calendar feeds', async () => {
  assert.equal(redactUrl('/paging/acknowledge?token=eyJ2.abc'), '/paging/acknowledge?token=[redacted]');
  assert.equal(
    redactUrl('/auth/oidc/callback?code=c0de&state=s7ate&iss=https%3A%2F%2Fidp'),
    '/auth/oidc/callback?code=[redacted]&state=[redacted]&iss=https%3A%2F%2Fidp',
  );
  assert.equal(redactUrl('/api/calendar/f33d.ics'), '/api/calendar/[redacted]');
  // What clients put in URLs by habit, though terdut reads none of them there: still never logged.
  assert.equal(
    redactUrl('/api/incidents?access_token=t0k&api_key=k3y&apikey=k3y&password=pw&limit=5'),
    '/api/incidents?access_token=[redacted]&api_key=[redacted]&apikey=[redacted]&password=[redacted]&limit=5',
  );
  const secret = 'ab12'.repeat(16);
  for (const spelling of ['//api/calendar', '/api//calendar', '/API/calendar', '/terdut/api/calendar']) {
    assert.equal(redactUrl(`${spelling}/7-${secret}.ics`), `${spelling}/[redacted]`);
  }
  assert.equal(redactUrl('/api/incidents?status=resolved&limit=5'), '/api/incidents?status=resolved&limit=5');
  assert.equal(redactUrl('/x?%74oken=1&TOKEN=2'), '/x?%74oken=[redacted]&TOKEN=[redacted]');

  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const db = await openPglite(undefined);
  await migrate(db);
  const app = await buildApp({
    db,
    config: testConfig(),
    logger: pino({ level: 'info', ...LOG_OPTIONS }, sink),
  });
  try {
    const link = await app.inject({
      method: 'GET',
      url: '/paging/acknowledge?token=not-a-real-capability-0123',
    });
    assert.equal(link.statusCode, 403);
    // Another spelling of a feed's URL is not the feed route (401), and its line is logged at info.
    const feed = await app.inject({ method: 'GET', url: `//api/calendar/7-${secret}.ics` });
    assert.equal(feed.statusCode, 401);
    const log = lines.join('');
    assert.match(log, /\/paging\/acknowledge\?token=\[redacted\]/);
    assert.doesNotMatch(log, /not-a-real-capability-0123/);
    assert.match(log, /\/\/api\/calendar\/\[redacted\]/);
    assert.doesNotMatch(log, new RegExp(secret));
  } finally {
    await app.close();
    await db.close();
  }
});
