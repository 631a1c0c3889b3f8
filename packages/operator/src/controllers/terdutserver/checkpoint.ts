/**
 * The bootstrap checkpoint: a Secret in the operator's namespace holding the
 * admin API key a bootstrap (or recovery) returned, written BEFORE that key is
 * used for anything. A crash after the server minted the key but before the
 * credentials are recorded then resumes from the checkpoint instead of
 * needing a second bootstrap (which the server would refuse).
 *
 * Only `admin-api-key` is required, so a person can also put a key minted by
 * `terdut-server admin recover` here and the operator continues from it.
 */
import { isAlreadyExists, resourcePath, resources } from '../../runtime/kube-client.ts';
import type { TerdutServer } from '../../api/v1alpha1/terdutserver.ts';
import { decode, encode, type ReconcileDeps, type Secret } from './context.ts';
import { checkpointSecretName, ownerLabelsOf, secretRoleLabel } from './names.ts';

export interface Checkpoint {
  adminKey: string;
  adminUserId?: number;
  adminKeyId?: number;
  /** How the key was obtained: bootstrap, recover, or manual (a person stored it). */
  source: string;
}

const path = (deps: Pick<ReconcileDeps, 'operatorNamespace'>, server: TerdutServer, withName = true) =>
  resourcePath(
    resources.secrets,
    deps.operatorNamespace,
    withName ? checkpointSecretName(server) : undefined,
  );

/**
 * From the watch cache; one a person stored by hand (not labelled, so only
 * the metadata cache knows it) from the API server. A stale cache is safe:
 * a revoked key in it is refused and the checkpoint dropped, a missing one
 * makes the pass recover another admin key; the sweep revokes what is left.
 */
export async function readCheckpoint(
  deps: Pick<ReconcileDeps, 'kube' | 'operatorNamespace' | 'ownSecret' | 'cachedSecret'>,
  server: TerdutServer,
): Promise<Checkpoint | undefined> {
  const name = checkpointSecretName(server);
  const secret =
    deps.ownSecret(deps.operatorNamespace, name) ??
    (deps.cachedSecret(deps.operatorNamespace, name)
      ? await deps.kube.get<Secret>(path(deps, server))
      : undefined);
  const adminKey = decode(secret?.data?.['admin-api-key'])?.trim();
  if (!secret || !adminKey) return undefined;
  const number = (key: string): number | undefined => {
    const value = Number(decode(secret.data?.[key]));
    return Number.isInteger(value) && value > 0 ? value : undefined;
  };
  return {
    adminKey,
    adminUserId: number('admin-user-id'),
    adminKeyId: number('admin-key-id'),
    source: decode(secret.data?.source) ?? 'manual',
  };
}

/** Creates the checkpoint; if one exists (an earlier pass that crashed later on), replaces it. */
export async function writeCheckpoint(
  deps: Pick<ReconcileDeps, 'kube' | 'operatorNamespace'>,
  server: TerdutServer,
  checkpoint: Checkpoint,
): Promise<void> {
  const data: Record<string, string> = {
    'admin-api-key': encode(checkpoint.adminKey),
    source: encode(checkpoint.source),
  };
  if (checkpoint.adminUserId !== undefined) data['admin-user-id'] = encode(String(checkpoint.adminUserId));
  if (checkpoint.adminKeyId !== undefined) data['admin-key-id'] = encode(String(checkpoint.adminKeyId));
  const object = {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: {
      name: checkpointSecretName(server),
      namespace: deps.operatorNamespace,
      labels: { ...ownerLabelsOf(server), [secretRoleLabel]: 'bootstrap-checkpoint' },
    },
    data,
  };
  try {
    await deps.kube.create(path(deps, server, false), object);
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
    const existing = await deps.kube.get<Secret>(path(deps, server));
    await deps.kube.update(path(deps, server), {
      ...object,
      metadata: { ...object.metadata, resourceVersion: existing?.metadata.resourceVersion },
    });
  }
}

/** Deletes the checkpoint if the watch cache says it exists (no request otherwise). */
export async function deleteCheckpoint(
  deps: Pick<ReconcileDeps, 'kube' | 'operatorNamespace' | 'cachedSecret'>,
  server: TerdutServer,
  options: { force?: boolean } = {},
): Promise<void> {
  if (!options.force && !deps.cachedSecret(deps.operatorNamespace, checkpointSecretName(server))) return;
  await deps.kube.delete(path(deps, server));
}
