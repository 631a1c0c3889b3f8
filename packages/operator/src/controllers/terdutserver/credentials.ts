/**
 * The credentials Secret: the operator's long-lived service-account key for
 * one terdut-server, in the operator's namespace. Cross-namespace owner
 * references are not allowed, so owner labels (namespace, name, uid) tie it
 * to its TerdutServer; the uid tells a Secret of an earlier TerdutServer
 * with the same name from this one's.
 */
import { isAlreadyExists, resourcePath, resources } from '../../runtime/kube-client.ts';
import type { TerdutServer } from '../../api/v1alpha1/terdutserver.ts';
import { decode, encode, type ReconcileDeps, type Secret } from './context.ts';
import {
  credentialsSecretKey,
  credentialsSecretName,
  keyIdAnnotation,
  serverUrlAnnotation,
  serviceAccountIdAnnotation,
  ownerLabels,
  ownerLabelsOf,
  secretRoleLabel,
} from './names.ts';

export interface Credentials {
  apiKey: string;
  serviceAccountId?: number;
  keyId?: number;
}

const path = (deps: Pick<ReconcileDeps, 'operatorNamespace'>, name?: string) =>
  resourcePath(resources.secrets, deps.operatorNamespace, name);

/**
 * This TerdutServer's credentials (same uid), if the Secret exists and holds
 * a key: from the watch cache, or with `live` from the API server.
 */
export async function readCredentials(
  deps: Pick<ReconcileDeps, 'kube' | 'operatorNamespace' | 'ownSecret'>,
  server: TerdutServer,
  name = credentialsSecretName(server),
  options: { live?: boolean; expected?: boolean } = {},
): Promise<Credentials | undefined> {
  const cached = options.live ? undefined : deps.ownSecret(deps.operatorNamespace, name);
  // A miss is asked again only where a false absence would cost a
  // CredentialsMissing and a reissue (status records the Secret); elsewhere
  // it is believed: at worst a key is minted twice, and the sweep revokes one.
  const secret =
    cached ?? (options.live || options.expected ? await deps.kube.get<Secret>(path(deps, name)) : undefined);
  if (!secret || secret.metadata.labels?.[ownerLabels.uid] !== server.metadata.uid) return undefined;
  const apiKey = decode(secret.data?.[credentialsSecretKey]);
  if (!apiKey) return undefined;
  const number = (annotation: string): number | undefined => {
    const value = Number(secret.metadata.annotations?.[annotation]);
    return Number.isInteger(value) && value > 0 ? value : undefined;
  };
  return { apiKey, serviceAccountId: number(serviceAccountIdAnnotation), keyId: number(keyIdAnnotation) };
}

/** Creates or replaces the credentials Secret. */
export async function writeCredentials(
  deps: Pick<ReconcileDeps, 'kube' | 'operatorNamespace'>,
  server: TerdutServer,
  credentials: Required<Credentials>,
  serverUrl: string,
): Promise<void> {
  const name = credentialsSecretName(server);
  const object = {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: {
      name,
      namespace: deps.operatorNamespace,
      labels: { ...ownerLabelsOf(server), [secretRoleLabel]: 'credentials' },
      annotations: {
        [serviceAccountIdAnnotation]: String(credentials.serviceAccountId),
        [keyIdAnnotation]: String(credentials.keyId),
        [serverUrlAnnotation]: serverUrl,
      },
    },
    data: { [credentialsSecretKey]: encode(credentials.apiKey) },
  };
  try {
    await deps.kube.create(path(deps), object);
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
    const existing = await deps.kube.get<Secret>(path(deps, name));
    await deps.kube.update(path(deps, name), {
      ...object,
      metadata: { ...object.metadata, resourceVersion: existing?.metadata.resourceVersion },
    });
  }
}
