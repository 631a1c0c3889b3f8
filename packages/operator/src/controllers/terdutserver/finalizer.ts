/**
 * Step 1: the finalizer goes on before anything is created, so nothing the
 * operator makes outside garbage collection's reach (operator-namespace
 * Secrets, the key on the server) can outlive the TerdutServer.
 */
import { resourcePath, resources } from '../../runtime/kube-client.ts';
import type { TerdutServer } from '../../api/v1alpha1/terdutserver.ts';
import type { Pass, ReconcileDeps, StepResult } from './context.ts';
import { finalizerName } from './names.ts';

export async function reconcileFinalizer(
  deps: Pick<ReconcileDeps, 'kube' | 'failpoint'>,
  pass: Pass,
): Promise<StepResult> {
  const { metadata } = pass.server;
  if (metadata.finalizers?.includes(finalizerName)) return undefined;
  // A merge patch replaces the whole list; the resourceVersion precondition
  // makes it fail (409, retried) instead of dropping someone else's finalizer
  // added in between.
  pass.server = await deps.kube.mergePatch<TerdutServer>(
    resourcePath(resources.terdutservers, metadata.namespace, metadata.name),
    {
      metadata: {
        finalizers: [...(metadata.finalizers ?? []), finalizerName],
        resourceVersion: metadata.resourceVersion,
      },
    },
  );
  deps.failpoint('finalizer');
  return undefined;
}
