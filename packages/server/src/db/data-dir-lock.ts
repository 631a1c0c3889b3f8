import { open, readFile, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The file that says which process has the embedded database's directory open. */
export const LOCK_FILE = 'terdut-server.pid';

/**
 * Takes the embedded database's data directory for this process, or throws
 * when a running terdut-server has it. PGlite allows one process per data
 * directory, and nothing of its own tells a second one so: `admin recover`
 * beside a running server reported success, wrote into the directory, and
 * the server neither saw the change nor kept it. (PGlite's postmaster.pid
 * names no process, and stays behind after a crash.) A lock file left by a
 * process that is gone is taken over. Returns the function that gives the
 * directory back.
 */
export async function lockDataDir(dir: string): Promise<() => Promise<void>> {
  const path = join(dir, LOCK_FILE);
  try {
    const file = await open(path, 'wx');
    await file.writeFile(`${process.pid}\n`);
    await file.close();
    return releaseOf(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const holder = await readHolder(path);
  if (holder !== undefined && holder !== process.pid && isTerdutServer(holder)) {
    throw new Error(
      `the data directory ${dir} is in use by terdut-server (process ${holder}); stop that server first ` +
        '(the embedded database allows one process per data directory)',
    );
  }
  // Left by a process that is gone (or by this one): take it over.
  await writeFile(path, `${process.pid}\n`);
  return releaseOf(path);
}

/** Removes the lock file if it is still this process's (one that took it over keeps it). */
function releaseOf(path: string): () => Promise<void> {
  return async () => {
    if ((await readHolder(path)) === process.pid) await rm(path, { force: true });
  };
}

async function readHolder(path: string): Promise<number | undefined> {
  try {
    const pid = Number((await readFile(path, 'utf8')).trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Whether process `pid` is alive and, where the system tells (Linux), a terdut-server (so a reused id is not). */
function isTerdutServer(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: alive, but another user's.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  let commandLine: string;
  try {
    commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return true; // no /proc: assume it is
  }
  return /terdut|packages\/server/.test(commandLine);
}
