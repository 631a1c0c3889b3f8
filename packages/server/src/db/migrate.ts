import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Database } from './database.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

// Any constant works; it only has to be the same for every replica. Taken
// inside the transaction, so two replicas starting together apply the
// migrations once and the second finds them done.
const MIGRATION_LOCK_KEY = 7_362_011;

/**
 * Applies every pending `migrations/*.sql` file, in file-name order, in one
 * transaction under an advisory lock. Forward only: applied files are
 * recorded and never run again. Returns the names it applied.
 * `through` (a file name) stops after that file: the schema of an earlier
 * release, for the tests that upgrade its data.
 */
export async function migrate(db: Database, options: { through?: string } = {}): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR))
    .filter((name) => name.endsWith('.sql') && (options.through === undefined || name <= options.through))
    .sort();
  if (options.through !== undefined && !files.includes(options.through)) {
    throw new Error(`migrate: there is no migration ${options.through}`);
  }
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await tx.query(
        `CREATE TABLE IF NOT EXISTS schema_migrations (
           name text PRIMARY KEY,
           applied_at timestamptz NOT NULL DEFAULT now()
         )`,
      );
    } catch (error) {
      // The first statement that needs a privilege: since PostgreSQL 15 only a
      // database's owner may create tables in its public schema by default.
      const denied = (error as { code?: string }).code === '42501';
      throw new Error(
        `cannot create terdut's tables (${(error as Error).message})` +
          (denied
            ? '; the DATABASE_URL user must own the database or have CREATE on its schema ' +
              '(GRANT CREATE ON SCHEMA public TO that user)'
            : ''),
        { cause: error },
      );
    }
    const done = new Set(
      (await tx.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((row) => row.name),
    );
    const applied: string[] = [];
    for (const name of files) {
      if (done.has(name)) continue;
      const sql = await readFile(MIGRATIONS_DIR + name, 'utf8');
      try {
        await tx.exec(sql);
      } catch (error) {
        throw new Error(`migration ${name} failed: ${(error as Error).message}`, { cause: error });
      }
      await tx.query('INSERT INTO schema_migrations (name) VALUES ($1)', [name]);
      applied.push(name);
    }
    return applied;
  });
}

/** True when every migration file has been applied (what /readyz reports). */
export async function migrationsApplied(db: Database): Promise<boolean> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((name) => name.endsWith('.sql'));
  try {
    const result = await db.query<{ count: number }>(
      'SELECT count(*)::int AS count FROM schema_migrations WHERE name = ANY($1)',
      [files],
    );
    return result.rows[0]?.count === files.length;
  } catch {
    return false;
  }
}
