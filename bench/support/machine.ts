/** The machine a benchmark ran on, printed with its figures so results can be compared honestly. */
import { cpus, totalmem, freemem, loadavg } from 'node:os';
import { readFileSync } from 'node:fs';

export interface MachineDescription {
  cpuModel: string;
  cores: number;
  memoryTotal: string;
  memoryFree: string;
  node: string;
  /** 1-minute load average at the start: other work on the machine skews every figure. */
  loadAverage: string;
}

export function describeMachine(): MachineDescription {
  let cpuModel = cpus()[0]?.model ?? 'unknown';
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((entry) => entry.startsWith('model name'));
    if (line) cpuModel = line.split(':')[1]!.trim();
  } catch {
    // Not Linux: os.cpus() is good enough.
  }
  const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(1)} GiB`;
  return {
    cpuModel,
    cores: cpus().length,
    memoryTotal: gib(totalmem()),
    memoryFree: gib(freemem()),
    node: process.version,
    loadAverage: loadavg()[0]!.toFixed(2),
  };
}

export function printMachine(): void {
  const machine = describeMachine();
  console.log(
    `machine: ${machine.cores} cores (${machine.cpuModel}), ${machine.memoryTotal} RAM (${machine.memoryFree} free), Node ${machine.node}, load average ${machine.loadAverage}`,
  );
}
