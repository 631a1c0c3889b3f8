/**
 * Step 2: the bootstrap-token Secret in the TerdutServer's namespace, owned by
 * it, holding 32 random bytes (hex). Created once and never overwritten here:
 * the running server trusts exactly this value. Only the bootstrap step
 * rotates it, and only when the server refuses it (see bootstrap.ts).
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
import { commonLabels, ownerReference, tokenSecretKey, tokenSecretName } from './names.ts';
import type { TerdutServer } from '../../api/v1alpha1/terdutserver.ts';

export const newBootstrapToken = (): string => randomBytes(32).toString('hex');

export function tokenSecretPath(server: TerdutServer): string {
  return resourcePath(resources.secrets, server.metadata.namespace, tokenSecretName(server));
}

export async function reconcileTokenSecret(
  deps: Pick<ReconcileDeps, 'kube' | 'failpoint'>,
  pass: Pass,
): Promise<StepResult> {
  const { server } = pass;
  const existing = await deps.kube.get<Secret>(tokenSecretPath(server));
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
      // Another pass (an earlier leader) created it first: use theirs.
      if (isAlreadyExists(error)) return stop(0);
      throw error;
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
