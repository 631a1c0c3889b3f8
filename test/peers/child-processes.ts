/**
 * Starting the real peer programs (etcd, kube-apiserver, Alertmanager,
 * terdut-server) as child processes that cannot outlive the test run.
 *
 * A child of Node survives Node being killed (SIGKILL, an out-of-memory kill,
 * a crash in native code): nothing in Node runs then. So every group of
 * children is watched by a tiny `sh` watchdog whose standard input is a pipe
 * from this process. The watchdog learns each child's pid over that pipe and,
 * when the pipe reaches end-of-file -- which the kernel guarantees when this
 * process dies, however it dies -- terminates them all (TERM, then KILL).
 * A normal `stop()` terminates the children itself and then kills the
 * watchdog, so a pid the kernel has since reused is never signalled.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root (two levels above this file). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Where `tools/build-peers.sh` puts the binaries. */
export const peerBinDir = join(repoRoot, 'tools', 'bin');

export type PeerBinary = 'etcd' | 'kube-apiserver' | 'alertmanager' | 'helm';

/**
 * Absolute path of a peer binary built by `tools/build-peers.sh`; throws with
 * the command to run when it has not been built.
 */
export function peerBinary(name: PeerBinary): string {
  const path = join(peerBinDir, name);
  if (!existsSync(path)) {
    throw new Error(
      `${path} does not exist; build the real test peers first: run bash tools/build-peers.sh (several minutes the first time)`,
    );
  }
  return path;
}

/** A free TCP port on 127.0.0.1, as the kernel hands one out right now. */
export async function freeLoopbackPort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

// Reads pids, one per line, until end-of-file; then TERM, wait, KILL.
// `read` is a shell builtin, so the watchdog has no child of its own to leak.
const watchdogScript = `
trap '' INT HUP
pids=''
while read -r pid; do pids="$pids $pid"; done
[ -n "$pids" ] || exit 0
kill -TERM $pids 2>/dev/null
i=0
while [ $i -lt 50 ]; do
  alive=''
  for p in $pids; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
  [ -n "$alive" ] || exit 0
  sleep 0.1
  i=$((i + 1))
done
kill -KILL $pids 2>/dev/null
`;

export interface StartedChild {
  readonly name: string;
  readonly process: ChildProcess;
  /** The file its stdout and stderr go to. */
  readonly logPath: string;
  /** Resolves when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly hasExited: () => boolean;
}

export interface SpawnPeerOptions {
  name: string;
  command: string;
  args: string[];
  logPath: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * A group of child processes that die together: on `stop()`, or when this
 * process exits in any way. `detached: true` is for `npm run kube:up`: the
 * children get their own session, no watchdog, and outlive this process.
 */
export class ChildProcessGroup {
  readonly #children: StartedChild[] = [];
  readonly #detached: boolean;
  #watchdog: ChildProcess | undefined;

  /** Last chance on a normal or uncaught-exception exit; the watchdog covers the exits where no JavaScript runs. */
  killRemaining(): void {
    for (const child of this.#children) {
      if (!child.hasExited() && child.process.pid !== undefined) {
        try {
          process.kill(child.process.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  }

  constructor(options: { detached?: boolean } = {}) {
    this.#detached = options.detached ?? false;
    if (!this.#detached) {
      const watchdog = spawn('sh', ['-c', watchdogScript], { stdio: ['pipe', 'ignore', 'ignore'] });
      watchdog.unref();
      // The pipe must not keep the event loop (and so the test runner) alive.
      (watchdog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
      watchdog.on('error', () => {});
      watchdog.stdin?.on('error', () => {});
      this.#watchdog = watchdog;
      killedAtExit(this);
    }
  }

  get children(): readonly StartedChild[] {
    return this.#children;
  }

  /** Starts a child whose output goes to `logPath`. */
  spawn(options: SpawnPeerOptions): StartedChild {
    const logFd = openSync(options.logPath, 'a');
    let child: ChildProcess;
    try {
      child = spawn(options.command, options.args, {
        cwd: options.cwd,
        env: options.env ?? process.env,
        stdio: ['ignore', logFd, logFd],
        detached: this.#detached,
      });
    } finally {
      closeSync(logFd);
    }
    child.unref();
    let exited = false;
    const exitedPromise = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
      (resolveExit) => {
        child.on('exit', (code, signal) => {
          exited = true;
          resolveExit({ code, signal });
        });
        child.on('error', () => {
          exited = true;
          resolveExit({ code: null, signal: null });
        });
      },
    );
    if (child.pid !== undefined) this.#watchdog?.stdin?.write(`${child.pid}\n`);
    const started: StartedChild = {
      name: options.name,
      process: child,
      logPath: options.logPath,
      exited: exitedPromise,
      hasExited: () => exited,
    };
    this.#children.push(started);
    return started;
  }

  /**
   * Stops the children, newest first (kube-apiserver before etcd), each with
   * SIGTERM and after `graceMs` SIGKILL; resolves once all have exited.
   */
  async stop(graceMs = 5000): Promise<void> {
    for (const child of [...this.#children].reverse()) await stopChild(child, graceMs);
    if (this.#watchdog?.pid !== undefined) {
      try {
        process.kill(this.#watchdog.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    liveGroups.delete(this);
  }
}

// One exit listener for all groups, however many a test keeps at once (a
// listener each set off Node's MaxListenersExceededWarning past ten).
const liveGroups = new Set<ChildProcessGroup>();
let exitHooked = false;
function killedAtExit(group: ChildProcessGroup): void {
  if (!exitHooked) {
    process.on('exit', () => {
      for (const live of liveGroups) live.killRemaining();
    });
    exitHooked = true;
  }
  liveGroups.add(group);
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the child has exited. */
export async function stopChild(child: StartedChild, graceMs = 5000): Promise<void> {
  if (child.hasExited()) return;
  child.process.kill('SIGTERM');
  const timer = setTimeout(() => child.process.kill('SIGKILL'), graceMs);
  await child.exited;
  clearTimeout(timer);
}

/**
 * Polls `probe` until it returns true (a probe that throws counts as "not
 * yet"); fails with `describe()` once `timeoutMs` has passed, or at once when
 * `child` has exited (a crashed peer will not become ready by waiting).
 */
export async function waitUntil(
  probe: () => Promise<boolean>,
  options: { timeoutMs: number; intervalMs?: number; describe: () => string; child?: StartedChild },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    if (options.child?.hasExited()) {
      throw new Error(
        `${options.describe()}: ${options.child.name} exited; last lines of ${options.child.logPath}:\n${logTail(options.child.logPath)}`,
      );
    }
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${options.describe()} within ${options.timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 100));
  }
}

/** The last `lines` lines of a log file, for error messages. */
export function logTail(path: string, lines = 15): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Whether `pid` is a running process (a zombie awaiting its reaper counts as gone). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/**
 * Runs `start` again (up to `attempts` times) when it failed because a port
 * was taken: ports are picked free, but another process can bind one between
 * the pick and the peer's own bind.
 */
export async function retryOnPortConflict<T>(start: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (error) {
      if (attempt >= attempts || !/address already in use/i.test((error as Error).message)) throw error;
    }
  }
}
