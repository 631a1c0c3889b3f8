import { parseArgs } from 'node:util';
import type { Config } from '../config.ts';
import { ApiError } from '../errors.ts';
import { openConfiguredDatabase } from '../db/open.ts';
import { migrate } from '../db/migrate.ts';
import { AuditService } from '../services/audit.ts';
import { recoverAdmin } from '../services/bootstrap.ts';

export const ADMIN_RECOVER_USAGE = 'terdut-server admin recover --username NAME [--email ADDRESS]';

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
