/**
 * The PostgreSQL a benchmark runs on: TERDUT_BENCH_DATABASE_URL, else
 * TERDUT_TEST_DATABASE_URL, else a temporary cluster started like the tests'
 * one (test/peers/postgres.ts, which runs with fsync=off; with
 * BENCH_POSTGRES_FSYNC=on, PostgreSQL's default, it runs durable, so a
 * commit waits for the disk). Each benchmark creates databases of its own on
 * it and drops them at the end.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startTemporaryPostgres, canConnect } from '../../test/peers/postgres.ts';

export interface BenchPostgres {
  /** Superuser/maintenance URL. */
  url: string;
  /** Where it came from, for the printed report. */
  origin: string;
  /** `fsync` and `synchronous_commit` as the server reports them: what "durable" means in this run. */
  durability: string;
  createDatabase(prefix: string): Promise<{ url: string; drop(): Promise<void> }>;
  stop(): Promise<void>;
}

export async function provideBenchPostgres(): Promise<BenchPostgres> {
  const given = process.env.TERDUT_BENCH_DATABASE_URL || process.env.TERDUT_TEST_DATABASE_URL;
  let url: string;
  let origin: string;
  let stop = async () => {};
  if (given) {
    if (!(await canConnect(given)))
      throw new Error('the PostgreSQL of TERDUT_BENCH_DATABASE_URL does not answer');
    url = given;
    origin = process.env.TERDUT_BENCH_DATABASE_URL ? 'TERDUT_BENCH_DATABASE_URL' : 'TERDUT_TEST_DATABASE_URL';
  } else {
    const fsync = process.env.BENCH_POSTGRES_FSYNC ?? 'off';
    if (fsync !== 'on' && fsync !== 'off')
      throw new Error(`BENCH_POSTGRES_FSYNC must be "on" or "off", not ${JSON.stringify(fsync)}`);
    const temporary = await startTemporaryPostgres({ durable: fsync === 'on' });
    url = temporary.url;
    origin = 'temporary cluster (test/peers/postgres.ts)';
    stop = () => temporary.stop();
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const settings = await client.query<{ name: string; setting: string }>(
    `SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'server_version') ORDER BY name`,
  );
  await client.end();
  const setting = (name: string) => settings.rows.find((row) => row.name === name)?.setting ?? '?';
  return {
    url,
    origin: `${origin}, PostgreSQL ${setting('server_version')}`,
    durability: `fsync=${setting('fsync')}, synchronous_commit=${setting('synchronous_commit')}`,
    async createDatabase(prefix: string) {
      const name = `${prefix}_${randomBytes(4).toString('hex')}`;
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${name}`);
      await admin.end();
      const databaseUrl = new URL(url);
      databaseUrl.pathname = `/${name}`;
      return {
        url: databaseUrl.toString(),
        async drop() {
          const cleanup = new pg.Client({ connectionString: url });
          await cleanup.connect();
          await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
          await cleanup.end();
        },
      };
    },
    stop,
  };
}
