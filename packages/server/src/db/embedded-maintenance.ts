import type { BackgroundJob } from '../background-jobs.ts';
import type { Database, Queryable } from './database.ts';

/**
 * PostgreSQL's own defaults for when autovacuum vacuums or analyses a table
 * (autovacuum_vacuum_threshold / _scale_factor, autovacuum_vacuum_insert_*,
 * autovacuum_analyze_*): a fixed number of rows plus a share of the table.
 */
const VACUUM_DEAD_ROWS = { base: 50, share: 0.2 };
const VACUUM_INSERTED_ROWS = { base: 1000, share: 0.2 };
const ANALYZE_CHANGED_ROWS = { base: 50, share: 0.1 };

/** autovacuum_naptime's default: how often a table's counters are looked at. */
const MAINTENANCE_INTERVAL_MS = 60_000;

export interface MaintenancePass {
  /** Tables vacuumed (and analysed) in this pass. */
  vacuumed: string[];
  /** Tables only analysed. */
  analyzed: string[];
}

/**
 * The embedded database's autovacuum.
 *
 * PGlite runs PostgreSQL in single-user mode, where the autovacuum launcher
 * never starts: without this, no table is ever analysed and no dead row is
 * ever removed. The planner then guesses every row count, and the guesses
 * get worse as the data grows: at 125k alerts a notification's firing-alert
 * count took 417 ms (a scan of every firing alert) instead of 3 ms, and
 * notification latency grew from 22 ms to 777 ms by 700k alerts
 * (bench/README.md). On PostgreSQL, autovacuum does this, so there is no job.
 *
 * Each pass reads the same counters autovacuum reads (pg_stat_user_tables)
 * and applies autovacuum's default thresholds. A table never analysed (a new
 * database, or one written by a version without this job) is vacuumed and
 * analysed on the first pass. PGlite has one connection, so each command
 * holds up requests while it runs; the thresholds keep that rare and small
 * (a table is analysed after a tenth of it changed).
 */
export function embeddedDatabaseJobs(db: Database): BackgroundJob[] {
  if (db.kind !== 'pglite') return [];
  return [
    { name: 'embedded-maintenance', intervalMs: MAINTENANCE_INTERVAL_MS, run: () => maintainTables(db) },
  ];
}

/** One pass: vacuums and analyses the tables past autovacuum's thresholds. */
export async function maintainTables(db: Queryable): Promise<MaintenancePass> {
  // Counters reach pg_stat_user_tables at most once a second; count what this
  // connection has done until now too.
  await db.query('SELECT pg_stat_force_next_flush()');
  const due = await db.query<{ table_name: string; vacuum: boolean; analyze: boolean }>(
    `SELECT quote_ident(s.relname) AS table_name,
            c.reltuples < 0
              OR s.n_dead_tup > $1 + $2 * greatest(c.reltuples, 0)
              OR s.n_ins_since_vacuum > $3 + $4 * greatest(c.reltuples, 0) AS vacuum,
            c.reltuples < 0
              OR s.n_mod_since_analyze > $5 + $6 * greatest(c.reltuples, 0) AS analyze
       FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
      WHERE s.schemaname = current_schema()
      ORDER BY s.relname`,
    [
      VACUUM_DEAD_ROWS.base,
      VACUUM_DEAD_ROWS.share,
      VACUUM_INSERTED_ROWS.base,
      VACUUM_INSERTED_ROWS.share,
      ANALYZE_CHANGED_ROWS.base,
      ANALYZE_CHANGED_ROWS.share,
    ],
  );
  const pass: MaintenancePass = { vacuumed: [], analyzed: [] };
  for (const table of due.rows) {
    // VACUUM cannot run inside a transaction: each table is its own command.
    if (table.vacuum) {
      await db.exec(`VACUUM ${table.analyze ? '(ANALYZE) ' : ''}${table.table_name}`);
      pass.vacuumed.push(table.table_name);
    } else if (table.analyze) {
      await db.exec(`ANALYZE ${table.table_name}`);
      pass.analyzed.push(table.table_name);
    }
  }
  return pass;
}
