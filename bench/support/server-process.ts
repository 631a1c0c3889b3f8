/**
 * A terdut-server for benchmarks: the real CLI (`main.ts serve`) in a child
 * process of its own, listening on loopback, so the load generator and the
 * server do not share an event loop. Started the one way tests start servers
 * (test/support/server-process.ts); its database is prepared beforehand
 * (migrations, one admin with an API key) directly through the repositories.
 */
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
 * The V8 flags terdut-server ships with (the image's entrypoint and `npm
 * start`; bench/README.md "Memory" says why), so benchmarks measure what
 * runs in production.
 */
export const SERVER_NODE_FLAGS = '--max-semi-space-size=8 --max-old-space-size=1024';

/** The allocator setting the image ships with (Dockerfile; bench/README.md "Memory"). */
export const SERVER_MALLOC_ENV = { MALLOC_MMAP_THRESHOLD_: '131072' };

export interface RunningServer {
  baseUrl: string;
  /** The server's process id, for reading its memory from /proc. */
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts `terdut-server serve` on a free loopback port and waits until /readyz
 * answers 200. The server gets only `env` (with SERVER_NODE_FLAGS and
 * SERVER_MALLOC_ENV) beyond its storage, never the benchmark's own
 * environment.
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
    // Flags given in `env` come later and win.
    env: {
      ...SERVER_MALLOC_ENV,
      ...env,
      NODE_OPTIONS: [SERVER_NODE_FLAGS, env.NODE_OPTIONS].filter(Boolean).join(' '),
    },
    ...(storage.kind === 'postgres' ? { databaseUrl: storage.url } : { dataDir: storage.dataDir }),
  });
  return {
    baseUrl: server.url,
    pid: server.pid,
    async stop() {
      await server.stop();
      await processes.stop();
    },
  };
}
