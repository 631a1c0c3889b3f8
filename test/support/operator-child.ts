/**
 * terdut-operator for the operator benchmark and the steady-state test: the real `packages/operator/src/main.ts`
 * in a child process of its own (so its peak RSS is its own, not the
 * benchmark's), with leader election on as deployed, metrics on a known
 * loopback port, and Service URLs resolved through an overrides file that
 * the benchmark's kubelet writes.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ChildProcessGroup,
  freeLoopbackPort,
  logTail,
  repoRoot,
  waitUntil,
} from '../peers/child-processes.ts';
import { operatorNamespace } from '../operator/support/operator.ts';

export interface BenchOperator {
  pid: number;
  metricsUrl: string;
  logPath: string;
  /** The text of /metrics. */
  scrape(): Promise<string>;
  /** VmHWM and VmRSS of the process, in MiB (from /proc/<pid>/status). */
  memory(): { peakMiB: number; currentMiB: number };
  stop(): Promise<void>;
}

export async function startBenchOperator(options: {
  kubeconfigPath: string;
  overridesFile: string;
  dir: string;
  concurrency?: number;
  extraArgs?: string[];
}): Promise<BenchOperator> {
  const metricsPort = await freeLoopbackPort();
  const probePort = await freeLoopbackPort();
  const group = new ChildProcessGroup();
  const logPath = join(options.dir, 'operator.log');
  const child = group.spawn({
    name: 'terdut-operator',
    command: process.execPath,
    args: [
      join(repoRoot, 'packages', 'operator', 'src', 'main.ts'),
      '--kubeconfig',
      options.kubeconfigPath,
      '--operator-namespace',
      operatorNamespace,
      '--metrics-address',
      `127.0.0.1:${metricsPort}`,
      '--probe-address',
      `127.0.0.1:${probePort}`,
      '--server-url-overrides-file',
      options.overridesFile,
      '--default-image',
      'terdut-server:bench',
      ...(options.concurrency ? ['--concurrency', String(options.concurrency)] : []),
      ...(options.extraArgs ?? []),
    ],
    logPath,
    env: { PATH: process.env.PATH, HOSTNAME: 'terdut-operator-bench', LOG_LEVEL: 'warn' },
  });
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  const pid = child.process.pid!;
  await waitUntil(
    async () =>
      (await fetch(`http://127.0.0.1:${probePort}/readyz`, { signal: AbortSignal.timeout(1000) })).status ===
      200,
    {
      timeoutMs: 90_000,
      intervalMs: 250,
      child,
      describe: () => `the operator did not become ready; its log:\n${logTail(logPath, 30)}`,
    },
  );
  const memory = () => {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field: string) =>
      Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { peakMiB: kib('VmHWM') / 1024, currentMiB: kib('VmRSS') / 1024 };
  };
  return {
    pid,
    metricsUrl,
    logPath,
    scrape: async () => (await fetch(metricsUrl, { signal: AbortSignal.timeout(10_000) })).text(),
    memory,
    stop: () => group.stop(10_000),
  };
}
