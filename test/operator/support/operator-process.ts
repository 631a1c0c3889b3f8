/**
 * terdut-operator for tests: in-process (fast, for most behaviour) or as a
 * real child process of `packages/operator/src/main.ts` (for what needs a
 * process to die: failpoints, leader election, SIGTERM).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChildProcessGroup, logTail, repoRoot, type StartedChild } from '../../peers/child-processes.ts';
import type { KubeletStandIn } from '../../peers/kubelet-standin.ts';
import { startOperator, type RunningOperator } from '../../../packages/operator/src/operator.ts';
import { loadOperatorConfig } from '../../../packages/operator/src/config.ts';
import { KubeClient } from '../../../packages/operator/src/runtime/kube-client.ts';
import { operatorNamespace } from './operator.ts';

export interface InProcessOperator extends RunningOperator {
  logs: string[];
  kube: KubeClient;
}

/** The operator in this process; Services resolve through the stand-in's loopback URLs. */
export async function startInProcessOperator(options: {
  kubeconfigPath: string;
  standIn: KubeletStandIn;
  watchNamespaces?: string[];
  tokenPickupTimeoutSeconds?: number;
  extraArgs?: string[];
  /** Default: the stand-in's loopback URL of each Service. */
  resolveServerUrl?: (namespace: string, service: string, serviceUrl: string) => string;
}): Promise<InProcessOperator> {
  const logs: string[] = [];
  const kube = KubeClient.load(options.kubeconfigPath);
  const config = loadOperatorConfig(
    [
      '--operator-namespace',
      operatorNamespace,
      '--metrics-address',
      '127.0.0.1:0',
      '--probe-address',
      '127.0.0.1:0',
      '--no-leader-election',
      '--default-image',
      'terdut-server:test',
      '--token-pickup-timeout',
      String(options.tokenPickupTimeoutSeconds ?? 30),
      ...(options.watchNamespaces ? ['--watch-namespaces', options.watchNamespaces.join(',')] : []),
      ...(options.extraArgs ?? []),
    ],
    {},
  );
  const record = (level: string) => (msg: string, fields?: Record<string, unknown>) =>
    logs.push(`${level} ${msg} ${JSON.stringify(fields ?? {})}`);
  const operator = await startOperator({
    config,
    kube,
    logger: { debug: () => {}, info: record('info'), warn: record('warn'), error: record('error') },
    resolveServerUrl:
      options.resolveServerUrl ??
      ((namespace, service, serviceUrl) =>
        options.standIn.serviceUrls.get(`${namespace}/${service}`) ?? serviceUrl),
  });
  return {
    ...operator,
    stop: () => operator.stop(),
    leading: () => operator.leading(),
    ready: () => operator.ready(),
    logs,
    kube,
  };
}

export interface OperatorProcess {
  child: StartedChild;
  identity: string;
  /** Writes the stand-in's Service URLs where the process reads them. */
  syncServiceUrls(): void;
  /** SIGTERM (graceful: releases the lease), SIGKILL after 10 s. */
  stop(): Promise<void>;
  kill(): void;
  log(): string;
}

const directoriesToRemove = new Set<string>();

/**
 * An operator's log is read in failure messages after stop(), so its
 * directory goes when the test file's process ends, not before.
 */
function removedAtExit(dir: string): void {
  if (directoriesToRemove.size === 0)
    process.once('exit', () => {
      for (const each of directoriesToRemove) rmSync(each, { recursive: true, force: true });
    });
  directoriesToRemove.add(dir);
}

/** A real terdut-operator process (main.ts) with leader election on. */
export function startOperatorProcess(options: {
  kubeconfigPath: string;
  standIn: KubeletStandIn;
  identity: string;
  failpoint?: string;
  watchNamespaces?: string[];
  leaseName?: string;
  /** Off for crash loops: a killed leader's Lease would hold its successor back until it expires. */
  leaderElection?: boolean;
  extraArgs?: string[];
}): OperatorProcess {
  const dir = mkdtempSync(join(tmpdir(), 'terdut-operator-'));
  removedAtExit(dir);
  const overridesFile = join(dir, 'server-urls');
  const syncServiceUrls = () =>
    writeFileSync(
      overridesFile,
      [...options.standIn.serviceUrls].map(([service, url]) => `${service}=${url}`).join('\n') + '\n',
    );
  syncServiceUrls();
  const group = new ChildProcessGroup();
  const child = group.spawn({
    name: `terdut-operator ${options.identity}`,
    command: process.execPath,
    args: [
      join(repoRoot, 'packages', 'operator', 'src', 'main.ts'),
      '--kubeconfig',
      options.kubeconfigPath,
      '--operator-namespace',
      operatorNamespace,
      '--metrics-address',
      '127.0.0.1:0',
      '--probe-address',
      '127.0.0.1:0',
      '--server-url-overrides-file',
      overridesFile,
      '--lease-name',
      options.leaseName ?? 'terdut-operator',
      ...(options.watchNamespaces ? ['--watch-namespaces', options.watchNamespaces.join(',')] : []),
      ...(options.leaderElection === false ? ['--no-leader-election'] : []),
      ...(options.extraArgs ?? []),
    ],
    logPath: join(dir, 'operator.log'),
    env: {
      PATH: process.env.PATH,
      HOSTNAME: options.identity,
      ...(options.failpoint ? { TERDUT_OPERATOR_FAILPOINT: options.failpoint } : {}),
    },
  });
  return {
    child,
    identity: `${options.identity}_${child.process.pid}`,
    syncServiceUrls,
    stop: () => group.stop(10_000),
    kill: () => child.process.kill('SIGKILL'),
    log: () => logTail(join(dir, 'operator.log'), 40),
  };
}
