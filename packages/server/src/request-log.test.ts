import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { buildApp, LOG_REDACT_PATHS } from './app.ts';
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
  const logger = pino({ level: 'info', redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' } }, sink);
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
