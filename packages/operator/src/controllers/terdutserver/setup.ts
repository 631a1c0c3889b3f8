/**
 * The TerdutServer controller's wiring: what it watches (informers, label
 * selectors, the key mappers of watches.ts), the adapters its reconcile uses,
 * and the key verifier. operator.ts runs what this declares (queue, workers,
 * leader election, health) and knows nothing about TerdutServers.
 */
import { TerdutClient } from '@terdut/client';
import type { OperatorConfig } from '../../config.ts';
import type { TerdutServer } from '../../api/v1alpha1/terdutserver.ts';
import { Informer } from '../../runtime/informer.ts';
import { resourcePath, resources, type KubeClient, type KubeObject } from '../../runtime/kube-client.ts';
import type { Logger } from '../../runtime/logger.ts';
import type { WorkQueue } from '../../runtime/work-queue.ts';
import type { Reconcile } from '../../runtime/controller.ts';
import type { OperatorMetrics } from '../../runtime/metrics.ts';
import type { ReconcileDeps, Secret } from './context.ts';
import { KubeEventRecorder } from './events.ts';
import { failpointFromEnv, type Failpoint } from './failpoint.ts';
import { PeriodicKeyVerifier } from './key-verifier.ts';
import { managedByLabel, managedByValue } from './names.ts';
import { reconcileTerdutServer } from './reconciler.ts';
import { overridesFileResolver, serviceDnsResolver, type ServerUrlResolver } from './server-url.ts';
import { keysForOwned, keysForSecret, keysForTerdutServer } from './watches.ts';

/** Key checks per second across all TerdutServers (key-verifier.ts). */
const keyChecksPerSecond = 5;

export interface TerdutServerControllerSetup {
  informers: Informer<KubeObject>[];
  reconcile: Reconcile;
  keyVerifier: PeriodicKeyVerifier;
}

export async function setupTerdutServerController(options: {
  config: OperatorConfig;
  kube: KubeClient;
  queue: WorkQueue;
  logger: Logger;
  identity: string;
  resolveServerUrl?: ServerUrlResolver;
  failpoint?: Failpoint;
  metrics?: OperatorMetrics;
}): Promise<TerdutServerControllerSetup> {
  const { config, kube, queue, logger } = options;
  const namespaces = config.watchNamespaces.length > 0 ? config.watchNamespaces : [undefined];
  const managedBy = `${managedByLabel}=${managedByValue}`;
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
        labelSelector: managedBy,
        metadataOnly: false,
        onEvent: (_type, object) => enqueue(keysForOwned(object)),
        onError: onInformerError('deployments'),
      }),
  );
  // The Service is not in the Deployment's status: without a watch of its
  // own, a deleted Service would stay gone until something else woke the owner.
  const serviceInformers = namespaces.map(
    (namespace) =>
      new Informer<KubeObject>(kube, {
        name: 'services',
        path: resourcePath(resources.services, namespace),
        labelSelector: managedBy,
        metadataOnly: true,
        onEvent: (_type, object) => enqueue(keysForOwned(object)),
        onError: onInformerError('services'),
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
  // The Secrets the operator itself writes (token, credentials, checkpoint),
  // with their data: a settled pass reads them from here instead of asking.
  const ownSecretInformers = secretNamespaces.map(
    (namespace) =>
      new Informer<Secret>(kube, {
        name: 'own-secrets',
        path: resourcePath(resources.secrets, namespace),
        labelSelector: managedBy,
        metadataOnly: false,
        onEvent: (_type, object) => enqueue(keysForSecret(object, config.operatorNamespace, allServers())),
        onError: onInformerError('own-secrets'),
      }),
  );
  const ownSecret = (namespace: string, name: string): Secret | undefined => {
    for (const informer of ownSecretInformers) {
      const found = informer.get(`${namespace}/${name}`);
      if (found) return found;
    }
    return undefined;
  };
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
            labelSelector: managedBy,
            onEvent: (_type, object) => enqueue(keysForOwned(object)),
            onError: onInformerError('httproutes'),
          }),
      )
    : [];

  // Every request to a terdut-server is counted by operation (the
  // steady-state test and the benchmark read the budget from it) and ends
  // when the pass's signal aborts.
  const serverClient = (baseUrl: string, token?: string, signal?: AbortSignal): TerdutClient =>
    new TerdutClient({
      baseUrl,
      token,
      timeoutMs: 10_000,
      fetch: async (input: string | URL | Request, init?: RequestInit) => {
        const url = new URL(input instanceof Request ? input.url : input);
        const operation = `${init?.method ?? 'GET'} ${url.pathname.replace(/\/\d+(?=\/|$)/g, '/:id')}`;
        try {
          const response = await fetch(input, {
            ...init,
            signal:
              signal && init?.signal ? AbortSignal.any([init.signal, signal]) : (signal ?? init?.signal),
          });
          options.metrics?.serverRequests.inc({ operation, code: String(response.status) });
          return response;
        } catch (error) {
          options.metrics?.serverRequests.inc({ operation, code: '0' });
          throw error;
        }
      },
    });
  const keyVerifier = new PeriodicKeyVerifier({
    intervalMs: config.keyCheckIntervalMs,
    perSecond: keyChecksPerSecond,
    client: (baseUrl, apiKey) => serverClient(baseUrl, apiKey),
    onRefused: (key) => queue.add(key),
    log: logger,
  });
  const deps: ReconcileDeps = {
    kube,
    operatorNamespace: config.operatorNamespace,
    defaultImage: config.defaultImage,
    events: new KubeEventRecorder(kube, options.identity, (error, event) =>
      logger.warn('could not record an event', { error: (error as Error).message, ...event }),
    ),
    resolveServerUrl:
      options.resolveServerUrl ??
      (config.serverUrlOverridesFile
        ? overridesFileResolver(config.serverUrlOverridesFile)
        : serviceDnsResolver),
    serverClient,
    failpoint: options.failpoint ?? failpointFromEnv(),
    tokenPickupTimeoutMs: config.tokenPickupTimeoutMs,
    finalizeTimeoutMs: config.finalizeTimeoutMs,
    keyVerifier,
    gatewayApiInstalled,
    cachedSecret,
    ownSecret,
    now: () => new Date(),
    log: logger,
  };

  return {
    informers: [
      ...(serverInformers as unknown as Informer<KubeObject>[]),
      ...ownedInformers,
      ...serviceInformers,
      ...secretInformers,
      ...(ownSecretInformers as unknown as Informer<KubeObject>[]),
      ...routeInformers,
    ],
    reconcile: (key, signal) => reconcileTerdutServer(deps, key, signal),
    keyVerifier,
  };
}
