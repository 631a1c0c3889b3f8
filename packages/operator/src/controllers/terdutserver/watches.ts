/**
 * Which changes wake which TerdutServer. Informers deliver objects; these
 * functions only turn them into queue keys (`namespace/name`):
 *
 * - TerdutServers: created, deleted, or changed in spec/metadata (a
 *   status-only update is our own write and needs no new pass);
 * - Deployments, HTTPRoutes and the token Secret: through their owner reference;
 * - operator-namespace Secrets (credentials, checkpoint): through owner labels,
 *   or by name for a checkpoint a person created by hand;
 * - database and OIDC client Secrets: every TerdutServer that names the
 *   Secret (one appearing ends a DatabaseReady=False or OIDCSecretMissing
 *   wait without polling).
 */
import { group, kind, type TerdutServer } from '../../api/v1alpha1/terdutserver.ts';
import type { InformerEventType } from '../../runtime/informer.ts';
import type { KubeObject } from '../../runtime/kube-client.ts';
import { databaseSecretOf } from './database.ts';
import { checkpointSecretName, credentialsSecretName, ownerLabels } from './names.ts';

const keyOf = (namespace: string, name: string): string => `${namespace}/${name}`;

/** Keys for a TerdutServer event; status-only updates are skipped. */
export function keysForTerdutServer(
  type: InformerEventType,
  server: TerdutServer,
  previous?: TerdutServer,
): string[] {
  const key = keyOf(server.metadata.namespace, server.metadata.name);
  if (type !== 'updated' || !previous) return [key];
  const changed =
    previous.metadata.generation !== server.metadata.generation ||
    previous.metadata.deletionTimestamp !== server.metadata.deletionTimestamp ||
    JSON.stringify(previous.metadata.finalizers ?? []) !== JSON.stringify(server.metadata.finalizers ?? []);
  return changed ? [key] : [];
}

/** Keys of the TerdutServers that own `object` (same namespace by definition). */
export function keysForOwned(object: KubeObject): string[] {
  return (object.metadata.ownerReferences ?? [])
    .filter((ref) => ref.kind === kind && ref.apiVersion.startsWith(`${group}/`))
    .map((ref) => keyOf(object.metadata.namespace ?? '', ref.name));
}

/** Keys woken by a Secret (metadata only). `servers` is the TerdutServer cache. */
export function keysForSecret(
  secret: KubeObject,
  operatorNamespace: string,
  servers: TerdutServer[],
): string[] {
  const keys = new Set(keysForOwned(secret));
  const namespace = secret.metadata.namespace ?? '';
  const labels = secret.metadata.labels ?? {};
  if (namespace === operatorNamespace) {
    const ownerNamespace = labels[ownerLabels.namespace];
    const ownerName = labels[ownerLabels.name];
    if (ownerNamespace && ownerName) keys.add(keyOf(ownerNamespace, ownerName));
  }
  for (const server of servers) {
    const serverNamespace = server.metadata.namespace;
    if (
      namespace === operatorNamespace &&
      (secret.metadata.name === checkpointSecretName(server) ||
        secret.metadata.name === credentialsSecretName(server))
    )
      keys.add(keyOf(serverNamespace, server.metadata.name));
    if (namespace === serverNamespace) {
      if (server.spec.oidc?.clientSecretRef?.name === secret.metadata.name)
        keys.add(keyOf(serverNamespace, server.metadata.name));
      try {
        if (databaseSecretOf(server).name === secret.metadata.name)
          keys.add(keyOf(serverNamespace, server.metadata.name));
      } catch {
        // A spec without a database source (refused by the CRD): nothing to wake.
      }
    }
  }
  return [...keys];
}
