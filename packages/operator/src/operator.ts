/**
 * Assembles a running terdut-operator: informers, the work queue, the
 * TerdutServer controller, the health/metrics server and leader election.
 * `main.ts` calls it with parsed configuration; tests call it in-process.
 */
import { TerdutClient } from '@terdut/client';
import type { OperatorConfig } from './config.ts';
import type { TerdutServer } from './api/v1alpha1/terdutserver.ts';
import { Controller } from './runtime/controller.ts';
import { startHealthServer, type HealthServer } from './runtime/health-server.ts';
import { Informer } from './runtime/informer.ts';
import { resourcePath, resources, type KubeClient, type KubeObject } from './runtime/kube-client.ts';
import { LeaderElector } from './runtime/leader-election.ts';
import { createOperatorMetrics, type OperatorMetrics } from './runtime/metrics.ts';
import { WorkQueue } from './runtime/work-queue.ts';
import type { Logger, ReconcileDeps } from './controllers/terdutserver/context.ts';
import { KubeEventRecorder } from './controllers/terdutserver/events.ts';
import { failpointFromEnv, type Failpoint } from './controllers/terdutserver/failpoint.ts';
import { reconcileTerdutServer } from './controllers/terdutserver/reconciler.ts';
import {
  overridesFileResolver,
  serviceDnsResolver,
  type ServerUrlResolver,
} from './controllers/terdutserver/server-url.ts';
import { keysForOwned, keysForSecret, keysForTerdutServer } from './controllers/terdutserver/watches.ts';

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
  const namespaces = config.watchNamespaces.length > 0 ? config.watchNamespaces : [undefined];
  const onInformerError = (name: string) => (error: unknown) =>
    logger.warn('watch failed; restarting', { informer: name, error: (error as Error).message });

  const serverInformers = namespaces.map(
    (namespace) =>
      new Informer<TerdutServer>(kube, {
        name: `terdutservers${namespace ? `@${namespace}` : ''}`,
        path: resourcePath(resources.terdutservers, namespace),
        onEvent: (type, object, previous) => {
          for (const key of keysForTerdutServer(type, object, previous)) queue.add(key);
        },
        onError: onInformerError('terdutservers'),
      }),
  );
  const allServers = (): TerdutServer[] => serverInformers.flatMap((informer) => informer.list());
  // Operator-namespace Secrets can name TerdutServers anywhere; with
  // --watch-namespaces only those namespaces are this operator's business.
  const watched = (key: string): boolean =>
    config.watchNamespaces.length === 0 || config.watchNamespaces.includes(key.split('/')[0] ?? '');
  const enqueue = (keys: string[]) => {
    for (const key of keys) if (watched(key)) queue.add(key);
  };
  const ownedInformers = namespaces.map(
    (namespace) =>
      new Informer<KubeObject>(kube, {
        name: 'deployments',
        path: resourcePath(resources.deployments, namespace),
        labelSelector: 'app.kubernetes.io/managed-by=terdut-operator',
        metadataOnly: false,
        onEvent: (_type, object) => enqueue(keysForOwned(object)),
        onError: onInformerError('deployments'),
      }),
  );
  const secretNamespaces =
    config.watchNamespaces.length > 0
      ? [...new Set([...config.watchNamespaces, config.operatorNamespace])]
      : [undefined];
  const secretInformers = secretNamespaces.map(
    (namespace) =>
      new Informer<KubeObject>(kube, {
        name: 'secrets',
        path: resourcePath(resources.secrets, namespace),
        metadataOnly: true,
        onEvent: (_type, object) => enqueue(keysForSecret(object, config.operatorNamespace, allServers())),
        onError: onInformerError('secrets'),
      }),
  );
  const cachedSecret = (namespace: string, name: string): KubeObject | undefined => {
    for (const informer of secretInformers) {
      const found = informer.get(`${namespace}/${name}`);
      if (found) return found;
    }
    return undefined;
  };

  // HTTPRoutes are watched only if Gateway API is installed at start-up; its
  // later installation is noticed by the route step's discovery check.
  let gatewayApi: { value: boolean; at: number } | undefined;
  const gatewayApiInstalled = async (): Promise<boolean> => {
    if (!gatewayApi || (!gatewayApi.value && Date.now() - gatewayApi.at > 60_000))
      gatewayApi = {
        value: await kube.servesGroupVersion('gateway.networking.k8s.io', 'v1'),
        at: Date.now(),
      };
    return gatewayApi.value;
  };
  const routeInformers = (await gatewayApiInstalled())
    ? namespaces.map(
        (namespace) =>
          new Informer<KubeObject>(kube, {
            name: 'httproutes',
            path: resourcePath(resources.httproutes, namespace),
            labelSelector: 'app.kubernetes.io/managed-by=terdut-operator',
            onEvent: (_type, object) => enqueue(keysForOwned(object)),
            onError: onInformerError('httproutes'),
          }),
      )
    : [];

  const informers: Informer<KubeObject>[] = [
    ...(serverInformers as unknown as Informer<KubeObject>[]),
    ...ownedInformers,
    ...secretInformers,
    ...routeInformers,
  ];
  const informerRuns = informers.map((informer) => informer.run(abort.signal));

  let leaderElector: LeaderElector | undefined;
  const identity = options.identity ?? `${process.env.HOSTNAME ?? 'terdut-operator'}_${process.pid}`;
  const resolveServerUrl =
    options.resolveServerUrl ??
    (config.serverUrlOverridesFile
      ? overridesFileResolver(config.serverUrlOverridesFile)
      : serviceDnsResolver);
  const deps: ReconcileDeps = {
    kube,
    operatorNamespace: config.operatorNamespace,
    defaultImage: config.defaultImage,
    events: new KubeEventRecorder(kube, identity, (error) =>
      logger.warn('could not record an event', { error: (error as Error).message }),
    ),
    resolveServerUrl,
    serverClient: (baseUrl, token) => new TerdutClient({ baseUrl, token, timeoutMs: 10_000 }),
    failpoint: options.failpoint ?? failpointFromEnv(),
    tokenPickupTimeoutMs: config.tokenPickupTimeoutMs,
    gatewayApiInstalled,
    cachedSecret,
    now: () => new Date(),
    log: logger,
  };
  const controller = new Controller({
    name: 'terdutserver',
    queue,
    reconcile: (key) => reconcileTerdutServer(deps, key),
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
