import { mkdir, readdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Config } from '../config.ts';
import { openPglite, openPostgres, describeUrl, type Database } from './database.ts';
import { LOCK_FILE, lockDataDir } from './data-dir-lock.ts';

/** Opens the configured database: PostgreSQL at DATABASE_URL, else the embedded one in TERDUT_DATA_DIR. */
export async function openConfiguredDatabase(
  config: Config,
): Promise<{ db: Database; description: string; warnings: string[] }> {
  if (config.databaseUrl !== undefined) {
    return {
      db: await openPostgres(config.databaseUrl, {
        statementTimeoutMs: config.dbStatementTimeoutMs,
        queryTimeoutMs: config.dbQueryTimeoutMs,
      }),
      description: `PostgreSQL at ${describeUrl(config.databaseUrl)}`,
      warnings: [],
    };
  }
  const dir = resolve(config.dataDir);
  let release: (() => Promise<void>) | undefined;
  try {
    await mkdir(dir, { recursive: true });
    const foreign = await foreignFiles(dir);
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
    const warnings =
      foreign === undefined
        ? []
        : [
            `TERDUT_DATA_DIR (${dir}) held other files (${foreign}) when the embedded database was made in it; ` +
              'its files are among them. Give the database a directory of its own (move it with the server stopped).',
          ];
    return { db, description: `embedded PostgreSQL (PGlite) in ${dir}`, warnings };
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
 * The other files in a directory where no database is yet (no `PG_VERSION`),
 * named for a warning, else undefined. PGlite makes its twenty files and
 * folders among them (TERDUT_DATA_DIR pointed at a home directory or at a
 * volume of something else). Not refused: a directory that also holds a
 * log or a token file is a working setup, only an untidy one.
 */
async function foreignFiles(dir: string): Promise<string | undefined> {
  const entries = await readdir(dir);
  if (entries.includes('PG_VERSION')) return undefined;
  const foreign = entries.filter((entry) => !ALLOWED_BEFORE_A_DATABASE.has(entry)).sort();
  if (foreign.length === 0) return undefined;
  return foreign.slice(0, 3).join(', ') + (foreign.length > 3 ? `, and ${foreign.length - 3} more` : '');
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
