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

/**
 * Where a process's resident set is, by kind of mapping (MiB), from
 * /proc/<pid>/smaps. A WebAssembly memory is the one anonymous mapping that
 * V8 follows with a guard region of its own (an inaccessible reservation of
 * at least 1 GiB right after it); for PGlite that is PostgreSQL's memory:
 * shared_buffers, work_mem and the rest, only as much of it as was touched.
 */
export interface ResidentBreakdown {
  rssMiB: number;
  /** Mapped files: almost all of it the node binary's own code, shared with every other Node process. */
  filesMiB: number;
  /** WebAssembly linear memories (PGlite's PostgreSQL). */
  wasmMiB: number;
  /** glibc's main heap (`[heap]`): native allocations, and what glibc keeps of the freed ones. */
  mallocHeapMiB: number;
  /** The rest: V8's heap pages, other malloc arenas and mmapped blocks, code, thread stacks. */
  otherAnonymousMiB: number;
}

/** The resident set of `pid` by kind of mapping; NaN figures when it is gone or /proc cannot be read. */
export function residentBreakdownOf(pid: number): ResidentBreakdown {
  const breakdown = { rssMiB: 0, filesMiB: 0, wasmMiB: 0, mallocHeapMiB: 0, otherAnonymousMiB: 0 };
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return {
      rssMiB: Number.NaN,
      filesMiB: Number.NaN,
      wasmMiB: Number.NaN,
      mallocHeapMiB: Number.NaN,
      otherAnonymousMiB: Number.NaN,
    };
  }
  const mappings: { start: bigint; end: bigint; perms: string; name: string; rssMiB: number }[] = [];
  for (const line of text.split('\n')) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      mappings.push({
        start: BigInt(`0x${header[1]}`),
        end: BigInt(`0x${header[2]}`),
        perms: header[3]!,
        name: header[4] ?? '',
        rssMiB: 0,
      });
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && mappings.length > 0) mappings.at(-1)!.rssMiB = Number(rss[1]) / 1024;
  }
  const GUARD = 2n ** 30n;
  mappings.forEach((mapping, index) => {
    breakdown.rssMiB += mapping.rssMiB;
    const next = mappings[index + 1];
    if (mapping.name.startsWith('/')) breakdown.filesMiB += mapping.rssMiB;
    else if (mapping.name === '[heap]') breakdown.mallocHeapMiB += mapping.rssMiB;
    else if (
      mapping.name === '' &&
      mapping.perms.startsWith('rw') &&
      next !== undefined &&
      next.start === mapping.end &&
      next.perms.startsWith('---') &&
      next.end - next.start >= GUARD
    ) {
      breakdown.wasmMiB += mapping.rssMiB;
    } else breakdown.otherAnonymousMiB += mapping.rssMiB;
  });
  return breakdown;
}

/** `RSS 214 MiB: files 58, WebAssembly 32, malloc heap 20, other anonymous 104`. */
export function describeResident(breakdown: ResidentBreakdown): string {
  const round = (mib: number) => (Number.isNaN(mib) ? '-' : Math.round(mib).toString());
  return (
    `RSS ${round(breakdown.rssMiB)} MiB: files ${round(breakdown.filesMiB)}, WebAssembly ${round(breakdown.wasmMiB)}, ` +
    `malloc heap ${round(breakdown.mallocHeapMiB)}, other anonymous ${round(breakdown.otherAnonymousMiB)}`
  );
}

/** The server's own view of its V8 heap (MiB), from prom-client's process metrics on its /metrics. */
export async function v8HeapOf(
  baseUrl: string,
): Promise<{ heapUsedMiB: number; heapTotalMiB: number; externalMiB: number }> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const gaugeMiB = (name: string) =>
    Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN) / 2 ** 20;
  return {
    heapUsedMiB: gaugeMiB('terdut_nodejs_heap_size_used_bytes'),
    heapTotalMiB: gaugeMiB('terdut_nodejs_heap_size_total_bytes'),
    externalMiB: gaugeMiB('terdut_nodejs_external_memory_bytes'),
  };
}
