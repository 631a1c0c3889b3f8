/**
 * A terdut-server for benchmarks: the real CLI as shipped (`bin/terdut-server
 * serve`, the built JavaScript) in a child
 * process of its own, listening on loopback, so the load generator and the
 * server do not share an event loop. Started the one way tests start servers
 * (test/support/server-process.ts); its database is prepared beforehand
 * (migrations, one admin with an API key) directly through the repositories.
 */
import { fileURLToPath } from 'node:url';
import { openPglite, openPostgres, type Database } from '../../packages/server/src/db/database.ts';
import { migrate } from '../../packages/server/src/db/migrate.ts';
import { ChildProcessGroup } from '../../test/peers/child-processes.ts';
import { startServerProcess as startServer } from '../../test/support/server-process.ts';
import { insertUserWithKey } from '../../test/support/users.ts';

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
    const admin = await insertUserWithKey(db, { username: `bench-admin-${Date.now()}`, role: 'admin' });
    return { adminId: admin.id, adminKey: admin.key };
  } finally {
    await db.close();
  }
}

/**
 * terdut-server as the image and `npm start` run it: the built JavaScript,
 * with the V8 flags in this script (bench/README.md "Memory" says why), so
 * benchmarks measure what runs in production. Flags to compare go in the
 * server's TERDUT_NODE_FLAGS, which come after the shipped ones and win.
 */
export const SERVER_BIN = fileURLToPath(new URL('../../packages/server/bin/terdut-server', import.meta.url));

export interface RunningServer {
  baseUrl: string;
  /** The server's process id, for reading its memory from /proc. */
  pid: number;
  /** Its output: the request log, one JSON line per request (gone after stop). */
  logPath: string;
  stop(): Promise<void>;
}

/**
 * Starts `terdut-server serve` on a free loopback port and waits until /readyz
 * answers 200 (bin/terdut-server rebuilds the server first when a source
 * changed). The server gets only `env` (the script sets the allocator's) beyond its
 * storage, never the benchmark's own environment.
 */
export async function startServerProcess(
  storage: BenchStorage,
  env: Record<string, string> = {},
): Promise<RunningServer> {
  const processes = new ChildProcessGroup();
  // The request log is written as in production (info), to a file no one reads.
  const server = await startServer({
    processes,
    logLevel: 'info',
    command: [SERVER_BIN],
    env,
    ...(storage.kind === 'postgres' ? { databaseUrl: storage.url } : { dataDir: storage.dataDir }),
  });
  return {
    baseUrl: server.url,
    pid: server.pid,
    logPath: server.logPath,
    async stop() {
      await server.stop();
      await processes.stop();
    },
  };
}
