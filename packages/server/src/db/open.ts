import { mkdir, readdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Config } from '../config.ts';
import { openPglite, openPostgres, describeUrl, type Database } from './database.ts';
import { LOCK_FILE, lockDataDir } from './data-dir-lock.ts';

/** Opens the configured database: PostgreSQL at DATABASE_URL, else the embedded one in TERDUT_DATA_DIR. */
export async function openConfiguredDatabase(config: Config): Promise<{ db: Database; description: string }> {
  if (config.databaseUrl !== undefined) {
    return {
      db: await openPostgres(config.databaseUrl, {
        statementTimeoutMs: config.dbStatementTimeoutMs,
        queryTimeoutMs: config.dbQueryTimeoutMs,
      }),
      description: `PostgreSQL at ${describeUrl(config.databaseUrl)}`,
    };
  }
  const dir = resolve(config.dataDir);
  let release: (() => Promise<void>) | undefined;
  try {
    await mkdir(dir, { recursive: true });
    await refuseForeignFiles(dir);
    // Before PGlite opens it: a second process must not write beside a running server.
    release = await lockDataDir(dir);
    const db = await openPglite(dir, { sharedBuffers: config.embeddedSharedBuffers });
    const close = db.close.bind(db);
    db.close = async () => {
      try {
        await close();
      } finally {
        await release?.();
      }
    };
    return { db, description: `embedded PostgreSQL (PGlite) in ${dir}` };
  } catch (error) {
    await release?.();
    throw new Error(
      `cannot open the embedded database in ${dir} (${describeOpenError(error)}); check TERDUT_DATA_DIR, ` +
        'and that no other terdut-server uses the same directory',
      { cause: error },
    );
  }
}

/** What a directory may hold before a database is made in it: a volume's lost+found, our lock file after a crash. */
const ALLOWED_BEFORE_A_DATABASE = new Set(['lost+found', LOCK_FILE]);

/**
 * Refuses a directory that holds other files and no database (no
 * `PG_VERSION`), as PostgreSQL's initdb does: PGlite would make its twenty
 * files and folders among them (TERDUT_DATA_DIR pointed at a home
 * directory or a mounted volume of something else).
 */
async function refuseForeignFiles(dir: string): Promise<void> {
  const entries = await readdir(dir);
  if (entries.includes('PG_VERSION')) return;
  const foreign = entries.filter((entry) => !ALLOWED_BEFORE_A_DATABASE.has(entry)).sort();
  if (foreign.length === 0) return;
  const named =
    foreign.slice(0, 3).join(', ') + (foreign.length > 3 ? `, and ${foreign.length - 3} more` : '');
  throw new Error(
    `it holds other files (${named}) and no database: use an empty or new directory, or one an earlier terdut-server made`,
  );
}

/**
 * PGlite's file system errors carry no message, only a WASI errno: without
 * this a full disk or a directory it may not write read "(undefined)".
 */
const WASI_ERRNO: Record<number, string> = {
  2: 'EACCES: permission denied',
  20: 'EEXIST: file already exists',
  44: 'ENOENT: no such file or directory',
  51: 'ENOSPC: no space left on device',
  63: 'EPERM: operation not permitted',
  69: 'EROFS: read-only file system',
};

function describeOpenError(error: unknown): string {
  const { message, errno } = error as { message?: string; errno?: number };
  if (message) return message;
  if (errno !== undefined) return WASI_ERRNO[errno] ?? `file system error ${errno}`;
  return String(error);
}
