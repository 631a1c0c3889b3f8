/** Memory of benchmarked processes, from Linux's /proc (MiB). */
import { readFileSync } from 'node:fs';

export interface ProcessMemory {
  /** Resident set (VmRSS): pages a forked worker shares with its master count in each. */
  rssMiB: number;
  /** Proportional set (Pss): shared pages divided among the processes sharing them, so a sum over processes adds up. */
  pssMiB: number;
}

function kib(text: string, field: string): number {
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? Number.NaN);
}

/** The memory of `pid`; NaN figures when it is gone or /proc cannot be read. */
export function memoryOf(pid: number): ProcessMemory {
  try {
    return {
      rssMiB: kib(readFileSync(`/proc/${pid}/status`, 'utf8'), 'VmRSS') / 1024,
      pssMiB: kib(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'), 'Pss') / 1024,
    };
  } catch {
    return { rssMiB: Number.NaN, pssMiB: Number.NaN };
  }
}

/** The sum over processes (a server's master and workers). */
export function memoryOfAll(pids: number[]): ProcessMemory {
  return pids
    .map(memoryOf)
    .reduce((sum, memory) => ({ rssMiB: sum.rssMiB + memory.rssMiB, pssMiB: sum.pssMiB + memory.pssMiB }), {
      rssMiB: 0,
      pssMiB: 0,
    });
}

/** `"123 MiB"`. */
export function formatMiB(mib: number): string {
  return Number.isNaN(mib) ? '-' : `${Math.round(mib)} MiB`;
}
