import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Config } from '../config.ts';
import { ApiError } from '../errors.ts';
import { openConfiguredDatabase } from '../db/open.ts';
import { migrate } from '../db/migrate.ts';
import { AuditService } from '../services/audit.ts';
import { recoverAdmin } from '../services/bootstrap.ts';

export const ADMIN_RECOVER_USAGE = 'terdut-server admin recover --username NAME [--email ADDRESS]';

/** `terdut-server admin recover --help`: what it does, where to run it, and its exit codes. */
export const ADMIN_RECOVER_HELP = `Usage: ${ADMIN_RECOVER_USAGE}

Makes NAME an admin (creating it, restoring it if deleted, or promoting it) and
prints a new API key for it once, on stdout (the last line). The way back to
admin access without the bootstrap token: access to the database is the proof.

Run it where the server runs, with the same DATABASE_URL, or TERDUT_DATA_DIR
(default ./.terdut) for the embedded database; stop a server on the embedded
database first (one process per data directory). Written to the audit log as
bootstrap.recover by "cli".

  --username NAME    the account to make an admin (required)
  --email ADDRESS    its email, when it is created

Exit codes: 0 the key is printed; 1 refused (not bootstrapped yet, no database
there, a bad username, the data directory in use); 2 wrong usage or configuration.
`;

/**
 * `terdut-server admin recover`: the way back to admin access for installs
 * without an operator. Runs where the server runs (same DATABASE_URL or data
 * directory), so access to the database is the proof of ownership and no
 * token is needed. Prints the new API key once, on stdout.
 * Returns the exit code: 0 done, 1 refused, 2 usage.
 */
export async function adminRecover(
  args: string[],
  config: Config,
  out: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream },
): Promise<number> {
  let username: string | undefined;
  let email: string | undefined;
  try {
    const { values } = parseArgs({
      args,
      options: { username: { type: 'string' }, email: { type: 'string' } },
      strict: true,
    });
    ({ username, email } = values);
  } catch (error) {
    out.stderr.write(`terdut-server: ${(error as Error).message}\nusage: ${ADMIN_RECOVER_USAGE}\n`);
    return 2;
  }
  if (username === undefined) {
    out.stderr.write(`terdut-server: --username is required\nusage: ${ADMIN_RECOVER_USAGE}\n`);
    return 2;
  }
  if (config.databaseUrl === undefined) {
    // Opening would make a new, empty database there: run from another
    // directory, the default ./.terdut is one, and a stray database then sat
    // beside the real one for the next command to find.
    const dir = resolve(config.dataDir);
    if (!existsSync(join(dir, 'PG_VERSION'))) {
      out.stderr.write(
        `terdut-server: admin recover refused: not bootstrapped yet; use POST /api/bootstrap ` +
          `(in embedded PostgreSQL (PGlite) in ${dir})\n` +
          `No embedded database is there, and none was made. If the server runs elsewhere, run this where ` +
          'it runs, or set TERDUT_DATA_DIR to its data directory (or DATABASE_URL to its database).\n',
      );
      return 1;
    }
  }
  const { db, description } = await openConfiguredDatabase(config);
  try {
    await migrate(db);
    const { user, apiKey, outcome } = await recoverAdmin(
      db,
      new AuditService({ db }),
      { username, ...(email !== undefined ? { email } : {}) },
      { actor: { name: 'cli' } },
    );
    const what = {
      created: 'was created as an admin',
      restored: 'was deleted and is restored as an admin',
      promoted: 'is now an admin',
      unchanged: 'is an admin',
    }[outcome];
    out.stdout.write(
      `User "${user.username}" (id ${user.id}) ${what} in ${description}.\n` +
        `New API key "${apiKey.name}" (id ${apiKey.id}); it is shown only now, store it safely:\n` +
        `${apiKey.key}\n`,
    );
    return 0;
  } catch (error) {
    if (error instanceof ApiError) {
      // Which database: run from another directory, a relative TERDUT_DATA_DIR
      // names a new, empty one, and "not bootstrapped" alone misleads.
      out.stderr.write(`terdut-server: admin recover refused: ${error.message} (in ${description})\n`);
      return 1;
    }
    throw error;
  } finally {
    await db.close();
  }
}
