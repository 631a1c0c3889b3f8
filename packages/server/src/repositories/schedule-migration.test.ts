/**
 * Migration 0600 on a database that already has day entries: they become
 * whole-day overrides of the default schedule with the same ids, and new
 * entries get ids after them. Runs on both databases, each built up to 0401
 * by hand so there is data for 0600 to carry over.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { openPglite, openPostgres, type Database } from '../db/database.ts';
import { migrate } from '../db/migrate.ts';

const MIGRATIONS = fileURLToPath(new URL('../db/migrations/', import.meta.url));

/** Applies the migrations before 0600 the way `migrate` would, and records them. */
async function migrateBefore0600(db: Database): Promise<void> {
  await db.exec(
    'CREATE TABLE schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
  );
  for (const name of (await readdir(MIGRATIONS)).filter((f) => f.endsWith('.sql') && f < '0600').sort()) {
    await db.exec(await readFile(MIGRATIONS + name, 'utf8'));
    await db.query('INSERT INTO schema_migrations (name) VALUES ($1)', [name]);
  }
}

async function carriesDayEntriesOver(db: Database): Promise<void> {
  await migrateBefore0600(db);
  const user = await db.query<{ id: number }>(
    "INSERT INTO users (username) VALUES ('old-timer') RETURNING id",
  );
  const userId = user.rows[0]!.id;
  await db.query(
    `INSERT INTO schedule_entries (user_id, date, created_at) VALUES
       ($1, '2026-07-26', '2026-07-01T00:00:00Z'),
       ($1, '2026-07-27', '2026-07-01T00:00:00Z'), ($1, '2026-07-28', '2026-07-01T00:00:00Z')`,
    [userId],
  );
  // Ids that a fresh sequence would not give: the carried-over rows must keep them.
  await db.query("DELETE FROM schedule_entries WHERE date = '2026-07-26'");
  const before = await db.query<{ id: number }>('SELECT id FROM schedule_entries ORDER BY date');

  assert.deepEqual(
    await migrate(db),
    (await readdir(MIGRATIONS)).filter((f) => f.endsWith('.sql') && f >= '0600').sort(),
  );

  const after = await db.query<{ id: number; day: string; default_schedule: boolean }>(
    `SELECT o.id, to_char(o.day, 'YYYY-MM-DD') AS day, s.is_default AS default_schedule
       FROM schedule_overrides o JOIN schedules s ON s.id = o.schedule_id ORDER BY o.day`,
  );
  assert.deepEqual(
    after.rows.map((row) => [row.id, row.day, row.default_schedule]),
    [
      [before.rows[0]!.id, '2026-07-27', true],
      [before.rows[1]!.id, '2026-07-28', true],
    ],
  );
  const next = await db.query<{ id: number }>(
    `INSERT INTO schedule_overrides (schedule_id, user_id, day)
     SELECT id, $1, '2026-07-29' FROM schedules WHERE is_default RETURNING id`,
    [userId],
  );
  assert.ok(next.rows[0]!.id > before.rows[1]!.id, 'a new entry gets an id after the carried-over ones');
  const zone = await db.query<{ time_zone: string | null }>(
    'SELECT time_zone FROM schedules WHERE is_default',
  );
  assert.equal(
    zone.rows[0]!.time_zone,
    null,
    'the default follows TERDUT_TIMEZONE until an admin sets a zone',
  );
}

test('PGlite: day entries become whole-day overrides of the default schedule, same ids', async () => {
  const db = await openPglite(undefined);
  try {
    await carriesDayEntriesOver(db);
  } finally {
    await db.close();
  }
});

test('PostgreSQL: day entries become whole-day overrides of the default schedule, same ids', async () => {
  const adminUrl = process.env.TERDUT_TEST_DATABASE_URL;
  assert.ok(adminUrl, 'TERDUT_TEST_DATABASE_URL is not set; run with the global setup');
  const name = `terdut_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = await openPostgres(url.toString());
  try {
    await carriesDayEntriesOver(db);
  } finally {
    await db.close();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
});
