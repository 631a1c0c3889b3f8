/**
 * Deletion (the finalizer): revoke the operator's service-account key on the
 * server while it still runs (garbage collection removes the Deployment only
 * after the finalizer is gone), delete the operator-namespace Secrets, then
 * remove the finalizer. Revocation is best effort with a bounded wait: an
 * unreachable server must not block deletion forever. The database is never
 * touched.
 */
import { resourcePath, resources } from '../../runtime/kube-client.ts';
import type { TerdutServer } from '../../api/v1alpha1/terdutserver.ts';
import type { ReconcileDeps } from './context.ts';
import { readCredentials } from './credentials.ts';
import { checkpointSecretName, credentialsSecretName, finalizerName } from './names.ts';
import { serverBaseUrl } from './bootstrap.ts';

export async function finalizeTerdutServer(
  deps: Pick<
    ReconcileDeps,
    'kube' | 'operatorNamespace' | 'serverClient' | 'resolveServerUrl' | 'events' | 'failpoint' | 'log'
  >,
  server: TerdutServer,
): Promise<void> {
  if (!server.metadata.finalizers?.includes(finalizerName)) return;
  const name = server.status?.credentialsSecretRef?.name ?? credentialsSecretName(server);
  const credentials = await readCredentials(deps, server, name);
  if (credentials?.serviceAccountId !== undefined && credentials.keyId !== undefined) {
    const baseUrl = serverBaseUrl(deps, server);
    try {
      await deps
        .serverClient(baseUrl, credentials.apiKey)
        .serviceAccounts.revokeKey(credentials.serviceAccountId, credentials.keyId);
      deps.failpoint('key-revoked');
      await deps.events.record(
        server,
        'Normal',
        'KeyRevoked',
        `revoked the operator's service-account key on ${baseUrl}`,
      );
    } catch (error) {
      await deps.events.record(
        server,
        'Warning',
        'KeyRevocationFailed',
        `could not revoke the operator's service-account key on ${baseUrl} (${(error as Error).message}); if the server keeps running, delete service account terdut-operator's keys in its UI or API`,
      );
    }
  }
  for (const secret of new Set([name, credentialsSecretName(server), checkpointSecretName(server)]))
    await deps.kube.delete(resourcePath(resources.secrets, deps.operatorNamespace, secret));
  deps.failpoint('secrets-deleted');
  await deps.kube.mergePatch(
    resourcePath(resources.terdutservers, server.metadata.namespace, server.metadata.name),
    {
      metadata: {
        finalizers: server.metadata.finalizers.filter((f) => f !== finalizerName),
        resourceVersion: server.metadata.resourceVersion,
      },
    },
  );
}
