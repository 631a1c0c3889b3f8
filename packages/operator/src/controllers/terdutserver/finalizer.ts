/**
 * The finalizer: step 1 of every pass puts it on before anything is created,
 * so nothing the operator makes outside garbage collection's reach
 * (operator-namespace Secrets, keys on the server) can outlive the
 * TerdutServer; on deletion `finalizeTerdutServer` takes it off again.
 *
 * Deletion applies the credential rule to the end: every key of the
 * operator's identities on the server is revoked, with whichever credential
 * still works — the recorded service-account key, else the checkpointed
 * admin key, else a key recovered with the bootstrap token (the Deployment
 * and the token Secret are garbage-collected only after the finalizer goes,
 * so the server still runs). Only then are the operator-namespace Secrets
 * deleted. When nothing works (server unreachable, every credential
 * refused), a KeyRevocationFailed event and condition say what may remain
 * and how to remove it; the operator retries until `finalizeTimeoutMs` after
 * the deletion, then lets the deletion finish. The database is never touched.
 */
import { TerdutApiError, type TerdutClient } from '@terdut/client';
import { resourcePath, resources } from '../../runtime/kube-client.ts';
import { conditionTypes, type TerdutServer } from '../../api/v1alpha1/terdutserver.ts';
import { ConditionSet } from './conditions.ts';
import type { Deployment, Pass, ReconcileDeps, StepResult } from './context.ts';
import { readCheckpoint } from './checkpoint.ts';
import { readCredentials } from './credentials.ts';
import { revokeOperatorKeys, type SweepResult } from './key-sweep.ts';
import { recoverAdmin } from './server-exchange.ts';
import { serverBaseUrl } from './server-url.ts';
import { readBootstrapToken } from './token-secret.ts';
import {
  checkpointSecretName,
  credentialsSecretName,
  finalizerName,
  operatorAdmin,
  serviceAccountName,
  workloadName,
} from './names.ts';

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

type FinalizeDeps = Pick<
  ReconcileDeps,
  | 'kube'
  | 'operatorNamespace'
  | 'serverClient'
  | 'resolveServerUrl'
  | 'events'
  | 'failpoint'
  | 'log'
  | 'keyVerifier'
  | 'ownSecret'
  | 'cachedSecret'
  | 'finalizeTimeoutMs'
  | 'now'
>;

/** Answers a requeue while revocation is retried; undefined once the finalizer is gone. */
export async function finalizeTerdutServer(
  deps: FinalizeDeps,
  server: TerdutServer,
): Promise<{ requeueAfterMs: number } | undefined> {
  if (!server.metadata.finalizers?.includes(finalizerName)) return undefined;
  deps.keyVerifier.forget(server);
  const baseUrl = serverBaseUrl(deps, server);
  const outcome = await revokeEverything(deps, server, baseUrl);
  if ('failed' in outcome) {
    const deletedAt = Date.parse(server.metadata.deletionTimestamp ?? '') || deps.now().getTime();
    // Retrying helps only while a server may still answer. Once its
    // Deployment is gone or going (the namespace being deleted, a
    // foreground deletion that removes dependents first), nothing brings
    // it back: waiting the whole timeout would only hold up the deletion.
    const serverGone = await workloadGone(deps, server);
    const giveUp = serverGone || deps.now().getTime() - deletedAt >= deps.finalizeTimeoutMs;
    const message =
      `could not revoke the operator's keys on terdut-server at ${baseUrl} (${outcome.failed}); ` +
      `keys of user ${operatorAdmin.username} and of service account ${serviceAccountName} may remain valid in its database` +
      (outcome.known.length > 0 ? `, among them ${outcome.known.join(' and ')}. ` : '. ') +
      `To remove them: as an admin of that server (or with a key from kubectl -n ${server.metadata.namespace} exec deploy/${workloadName(server)} -- terdut-server admin recover --username <you>), ` +
      `delete every API key of user ${operatorAdmin.username} (DELETE /api/users/<id>/api-keys/<key>) and of service account ${serviceAccountName} (DELETE /api/service-accounts/<id>/keys/<key>)` +
      (serverGone
        ? `. Deployment ${server.metadata.namespace}/${workloadName(server)} is gone, so no server is left to ask: the operator let the deletion finish.`
        : giveUp
          ? `. The operator gave up after ${Math.round(deps.finalizeTimeoutMs / 1000)} s and let the deletion finish.`
          : `. The operator retries until ${Math.round(deps.finalizeTimeoutMs / 1000)} s after the deletion.`);
    const changed = await setRevocationCondition(deps, server, message);
    if (changed || giveUp) await deps.events.record(server, 'Warning', 'KeyRevocationFailed', message);
    if (!giveUp) return { requeueAfterMs: 10_000 };
  } else if (outcome.with !== 'nothing') {
    await deps.events.record(
      server,
      'Normal',
      'KeyRevoked',
      `revoked every key of the operator's identities on terdut-server at ${baseUrl} (with the ${outcome.with}): ${outcome.swept.adminKeys} admin key(s) of user ${operatorAdmin.username}, ${outcome.swept.serviceAccountKeys} key(s) of service account ${serviceAccountName}`,
    );
  }
  for (const secret of new Set([
    server.status?.credentialsSecretRef?.name ?? credentialsSecretName(server),
    credentialsSecretName(server),
    checkpointSecretName(server),
  ]))
    await deps.kube.delete(resourcePath(resources.secrets, deps.operatorNamespace, secret));
  deps.failpoint('finalizer-secrets-deleted');
  await deps.kube.mergePatch(
    resourcePath(resources.terdutservers, server.metadata.namespace, server.metadata.name),
    {
      metadata: {
        finalizers: server.metadata.finalizers.filter((f) => f !== finalizerName),
        resourceVersion: server.metadata.resourceVersion,
      },
    },
  );
  return undefined;
}

