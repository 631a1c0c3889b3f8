/**
 * Step 2: the bootstrap-token Secret in the TerdutServer's namespace, owned by
 * it, holding 32 random bytes (hex). Created once and never overwritten by
 * this step: the running server trusts exactly this value. It is rotated
 * (here, on the bootstrap step's request) only when the server refuses it:
 * rotate once, mark when, wait for the pod to read the file, and give up with
 * BootstrapStateLost after the pickup timeout.
 */
import { randomBytes } from 'node:crypto';
import { isAlreadyExists, resourcePath, resources } from '../../runtime/kube-client.ts';
import {
  decode,
  encode,
  stop,
  type Pass,
  type ReconcileDeps,
  type Secret,
  type StepResult,
} from './context.ts';
import type { Failpoint } from './failpoint.ts';
import {
  commonLabels,
  ownerReference,
  tokenRotatedAtAnnotation,
  tokenSecretKey,
  tokenSecretName,
} from './names.ts';
import type { TerdutServer } from '../../api/v1alpha1/terdutserver.ts';

export const newBootstrapToken = (): string => randomBytes(32).toString('hex');

export function tokenSecretPath(server: TerdutServer): string {
  return resourcePath(resources.secrets, server.metadata.namespace, tokenSecretName(server));
}

export async function reconcileTokenSecret(
  deps: Pick<ReconcileDeps, 'kube' | 'failpoint' | 'ownSecret'>,
  pass: Pass,
): Promise<StepResult> {
  const { server } = pass;
  // A miss goes straight to create: AlreadyExists (the cache lagging) ends
  // the pass and the next one sees the Secret.
  const existing = deps.ownSecret(server.metadata.namespace, tokenSecretName(server));
  if (existing?.data?.[tokenSecretKey]) return undefined;
  if (existing) {
    // Present but without a token (emptied by hand): it never held a token
    // the server could trust, so filling it is not an overwrite.
    await deps.kube.update(tokenSecretPath(server), {
      ...existing,
      data: { ...existing.data, [tokenSecretKey]: encode(newBootstrapToken()) },
    });
  } else {
    try {
      await deps.kube.create(resourcePath(resources.secrets, server.metadata.namespace), {
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'Opaque',
        metadata: {
          name: tokenSecretName(server),
          namespace: server.metadata.namespace,
          labels: commonLabels(server),
          ownerReferences: [ownerReference(server)],
        },
        data: { [tokenSecretKey]: encode(newBootstrapToken()) },
      });
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
      // Another pass (an earlier leader) created it first, or it lost the
      // labels the cache selects on (a person, a tool): use its token, and
      // label it again so the cache sees it, rather than creating it anew
      // on every pass.
      const live = await deps.kube.get<Secret>(tokenSecretPath(server));
      // Deleted meanwhile: the next pass creates it.
      if (!live) return stop(0);
      const labels = commonLabels(server);
      if (!live.data?.[tokenSecretKey]) {
        await deps.kube.update(tokenSecretPath(server), {
          ...live,
          metadata: { ...live.metadata, labels: { ...live.metadata.labels, ...labels } },
          data: { ...live.data, [tokenSecretKey]: encode(newBootstrapToken()) },
        });
        return undefined;
      }
      if (Object.entries(labels).some(([key, value]) => live.metadata.labels?.[key] !== value))
        await deps.kube.mergePatch(tokenSecretPath(server), {
          metadata: {
            labels,
            ...(live.metadata.ownerReferences?.length ? {} : { ownerReferences: [ownerReference(server)] }),
          },
        });
      return undefined;
    }
  }
  deps.failpoint('token-secret');
  return undefined;
}

/** The current token, read from the API server (not a cache): rotation must be seen at once. */
export async function readBootstrapToken(
  deps: Pick<ReconcileDeps, 'kube'>,
  server: TerdutServer,
): Promise<{ token: string; secret: Secret } | undefined> {
  const secret = await deps.kube.get<Secret>(tokenSecretPath(server));
  const token = decode(secret?.data?.[tokenSecretKey]);
  return secret && token ? { token, secret } : undefined;
}

/**
 * How soon to look again while waiting for a pod to read a rotated token:
 * the server allows 10 bootstrap attempts a minute per address.
 */
export const tokenPickupPollMs = 6_500;

/** Where a refused token stands: not rotated yet, rotated and waiting, or waited long enough. */
export function tokenRotationState(
  secret: Secret,
  now: Date,
  pickupTimeoutMs: number,
): { state: 'none' | 'waiting' | 'expired'; rotatedAt?: string; waitedMs?: number } {
  const rotatedAt = secret.metadata.annotations?.[tokenRotatedAtAnnotation];
  if (!rotatedAt) return { state: 'none' };
  const waitedMs = now.getTime() - Date.parse(rotatedAt);
  return { state: waitedMs < pickupTimeoutMs ? 'waiting' : 'expired', rotatedAt, waitedMs };
}

/**
 * Writes a new token and marks when. The update carries the Secret's
 * resourceVersion: if it changed since the token was read, the write fails
 * (retried) instead of overwriting a newer rotation.
 */
export async function rotateBootstrapToken(
  deps: Pick<ReconcileDeps, 'kube' | 'now'>,
  server: TerdutServer,
  secret: Secret,
): Promise<void> {
  await deps.kube.update(tokenSecretPath(server), {
    ...secret,
    metadata: {
      ...secret.metadata,
      annotations: { ...secret.metadata.annotations, [tokenRotatedAtAnnotation]: deps.now().toISOString() },
    },
    data: { ...secret.data, [tokenSecretKey]: encode(newBootstrapToken()) },
  });
}

/** Once the server accepted the token, the rotation mark goes (a later refusal may rotate again). */
export async function clearRotationMark(
  deps: Pick<ReconcileDeps, 'kube'> & { failpoint: Failpoint },
  secret: Secret,
): Promise<void> {
  if (!secret.metadata.annotations?.[tokenRotatedAtAnnotation]) return;
  await deps.kube.mergePatch(
    resourcePath(resources.secrets, secret.metadata.namespace, secret.metadata.name),
    { metadata: { annotations: { [tokenRotatedAtAnnotation]: null } } },
  );
  deps.failpoint('token-rotation-mark-cleared');
}
