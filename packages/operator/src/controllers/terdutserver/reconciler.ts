/**
 * The TerdutServer reconcile: re-read the object, run the steps in order
 * until one stops the pass, and always write what the pass learnt to status.
 * Level-triggered: a pass never depends on which event woke it.
 */
import type { ReconcileResult } from '../../runtime/controller.ts';
import { isNamespaceTerminating, resourcePath, resources } from '../../runtime/kube-client.ts';
import type { TerdutServer } from '../../api/v1alpha1/terdutserver.ts';
import { ConditionSet } from './conditions.ts';
import type { Pass, ReconcileDeps, StepResult } from './context.ts';
import { finalizeTerdutServer, reconcileFinalizer } from './finalizer.ts';
import { withFields } from '../../runtime/logger.ts';
import { reconcileTokenSecret } from './token-secret.ts';
import { reconcileDatabase } from './database.ts';
import { reconcileWorkload } from './workload.ts';
import { reconcileBootstrap } from './bootstrap.ts';
import { reconcileRoute } from './route.ts';
import { writeStatus } from './status.ts';

type Step = (deps: ReconcileDeps, pass: Pass) => Promise<StepResult>;

/** In order; each file's comment says why it sits where it does. */
export const steps: readonly Step[] = [
  reconcileFinalizer,
  reconcileTokenSecret,
  reconcileDatabase,
  reconcileWorkload,
  reconcileBootstrap,
  reconcileRoute,
];

/**
 * The adapters for one pass: requests that `signal` aborts (the operator
 * stopping) and a logger bound to the TerdutServer.
 */
export function passDeps(deps: ReconcileDeps, key: string, signal?: AbortSignal): ReconcileDeps {
  if (!signal) return { ...deps, log: withFields(deps.log, { terdutserver: key }) };
  return {
    ...deps,
    kube: deps.kube.withSignal(signal),
    serverClient: (baseUrl, token) => deps.serverClient(baseUrl, token, signal),
    log: withFields(deps.log, { terdutserver: key }),
  };
}

/** Reconciles the TerdutServer `namespace/name`. */
export async function reconcileTerdutServer(
  sharedDeps: ReconcileDeps,
  key: string,
  signal?: AbortSignal,
): Promise<ReconcileResult | undefined> {
  const deps = passDeps(sharedDeps, key, signal);
  const [namespace, name] = key.split('/') as [string, string];
  const server = await deps.kube.get<TerdutServer>(resourcePath(resources.terdutservers, namespace, name));
  // Gone: owned objects go with garbage collection, the rest went with the finalizer.
  if (!server) return undefined;
  if (server.metadata.deletionTimestamp) return finalizeTerdutServer(deps, server);
  const pass: Pass = {
    server,
    conditions: new ConditionSet(server.status?.conditions, server.metadata.generation, deps.now),
    status: {
      credentialsSecretRef: server.status?.credentialsSecretRef,
      url: server.status?.url,
      replicas: server.status?.replicas,
      selector: server.status?.selector,
    },
  };
  let result: StepResult;
  try {
    for (const step of steps) {
      result = await step(deps, pass);
      if (result) break;
    }
  } catch (error) {
    if (!isNamespaceTerminating(error)) {
      pass.failure = (error as Error).message;
      throw error;
    }
    // The namespace is being deleted and admission refuses anything new in
    // it (a token Secret, a Deployment the namespace controller removed).
    // Retrying cannot succeed and would only log errors until the namespace
    // controller deletes this TerdutServer too; that deletion wakes the key
    // and the finalizer runs. So the pass ends as converged, with no retry,
    // as Kubernetes' own ReplicaSet controller treats this Status cause.
    result = undefined;
    pass.namespaceTerminating = `namespace ${namespace} is being deleted, so nothing new can be made in it (${(error as Error).message}); the operator waits for the TerdutServer's own deletion and then revokes its keys`;
    deps.log.info('the namespace is being deleted; not retrying until the TerdutServer is deleted too', {
      error: (error as Error).message,
    });
  } finally {
    await writeStatus(deps, pass);
  }
  return result?.requeueAfterMs !== undefined ? { requeueAfterMs: result.requeueAfterMs } : undefined;
}
