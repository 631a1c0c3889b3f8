/**
 * Test support: the one way tests and benchmarks run `node
 * packages/server/src/main.ts …` as a real child process, with only the
 * environment given (never the test runner's own): a command to completion
 * (`runMain`), a `serve` whose output a test reads (`startServe`), or a ready
 * server on a loopback port (`startServerProcess`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freeLoopbackPort, stopChild, waitUntil, type ChildProcessGroup } from '../peers/child-processes.ts';

export const MAIN = fileURLToPath(new URL('../../packages/server/src/main.ts', import.meta.url));

/** The bootstrap token of servers started here (at least 32 characters). */
export const TEST_BOOTSTRAP_TOKEN = 'test-bootstrap-token-0123456789abcdef0123456789';

/** The environment of a terdut-server child: PATH and HOME plus `env`. */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'info', ...env };
}

/** Runs a command to completion and returns its exit code and output. */
export function runMain(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], { env: childEnv(env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A running `serve` process whose combined output is collected. */
export interface ServerProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves with the output once `pattern` appears in it (rejects after `timeoutMs`). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** SIGTERM and wait for exit. */
  stop(): Promise<void>;
}

export function startServe(env: Record<string, string>): ServerProcess {
  const child = spawn(process.execPath, [MAIN, 'serve'], { env: childEnv(env) });
  let output = '';
  const waiters = new Set<() => void>();
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    for (const wake of waiters) wake();
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  return {
    child,
    output: () => output,
    waitFor(pattern, timeoutMs = 180_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = output.match(pattern);
          if (match) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(match);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${String(pattern)}; output so far:\n${output}`));
        }, timeoutMs);
        waiters.add(check);
        void exited.then(() => {
          if (waiters.has(check)) {
            waiters.delete(check);
            clearTimeout(timer);
            reject(new Error(`server exited before ${String(pattern)}; output:\n${output}`));
          }
        });
        check();
      });
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** A `serve` process on a loopback port that answered /readyz. */
export interface RunningServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Where its stdout and stderr go. */
  logPath: string;
  /** The server's process id (what /proc/<pid>/status describes). */
  pid: number;
  /** SIGTERM, SIGKILL after 10 s; resolves once it exited and its log directory is gone. */
  stop(): Promise<void>;
}

/**
 * Starts `terdut-server serve` on a free loopback port, as a child of
 * `processes` (so it dies with the test or benchmark, even on a crash), and
 * waits until /readyz answers 200. Storage is `databaseUrl` (PostgreSQL) or
 * `dataDir` (PGlite); `env` adds or overrides variables.
 *
 * @example const server = await startServerProcess({ processes, databaseUrl: database.url });
 */
export async function startServerProcess(options: {
  processes: ChildProcessGroup;
  databaseUrl?: string;
  dataDir?: string;
  env?: Record<string, string>;
  logLevel?: string;
  /** The program and its first arguments, before `serve`; default: `node packages/server/src/main.ts`. */
  command?: [string, ...string[]];
}): Promise<RunningServer> {
  const port = await freeLoopbackPort();
  const [command, ...commandArgs] = options.command ?? [process.execPath, MAIN];
  const dir = mkdtempSync(join(tmpdir(), 'terdut-server-'));
  const child = options.processes.spawn({
    name: `terdut-server :${port}`,
    command,
    args: [...commandArgs, 'serve'],
    cwd: dir,
    logPath: join(dir, 'server.log'),
    env: childEnv({
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: options.logLevel ?? 'warn',
      TERDUT_BOOTSTRAP_TOKEN: TEST_BOOTSTRAP_TOKEN,
      ...(options.databaseUrl !== undefined
        ? { DATABASE_URL: options.databaseUrl }
        : { TERDUT_DATA_DIR: options.dataDir ?? join(dir, 'data') }),
      ...options.env,
    }),
  });
  const url = `http://127.0.0.1:${port}`;
  await waitUntil(async () => (await fetch(`${url}/readyz`)).status === 200, {
    timeoutMs: 120_000,
    child,
    describe: () => `terdut-server did not become ready at ${url}/readyz`,
  });
  return {
    url,
    logPath: child.logPath,
    pid: child.process.pid!,
    async stop() {
      await stopChild(child, 10_000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
