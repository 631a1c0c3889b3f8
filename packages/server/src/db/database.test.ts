import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openPglite, openPostgres, parseTimestamptz, type Queryable } from './database.ts';
import { isUniqueViolation } from './unique-violation.ts';

function testPostgresUrl(): string {
  const url = process.env.TERDUT_TEST_DATABASE_URL;
  assert.ok(url, 'TERDUT_TEST_DATABASE_URL is set by the global setup');
  return url;
}

/** The PostgreSQL server process that answers `db`'s next statement. */
async function backendOf(db: Queryable): Promise<number> {
  return (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
}

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
  const url = testPostgresUrl();
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
  const url = testPostgresUrl();
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

test('PostgreSQL connections never plan a parallel query, even where the planner would find one cheaper', async () => {
  const url = testPostgresUrl();
  const db = await openPostgres(url, { max: 1 });
  const table = `parallel_probe_${process.pid}`;
  try {
    await db.exec(
      `CREATE TABLE ${table} AS SELECT g AS x FROM generate_series(1, 50000) g; ` +
        `ALTER TABLE ${table} SET (parallel_workers = 2); ANALYZE ${table}`,
    );
    const plan = await db.transaction(async (tx) => {
      // Workers made free and every table big enough: a planner allowed parallel plans takes one.
      await tx.exec('SET LOCAL parallel_setup_cost = 0; SET LOCAL parallel_tuple_cost = 0');
      await tx.exec('SET LOCAL min_parallel_table_scan_size = 0');
      return (await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN SELECT count(*) FROM ${table}`)).rows;
    });
    const text = plan.map((row) => row['QUERY PLAN']).join('\n');
    assert.match(text, /Seq Scan/);
    assert.doesNotMatch(text, /Gather|Parallel/, text);
  } finally {
    await db.exec(`DROP TABLE IF EXISTS ${table}`);
    await db.close();
  }
});

test('a statement PostgreSQL refuses fails alone: its connection, and what it prepared, serve the next one', async () => {
  const url = testPostgresUrl();
  const db = await openPostgres(url, { max: 1 });
  try {
    const before = await backendOf(db);
    await assert.rejects(db.query('SELECT 1 / $1::int AS quotient', [0]), /division by zero/);
    await assert.rejects(
      db.transaction(async (tx) => tx.query('SELECT 1 / $1::int AS quotient', [0])),
      /division by zero/,
    );
    assert.equal(await backendOf(db), before, 'the same server process answers after both errors');
    assert.deepEqual((await db.query('SELECT 6 / $1::int AS quotient', [3])).rows, [{ quotient: 2 }]);
  } finally {
    await db.close();
  }
});

test('connections PostgreSQL ends (a restart, a failover, pg_terminate_backend) are replaced, never lent again', async () => {
  const url = testPostgresUrl();
  const db = await openPostgres(url, { max: 3 });
  const admin = await openPostgres(url, { max: 1 });
  const terminate = (pids: number[]) =>
    admin.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [pids]);
  try {
    // Three idle connections, all ended by the server.
    const idle = await Promise.all([1, 2, 3].map(() => backendOf(db)));
    await terminate(idle);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const after = await Promise.all([1, 2, 3].map(() => backendOf(db)));
    for (const pid of after) assert.ok(!idle.includes(pid), `backend ${pid} was ended and is in use again`);

    // A statement whose connection is ended under it fails at once, in a transaction too.
    // Each case starts with three open, idle connections.
    for (const run of [
      (sql: string) => db.query(sql),
      (sql: string) => db.transaction((tx) => tx.query(sql)),
    ]) {
      const running = run('SELECT pg_sleep(30)');
      // Expected at once, so the rejection is never unhandled, whenever it comes.
      const failed = assert.rejects(running, /terminat/i);
      let busy: number[] = [];
      while (busy.length === 0) {
        busy = (
          await admin.query<{ pid: number }>(
            `SELECT pid FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)' AND state = 'active'`,
          )
        ).rows.map((row) => row.pid);
      }
      const started = performance.now();
      await terminate(busy);
      await failed;
      assert.ok(performance.now() - started < 5_000, 'the statement failed when its connection ended');
      // Out of the pool by the time its caller hears of it, not idle in it
      // until node-postgres notices the socket closed.
      assert.deepEqual(db.poolStats(), { total: 2, idle: 2, waiting: 0 });
      const next = await Promise.all([1, 2, 3].map(() => backendOf(db)));
      assert.ok(!next.some((pid) => busy.includes(pid)), `backend ${busy.join()} was lent again`);
    }
    // Ended between two statements of a transaction, while the connection is
    // lent and the pool does not listen to it: the next statement fails,
    // and the process, which would die of an 'error' event nobody hears,
    // goes on.
    await assert.rejects(
      db.transaction(async (tx) => {
        await terminate([await backendOf(tx)]);
        await new Promise((resolve) => setTimeout(resolve, 200));
        await tx.query('SELECT 1');
      }),
      /terminat|not queryable/i,
    );
    assert.deepEqual((await db.query('SELECT 1 AS one')).rows, [{ one: 1 }]);
    assert.equal(await db.transaction(async (tx) => (await tx.query('SELECT 2 AS two')).rows[0]!.two), 2);
  } finally {
    await db.close();
    await admin.close();
  }
});
