import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Config } from '../config.ts';
import { openPglite, openPostgres, describeUrl, type Database } from './database.ts';
import { lockDataDir } from './data-dir-lock.ts';

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