/** The server's Deployment no longer exists, or is being deleted. */
async function workloadGone(deps: Pick<ReconcileDeps, 'kube'>, server: TerdutServer): Promise<boolean> {
  const deployment = await deps.kube.get<Deployment>(
    resourcePath(resources.deployments, server.metadata.namespace, workloadName(server)),
  );
  return deployment === undefined || deployment.metadata.deletionTimestamp !== undefined;
}

type Outcome =
  | { with: 'credentials' | 'checkpoint' | 'recovered admin key'; swept: SweepResult }
  | { with: 'nothing' }
  | { failed: string; known: string[] };

const refused = (error: unknown): boolean =>
  error instanceof TerdutApiError && (error.status === 401 || error.status === 403);

/** Revokes every key of the operator's identities with the first credential that works. */
async function revokeEverything(deps: FinalizeDeps, server: TerdutServer, baseUrl: string): Promise<Outcome> {
  const failpoint = (step: string) => deps.failpoint(`finalizer-${step}`);
  const sweep = (client: TerdutClient, self: { kind: 'admin' | 'service-account'; keyId?: number }) =>
    revokeOperatorKeys(client, {
      self: self.keyId === undefined ? undefined : { kind: self.kind, keyId: self.keyId },
      failpoint,
    });
  const reasons: string[] = [];
  const known: string[] = [];
  const failed = (why: string[]): Outcome => ({ failed: why.join('; '), known });
  try {
    const credentials = await readCredentials(deps, server, server.status?.credentialsSecretRef?.name, {
      expected: true,
    });
    if (credentials) {
      if (credentials.keyId !== undefined)
        known.push(`service-account key ${credentials.keyId} (the recorded one)`);
      try {
        const swept = await sweep(deps.serverClient(baseUrl, credentials.apiKey), {
          kind: 'service-account',
          keyId: credentials.keyId,
        });
        return { with: 'credentials', swept };
      } catch (error) {
        if (!refused(error)) throw error;
        reasons.push('the recorded service-account key was refused');
      }
    }
    const checkpoint = await readCheckpoint(deps, server);
    if (checkpoint) {
      if (checkpoint.adminKeyId !== undefined)
        known.push(`admin key ${checkpoint.adminKeyId} (the checkpointed one)`);
      try {
        const swept = await sweep(deps.serverClient(baseUrl, checkpoint.adminKey), {
          kind: 'admin',
          keyId: checkpoint.adminKeyId,
        });
        return { with: 'checkpoint', swept };
      } catch (error) {
        if (!refused(error)) throw error;
        reasons.push('the checkpointed admin key was refused');
      }
    }
    // Neither Secret holds a working key. If the server never became
    // available, no exchange can have happened and nothing can remain.
    const everAvailable = server.status?.conditions?.some(
      (c) => c.type === 'Available' && c.status === 'True',
    );
    if (!everAvailable && reasons.length === 0) return { with: 'nothing' };
    const token = await readBootstrapToken(deps, server);
    if (!token) return failed([...reasons, 'the bootstrap-token Secret is gone']);
    let answer;
    try {
      answer = await recoverAdmin(deps.serverClient(baseUrl), token.token, failpoint);
    } catch (error) {
      // Never bootstrapped: no key of the operator can exist.
      if (error instanceof TerdutApiError && error.status === 409) return { with: 'nothing' };
      throw error;
    }
    if (!('admin' in answer))
      return failed([...reasons, 'by' in answer ? `${answer.by} answered 401` : 'recovery was refused']);
    const swept = await sweep(deps.serverClient(baseUrl, answer.admin.adminKey), {
      kind: 'admin',
      keyId: answer.admin.adminKeyId,
    });
    return { with: 'recovered admin key', swept };
  } catch (error) {
    return failed([...reasons, (error as Error).message]);
  }
}

/** Ready=False / KeyRevocationFailed on the object being deleted; true when it changed. */
async function setRevocationCondition(
  deps: FinalizeDeps,
  server: TerdutServer,
  message: string,
): Promise<boolean> {
  const conditions = new ConditionSet(server.status?.conditions, server.metadata.generation, deps.now);
  conditions.set('Ready', 'False', 'KeyRevocationFailed', message);
  if (!conditions.changed('Ready')) return false;
  await deps.kube.mergePatch(
    resourcePath(resources.terdutservers, server.metadata.namespace, server.metadata.name, 'status'),
    // Setting deletionTimestamp raised metadata.generation: the condition is
    // about this generation, and observedGeneration must say so, or readers
    // that compare the two (Argo CD, kubectl wait) take it for stale.
    { status: { observedGeneration: conditions.generation, conditions: conditions.toList(conditionTypes) } },
  );
  return true;
}
