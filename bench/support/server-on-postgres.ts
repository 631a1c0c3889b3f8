/**
 * A benchmark's terdut-server on a PostgreSQL database of its own: the
 * PostgreSQL benchmarks run on (provideBenchPostgres), a new database on
 * it, migrated and given an admin, the server serving it, and a counter of
 * the CPU of the backends that serve that database. `stop()` undoes it all,
 * in reverse order.
 */
import { BackendCpu } from './cpu.ts';
import { provideBenchPostgres, type BenchPostgres } from './postgres.ts';
import { prepareStorage, startServerProcess, type RunningServer } from './server-process.ts';

export interface ServerOnPostgres {
  postgres: BenchPostgres;
  databaseUrl: string;
  /** The admin's API key. */
  adminKey: string;
  server: RunningServer;
  backends: BackendCpu;
  stop: () => Promise<void>;
}

/** Starts it all; what was started before a step failed is stopped again. */
export async function startServerOnBenchPostgres(databasePrefix: string): Promise<ServerOnPostgres> {
  const postgres = await provideBenchPostgres();
  const stops: Array<() => Promise<void>> = [() => postgres.stop()];
  const stop = async () => {
    for (const step of [...stops].reverse()) await step();
  };
  try {
    const database = await postgres.createDatabase(databasePrefix);
    stops.push(() => database.drop());
    const storage = { kind: 'postgres' as const, url: database.url };
    const { adminKey } = await prepareStorage(storage);
    const server = await startServerProcess(storage);
    stops.push(() => server.stop());
    const backends = new BackendCpu(new URL(database.url).pathname.slice(1));
    return { postgres, databaseUrl: database.url, adminKey, server, backends, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
