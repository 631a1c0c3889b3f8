import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openPglite, openPostgres, parseTimestamptz } from './database.ts';
import { isUniqueViolation } from './unique-violation.ts';

test('a PGlite error keeps its code and message but not the statement or its parameters', async () => {
  const db = await openPglite(undefined);
  try {
    await db.exec('CREATE TABLE secrets (value text UNIQUE)');
    await db.query('INSERT INTO secrets (value) VALUES ($1)', ['hunter2-note-and-email@example.com']);
    const error = await db
      .query('INSERT INTO secrets (value) VALUES ($1)', ['hunter2-note-and-email@example.com'])
      .then(
        () => assert.fail('expected a unique violation'),
        (caught: unknown) => caught as Error & { code?: string },
      );
    assert.ok(isUniqueViolation(error), 'services still recognise the violation by its code');
    assert.match(error.message, /duplicate key value violates unique constraint/);
    const everything = JSON.stringify(error, Object.getOwnPropertyNames(error));
    assert.doesNotMatch(everything, /hunter2/);
    assert.doesNotMatch(everything, /INSERT INTO/);
  } finally {
    await db.close();
  }
});

test('timestamps from PostgreSQL read as the instants they name, whatever the offset, precision or era', () => {
  const cases: [string, string][] = [
    ['2026-12-03 10:58:11.446+00', '2026-12-03T10:58:11.446Z'],
    ['2026-12-03 10:58:11+00', '2026-12-03T10:58:11.000Z'],
    // Microseconds are cut to milliseconds, as node-postgres always did.
    ['2026-12-03 10:58:11.999999+00', '2026-12-03T10:58:11.999Z'],
    ['2026-12-03 16:43:11.446123+05:45', '2026-12-03T10:58:11.446Z'],
    ['2026-12-03 07:28:11.446-03:30', '2026-12-03T10:58:11.446Z'],
    ['1969-12-31 23:59:59.5+00', '1969-12-31T23:59:59.500Z'],
    // Forms the engine's own parser misreads or refuses go to the default parser.
    ['0001-01-01 00:00:00+00', '0001-01-01T00:00:00.000Z'],
    ['1900-01-01 00:19:32+00:19:32', '1900-01-01T00:00:00.000Z'],
  ];
  for (const [text, instant] of cases) assert.equal(parseTimestamptz(text).toISOString(), instant, text);
  assert.equal(parseTimestamptz('infinity'), Infinity);
});

test('timestamptz values come back from PostgreSQL as the same instants in a session of any time zone', async () => {
  const url = process.env.TERDUT_TEST_DATABASE_URL;
  assert.ok(url, 'TERDUT_TEST_DATABASE_URL is set by the global setup');
  const db = await openPostgres(url, { max: 1 });
  try {
    const instants = ['2026-12-03T10:58:11.446Z', '2026-03-29T01:30:00.000Z', '1999-12-31T23:59:59.999Z'];
    for (const zone of ['UTC', 'Asia/Kathmandu', 'America/St_Johns']) {
      const rows = await db.transaction(async (tx) => {
        await tx.query(`SELECT set_config('TimeZone', $1, true)`, [zone]);
        return (await tx.query<{ at: Date }>('SELECT unnest($1::timestamptz[]) AS at', [instants])).rows;
      });
      assert.deepEqual(
        rows.map((row) => row.at.toISOString()),
        instants,
        `in time zone ${zone}`,
      );
    }
  } finally {
    await db.close();
  }
});

test('PostgreSQL connections never JIT-compile a plan, however costly its estimate', async () => {
  const url = process.env.TERDUT_TEST_DATABASE_URL;
  assert.ok(url, 'TERDUT_TEST_DATABASE_URL is set by the global setup');
  const db = await openPostgres(url, { max: 3 });
  try {
    // Estimated at a billion rows, far past jit_above_cost; asked on three connections at once.
    const plans = await Promise.all(
      [1, 2, 3].map(() =>
        db.query<{ 'QUERY PLAN': string }>(
          'EXPLAIN SELECT count(*) FROM generate_series(1, 1000) a, generate_series(1, 1000) b, generate_series(1, 1000) c',
        ),
      ),
    );
    for (const plan of plans) {
      const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
      assert.match(text, /Aggregate/);
      assert.doesNotMatch(text, /^JIT:/m);
    }
  } finally {
    await db.close();
  }
});

test('a statement PostgreSQL refuses fails alone: its connection, and what it prepared, serve the next one', async () => {
  const url = process.env.TERDUT_TEST_DATABASE_URL;
  assert.ok(url, 'TERDUT_TEST_DATABASE_URL is set by the global setup');
  const db = await openPostgres(url, { max: 1 });
  try {
    const backendOf = async () =>
      (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const before = await backendOf();
    await assert.rejects(db.query('SELECT 1 / $1::int AS quotient', [0]), /division by zero/);
    await assert.rejects(
      db.transaction(async (tx) => tx.query('SELECT 1 / $1::int AS quotient', [0])),
      /division by zero/,
    );
    assert.equal(await backendOf(), before, 'the same server process answers after both errors');
    assert.deepEqual((await db.query('SELECT 6 / $1::int AS quotient', [3])).rows, [{ quotient: 2 }]);
  } finally {
    await db.close();
  }
});
