/**
 * CPU time of benchmarked processes, from Linux's /proc: what a request
 * costs in CPU is steadier on a shared machine than how many fit in a
 * second, so the intake figures give both.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

// /proc/<pid>/stat counts in clock ticks; Linux's USER_HZ is 100.
const MS_PER_TICK = 10;

/** User + system CPU time of `pid` so far, in ms; NaN when it is gone. */
export function cpuMsOf(pid: number): number {
  try {
    // The command name (field 2) may hold spaces; the fields after ") " are plain.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * MS_PER_TICK;
  } catch {
    return Number.NaN;
  }
}

/**
 * The CPU time of the PostgreSQL backends serving `database` on this
 * machine (their titles name it: `postgres: user database host(port) …`).
 * Backends come and go; each one's last reading is kept, so the total only
 * grows. Works when the server runs here (the temporary cluster, or a local
 * one); NaN readings otherwise count as nothing.
 */
export class BackendCpu {
  readonly #database: string;
  readonly #lastSeen = new Map<number, number>();

  constructor(database: string) {
    this.#database = database;
  }

  totalMs(): number {
    let listing: string;
    try {
      listing = execFileSync('ps', ['-e', '-o', 'pid=,args='], { encoding: 'utf8' });
    } catch {
      return Number.NaN;
    }
    for (const line of listing.split('\n')) {
      const match = /^\s*(\d+)\s+postgres: \S+ (\S+) /.exec(line);
      if (match === null || match[2] !== this.#database) continue;
      const ms = cpuMsOf(Number(match[1]));
      if (!Number.isNaN(ms)) this.#lastSeen.set(Number(match[1]), ms);
    }
    let total = 0;
    for (const ms of this.#lastSeen.values()) total += ms;
    return total;
  }
}

/** CPU per notification of a server process and of the backends serving its database. */
export interface CpuPerNotification {
  serverCpuMs: number;
  /** 0 when the database runs inside the server (PGlite): its CPU is the server's. */
  databaseCpuMs: number;
}

/**
 * Starts counting the CPU of the server process `serverPid` and of
 * `backends` (none for PGlite); the function it returns divides what they
 * spent since by the notifications sent meanwhile.
 */
export function countCpuFromNow(
  serverPid: number,
  backends: BackendCpu | undefined,
): (notifications: number) => CpuPerNotification {
  const serverBefore = cpuMsOf(serverPid);
  const databaseBefore = backends?.totalMs() ?? 0;
  return (notifications) => ({
    serverCpuMs: (cpuMsOf(serverPid) - serverBefore) / notifications,
    databaseCpuMs: ((backends?.totalMs() ?? 0) - databaseBefore) / notifications,
  });
}
