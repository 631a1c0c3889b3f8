/**
 * Names and labels of everything the operator creates for a TerdutServer.
 * Objects in the operator's namespace cannot carry an owner reference to a
 * TerdutServer elsewhere (cross-namespace owners are not allowed), so they
 * carry owner labels instead, which the finalizer and the watches use.
 */
import { createHash } from 'node:crypto';
import { apiVersion, kind, type TerdutServer } from '../../api/v1alpha1/terdutserver.ts';
import type { OwnerReference } from '../../runtime/kube-client.ts';

export const finalizerName = 'terdut.ryuvia.com/finalizer';
export const fieldManager = 'terdut-operator';
export const serverPort = 8080;
/** The admin user the operator bootstraps (and recovers) on each server. */
export const operatorAdmin = {
  username: 'terdut-operator',
  email: 'terdut-operator@operator.terdut.invalid',
};
/** The instance service account whose key the operator keeps. */
export const serviceAccountName = 'terdut-operator';

export const ownerLabels = {
  namespace: 'terdut.ryuvia.com/owner-namespace',
  name: 'terdut.ryuvia.com/owner-name',
  uid: 'terdut.ryuvia.com/owner-uid',
} as const;
export const secretRoleLabel = 'terdut.ryuvia.com/secret-role';
export const managedByLabel = 'app.kubernetes.io/managed-by';
export const managedByValue = 'terdut-operator';

/** On the token Secret: when the operator rotated the token, until the server accepts it. */
export const tokenRotatedAtAnnotation = 'terdut.ryuvia.com/token-rotated-at';
/** On the credentials Secret: which service account and key it holds (the sweep keeps that key). */
export const serviceAccountIdAnnotation = 'terdut.ryuvia.com/service-account-id';
export const keyIdAnnotation = 'terdut.ryuvia.com/api-key-id';
export const serverUrlAnnotation = 'terdut.ryuvia.com/server-url';

/** Labels on the pods and the Service selector. */
export function selectorLabels(server: TerdutServer): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'terdut-server',
    'app.kubernetes.io/instance': server.metadata.name,
  };
}

export function commonLabels(server: TerdutServer): Record<string, string> {
  return { ...selectorLabels(server), [managedByLabel]: managedByValue };
}

/** Labels naming the TerdutServer an operator-namespace object belongs to. */
export function ownerLabelsOf(server: TerdutServer): Record<string, string> {
  return {
    [ownerLabels.namespace]: server.metadata.namespace,
    [ownerLabels.name]: server.metadata.name,
    [ownerLabels.uid]: server.metadata.uid,
    [managedByLabel]: managedByValue,
  };
}

export function ownerReference(server: TerdutServer): OwnerReference {
  return {
    apiVersion,
    kind,
    name: server.metadata.name,
    uid: server.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

export const workloadName = (server: TerdutServer): string => server.metadata.name;
export const tokenSecretName = (server: TerdutServer): string => `${server.metadata.name}-bootstrap-token`;
export const tokenSecretKey = 'token';
export const tokenMountPath = '/var/run/terdut/bootstrap';
export const oidcSecretMountPath = '/var/run/terdut/oidc';

/**
 * `terdut-<namespace>-<name>-<hash>-<suffix>` in the operator namespace: readable, unique (the
 * hash of namespace/name keeps `a-b/c` and `a/b-c` apart) and within the 253-character limit.
 */
function operatorSecretName(server: TerdutServer, suffix: string): string {
  const { namespace, name } = server.metadata;
  const hash = createHash('sha256').update(`${namespace}/${name}`).digest('hex').slice(0, 8);
  const readable = `${namespace}-${name}`.slice(0, 200).replace(/[.-]+$/, '');
  return `terdut-${readable}-${hash}-${suffix}`;
}

export const checkpointSecretName = (server: TerdutServer): string =>
  operatorSecretName(server, 'checkpoint');
export const credentialsSecretName = (server: TerdutServer): string =>
  operatorSecretName(server, 'credentials');
export const credentialsSecretKey = 'api-key';

/** The in-cluster URL of the server's Service. */
export const serviceUrl = (server: TerdutServer): string =>
  `http://${workloadName(server)}.${server.metadata.namespace}.svc:${serverPort}`;
