/**
 * Last step of every pass: summarise the conditions into `Ready` and write
 * the status subresource — only when something changed, so a settled
 * TerdutServer costs no writes.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  conditionTypes,
  type TerdutServer,
  type ConditionType,
  type TerdutServerStatus,
} from '../../api/v1alpha1/terdutserver.ts';
import { resourcePath, resources } from '../../runtime/kube-client.ts';
import type { Pass, ReconcileDeps } from './context.ts';
import { ROLLOUT_STUCK } from './workload.ts';

/**
 * Ready: every condition that applies is True and the Deployment's current
 * spec is not stuck rolling out; otherwise the first that is not, with its
 * reason and message.
 */
export function summarizeReady(pass: Pass): void {
  const { conditions } = pass;
  if (pass.namespaceTerminating !== undefined) {
    conditions.set('Ready', 'False', 'NamespaceTerminating', pass.namespaceTerminating);
    return;
  }
  const exposeRequested = pass.server.spec.networking?.hostname !== undefined;
  const required: ConditionType[] = ['DatabaseReady', 'Available', 'Bootstrapped'];
  if (exposeRequested) required.push('Exposed');
  for (const type of required) {
    const found = conditions.get(type);
    // One computed for an earlier generation (a pass that failed before it
    // got there) says nothing about the current spec: Ready=True with this
    // generation would tell `kubectl wait` and GitOps tools that a spec
    // never applied is running.
    const condition = found?.observedGeneration === conditions.generation ? found : undefined;
    if (!condition) {
      // Not determined yet (API conventions: Unknown, not False); a pass
      // that failed on the way says why.
      conditions.set(
        'Ready',
        'Unknown',
        `${type}Unknown`,
        pass.failure
          ? `${type} could not be determined: ${pass.failure}; the operator retries with back-off (its log has each attempt)`
          : `${type} has not been determined yet`,
      );
      return;
    }
    if (condition.status !== 'True') {
      conditions.set('Ready', 'False', condition.reason, `${type}: ${condition.message}`);
      return;
    }
  }
  if (pass.rolloutStuck !== undefined) {
    conditions.set('Ready', 'False', ROLLOUT_STUCK, pass.rolloutStuck);
    return;
  }
  conditions.set(
    'Ready',
    'True',
    'Ready',
    `terdut-server is running and bootstrapped at ${pass.status.url ?? 'its Service'}`,
  );
}

export function desiredStatus(pass: Pass): TerdutServerStatus {
  const status: TerdutServerStatus = {
    // The generation the conditions were computed from, not that of the
    // object a write in this pass returned (the spec may have changed since).
    observedGeneration: pass.conditions.generation,
    conditions: pass.conditions.toList(conditionTypes),
  };
  if (pass.status.credentialsSecretRef) status.credentialsSecretRef = pass.status.credentialsSecretRef;
  if (pass.status.url) status.url = pass.status.url;
  if (pass.status.replicas !== undefined) status.replicas = pass.status.replicas;
  if (pass.status.selector !== undefined) status.selector = pass.status.selector;
  return status;
}

export async function writeStatus(deps: Pick<ReconcileDeps, 'kube'>, pass: Pass): Promise<void> {
  summarizeReady(pass);
  const desired = desiredStatus(pass);
  const live = pass.server.status ?? {};
  if (isDeepStrictEqual(JSON.parse(JSON.stringify(live)), desired)) return;
  // Merge patch: fields this pass dropped must be nulled explicitly.
  const patch: Record<string, unknown> = { ...desired };
  if (!desired.credentialsSecretRef && live.credentialsSecretRef) patch.credentialsSecretRef = null;
  if (!desired.url && live.url) patch.url = null;
  const { namespace, name } = pass.server.metadata;
  pass.server = await deps.kube.mergePatch<TerdutServer>(
    resourcePath(resources.terdutservers, namespace, name, 'status'),
    { status: patch },
  );
}
