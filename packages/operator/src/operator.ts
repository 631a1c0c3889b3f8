/**
 * Assembles a running terdut-operator: the work queue, the TerdutServer
 * controller (whose watches controllers/terdutserver/setup.ts declares), the
 * health/metrics server and leader election.
 * `main.ts` calls it with parsed configuration; tests call it in-process.
 */
import type { OperatorConfig } from './config.ts';
import { Controller } from './runtime/controller.ts';
import { startHealthServer, type HealthServer } from './runtime/health-server.ts';
import type { KubeClient } from './runtime/kube-client.ts';
import { LeaderElector } from './runtime/leader-election.ts';
import { createOperatorMetrics, type OperatorMetrics } from './runtime/metrics.ts';
import { WorkQueue } from './runtime/work-queue.ts';
import type { Logger } from './runtime/logger.ts';
import type { Failpoint } from './controllers/terdutserver/failpoint.ts';
import type { ServerUrlResolver } from './controllers/terdutserver/server-url.ts';
import { setupTerdutServerController } from './controllers/terdutserver/setup.ts';

export interface StartOperatorOptions {
  config: OperatorConfig;
  kube: KubeClient;
  logger: Logger;
  /** Replaces the Service-DNS / overrides-file resolution (tests map Services to loopback). */
  resolveServerUrl?: ServerUrlResolver;
  failpoint?: Failpoint;
  /** Leader identity; default hostname + random. */
  identity?: string;
  /** Called when leadership is lost without a release; main exits the process. */
  onLeadershipLost?: () => void;
  processMetrics?: boolean;
}

export interface RunningOperator {
  metrics: OperatorMetrics;
  identity: string;
  /** True while this replica leads (always true without leader election). */
  leading(): boolean;
  /** Informers synced. */
  ready(): boolean;
  probeUrl: string;
  metricsUrl: string;
  /** Graceful: stop taking keys, finish reconciles in flight, release the lease, stop watches. */
  stop(): Promise<void>;
}

export async function startOperator(options: StartOperatorOptions): Promise<RunningOperator> {
  const { config, kube, logger } = options;
  const metrics = createOperatorMetrics({ processMetrics: options.processMetrics ?? false });
  kube.onRequest((verb, resource, status) =>
    metrics.kubeRequests.inc({ verb, resource, code: String(status) }),
  );
  const queue = new WorkQueue();
  const abort = new AbortController();
  const identity = options.identity ?? `${process.env.HOSTNAME ?? 'terdut-operator'}_${process.pid}`;
  const terdutServers = await setupTerdutServerController({
    config,
    kube,
    queue,
    logger,
    identity,
    resolveServerUrl: options.resolveServerUrl,
    failpoint: options.failpoint,
    metrics,
  });
  const { informers } = terdutServers;
  const informerRuns = informers.map((informer) => informer.run(abort.signal));
  let leaderElector: LeaderElector | undefined;
  const controller = new Controller({
    name: 'terdutserver',
    queue,
    reconcile: terdutServers.reconcile,
    metrics,
    logger,
  });

  let leading = !config.leaderElection;
  const startControllers = async () => {
    // Act only on a complete picture of the cluster.
    await Promise.all(informers.map((informer) => informer.waitForSync()));
    if (abort.signal.aborted) return;
    logger.info('informers synced; reconciling', { keys: queue.length });
    controller.start(config.concurrency);
    terdutServers.keyVerifier.start(abort.signal);
  };

  const ready = () => informers.every((informer) => informer.synced);
  const sharedAddress = config.metricsAddress === config.probeAddress;
  const probe = await startHealthServer({
    address: config.probeAddress,
    ready,
    registry: sharedAddress ? metrics.registry : undefined,
  });
  const metricsServer: HealthServer = sharedAddress
    ? probe
    : await startHealthServer({ address: config.metricsAddress, ready, registry: metrics.registry });

  if (config.leaderElection) {
    leaderElector = new LeaderElector({
      client: kube,
      namespace: config.operatorNamespace,
      name: config.leaseName,
      identity,
      onStartedLeading: () => {
        leading = true;
        metrics.leader.set(1);
        logger.info('became the leader', { identity });
        void startControllers();
      },
      onLost: () => {
        leading = false;
        metrics.leader.set(0);
        logger.error('lost the leader lease; stopping so that only the new leader acts', { identity });
        options.onLeadershipLost?.();
      },
      onError: (error) => logger.warn('leader election request failed', { error: (error as Error).message }),
    });
    leaderElector.start();
  } else {
    metrics.leader.set(1);
    void startControllers();
  }

  let stopping: Promise<void> | undefined;
  return {
    metrics,
    identity,
    leading: () => leading,
    ready,
    probeUrl: probe.url,
    metricsUrl: metricsServer.url,
    stop: () =>
      (stopping ??= (async () => {
        queue.shutDown();
        controller.abort();
        await controller.stopped();
        await leaderElector
          ?.release()
          .catch((error: unknown) =>
            logger.warn('could not release the lease', { error: (error as Error).message }),
          );
        leading = false;
        abort.abort();
        await Promise.allSettled(informerRuns);
        await probe.close();
        if (metricsServer !== probe) await metricsServer.close();
      })()),
  };
}
