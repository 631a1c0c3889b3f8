/**
 * A terdut-server for benchmarks: the real CLI (`main.ts serve`) in a child
 * process of its own, listening on loopback, so the load generator and the
 * server do not share an event loop. Its database is prepared beforehand
 * (migrations, one admin with an API key) directly through the repositories.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { openPglite, openPostgres, type Database } from '../../packages/server/src/db/database.ts';
import { migrate } from '../../packages/server/src/db/migrate.ts';
import { insertUser } from '../../packages/server/src/repositories/users.ts';
import { insertKey } from '../../packages/server/src/repositories/api-keys.ts';
import { generateApiKey, hashApiKey } from '../../packages/server/src/auth/secrets.ts';
import { freePort } from '../../test/peers/postgres.ts';

const MAIN = fileURLToPath(new URL('../../packages/server/src/main.ts', import.meta.url));

/** Where the server keeps its data: a PostgreSQL database, or an embedded PGlite directory. */
export type BenchStorage = { kind: 'postgres'; url: string } | { kind: 'pglite'; dataDir: string };

/** Opens the storage directly (the server must not be running on a PGlite directory meanwhile). */
export async function openStorage(storage: BenchStorage): Promise<Database> {
  return storage.kind === 'postgres' ? openPostgres(storage.url, { max: 4 }) : openPglite(storage.dataDir);
}

/** Applies the migrations and creates an admin; returns the admin's id and API key. */
export async function prepareStorage(storage: BenchStorage): Promise<{ adminId: number; adminKey: string }> {
  const db = await openStorage(storage);
  try {
    await migrate(db);
    const admin = await insertUser(db, { username: `bench-admin-${Date.now()}`, email: '', role: 'admin' });
    const adminKey = generateApiKey();
    await insertKey(db, admin.id, 'bench', hashApiKey(adminKey));
    return { adminId: admin.id, adminKey };
  } finally {
    await db.close();
  }
}

export interface RunningServer {
  baseUrl: string;
  stop(): Promise<void>;
}

/** Starts `terdut-server serve` on a free loopback port and waits until /readyz answers 200. */
export async function startServerProcess(storage: BenchStorage): Promise<RunningServer> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' };
  delete env.DATABASE_URL;
  delete env.TERDUT_DATA_DIR;
  if (storage.kind === 'postgres') env.DATABASE_URL = storage.url;
  else env.TERDUT_DATA_DIR = storage.dataDir;
  // The request log goes to /dev/null: written as in production, read by no one.
  const child: ChildProcess = spawn(process.execPath, [MAIN, 'serve'], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`terdut-server exited with ${child.exitCode}: ${stderr.slice(-2000)}`);
    try {
      const response = await fetch(`${baseUrl}/readyz`);
      if (response.ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`terdut-server did not become ready in 120 s: ${stderr.slice(-2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    baseUrl,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 30_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}
