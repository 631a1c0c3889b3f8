/**
 * Test support: runs `node packages/server/src/main.ts …` as a real child
 * process, with only the environment given (never the test runner's own).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const MAIN = fileURLToPath(new URL('../../packages/server/src/main.ts', import.meta.url));

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
