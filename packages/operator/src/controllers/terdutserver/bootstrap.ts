/**
 * Step 5: the bootstrap, exactly as bootstrap-protocol.md (operator rules
 * 2–5) says. Every call is ordered so that a crash right after it leaves a
 * state the next pass continues from:
 *
 *   credentials recorded in status ............ done (remove a leftover checkpoint)
 *   credentials Secret exists, key works ...... record it (crash before the status write)
 *   checkpoint exists ......................... use its admin key (crash after bootstrap)
 *   else POST /api/bootstrap ─ 403 ─> POST /api/bootstrap/recover
 *        └─ 401 (from either): rotate the token, wait for the pod to read it;
 *           still refused after the pickup timeout: BootstrapStateLost
 *   checkpoint the admin key BEFORE using it
 *   POST /api/service-accounts ─ 409 ─> adopt it by name, revoke its keys that
 *        no Secret records (a crash before the credentials Secret), mint a fresh key
 *   credentials Secret -> status.credentialsSecretRef -> revoke the admin key
 *   -> delete the checkpoint
 *
 * A second admin is never created: bootstrap creates the operator's admin
 * once, and recover re-uses that same username.
 */
import { TerdutApiError, isTransientError, type BootstrapResult, type TerdutClient } from '@terdut/client';
import { resourcePath, resources } from '../../runtime/kube-client.ts';
import type { TerdutServer } from '../../api/v1alpha1/terdutserver.ts';
import { stop, type Pass, type ReconcileDeps, type Secret, type StepResult } from './context.ts';
import { deleteCheckpoint, readCheckpoint, writeCheckpoint, type Checkpoint } from './checkpoint.ts';
import { readCredentials, writeCredentials } from './credentials.ts';
import { revokeUnrecordedKeys } from './stale-keys.ts';
import {
  checkpointSecretName,
  credentialsSecretKey,
  credentialsSecretName,
  operatorAdmin,
  serviceAccountName,
  serviceUrl,
  tokenSecretKey,
  tokenSecretName,
  workloadName,
} from './names.ts';
import { newBootstrapToken, readBootstrapToken, tokenSecretPath } from './token-secret.ts';
import { encode } from './context.ts';

export const tokenRotatedAtAnnotation = 'terdut.ryuvia.com/token-rotated-at';
/**
 * How soon to look again while waiting for a pod to read a rotated token:
 * the server allows 10 bootstrap attempts a minute per address.
 */
const tokenPickupPollMs = 6_500;

type BootstrapDeps = Pick<
  ReconcileDeps,
  | 'kube'
  | 'operatorNamespace'
  | 'events'
  | 'resolveServerUrl'
  | 'serverClient'
  | 'failpoint'
  | 'tokenPickupTimeoutMs'
  | 'cachedSecret'
  | 'now'
  | 'log'
>;

const is = (error: unknown, status: number): boolean =>
  error instanceof TerdutApiError && error.status === status;

export function serverBaseUrl(deps: Pick<ReconcileDeps, 'resolveServerUrl'>, server: TerdutServer): string {
  return deps.resolveServerUrl(server.metadata.namespace, workloadName(server), serviceUrl(server));
}

export async function reconcileBootstrap(deps: BootstrapDeps, pass: Pass): Promise<StepResult> {
  const { server, conditions } = pass;
  const recorded = pass.status.credentialsSecretRef;
  if (recorded) {
    if (await readCredentials(deps, server, recorded.name)) {
      conditions.set(
        'Bootstrapped',
        'True',
        'CredentialsRecorded',
        `the operator's service-account key is in Secret ${deps.operatorNamespace}/${recorded.name}`,
      );
      // A crash between the status write and the checkpoint deletion leaves one behind.
      await deleteCheckpoint(deps, server);
      return undefined;
    }
    // Someone deleted the credentials: bootstrap again (which recovers).
    await deps.events.record(
      server,
      'Warning',
      'CredentialsMissing',
      `Secret ${deps.operatorNamespace}/${recorded.name} is gone; recovering a new key from the server`,
    );
    pass.status.credentialsSecretRef = undefined;
  }

  if (!conditions.isTrue('Available')) {
    conditions.set(
      'Bootstrapped',
      'False',
      'WaitingForServer',
      'the bootstrap runs once a replica of the server is available',
    );
    return undefined;
  }

  const baseUrl = serverBaseUrl(deps, server);
  try {
    return await bootstrapOnce(deps, pass, baseUrl);
  } catch (error) {
    if (error instanceof TerdutApiError && error.status === 429) {
      // The bootstrap endpoints are rate limited per address; come back when
      // the server says, rather than backing off further than needed.
      const seconds = error.retryAfterSeconds ?? 10;
      conditions.set(
        'Bootstrapped',
        'False',
        'RateLimited',
        `terdut-server at ${baseUrl} rate-limited the bootstrap; retrying in ${seconds} s`,
      );
      return stop(seconds * 1000);
    }
    if (isTransientError(error)) {
      conditions.set(
        'Bootstrapped',
        'False',
        'ServerUnreachable',
        `terdut-server at ${baseUrl} did not answer the bootstrap (${(error as Error).message}); retrying with back-off`,
      );
    } else {
      conditions.set(
        'Bootstrapped',
        'False',
        'BootstrapFailed',
        `${(error as Error).message}; retrying with back-off`,
      );
    }
    throw error;
  }
}

async function bootstrapOnce(deps: BootstrapDeps, pass: Pass, baseUrl: string): Promise<StepResult> {
  const { server, conditions } = pass;
  const namespace = deps.operatorNamespace;

  // A credentials Secret written by a pass that crashed before its status write.
  const existing = await readCredentials(deps, server);
  if (existing && (await keyWorks(deps.serverClient(baseUrl, existing.apiKey)))) {
    await recordCredentials(deps, pass, 'CredentialsAdopted');
    return undefined;
  }

  let checkpoint = await readCheckpoint(deps, server);
  if (!checkpoint) {
    const obtained = await obtainAdminKey(deps, pass, baseUrl);
    if ('stop' in obtained) return obtained;
    checkpoint = obtained;
    await writeCheckpoint(deps, server, checkpoint);
    deps.failpoint('checkpoint');
  }

  const admin = deps.serverClient(baseUrl, checkpoint.adminKey);
  let serviceAccount: { id: number };
  let key: { id: number; key: string };
  try {
    const created = await admin.serviceAccounts.create(serviceAccountName, 'instance');
    serviceAccount = created.service_account;
    key = created.key;
  } catch (error) {
    if (is(error, 401) || is(error, 403)) {
      // The checkpointed admin key no longer works (revoked, or from another
      // database): drop it and obtain a fresh one on the next pass.
      await deleteCheckpoint(deps, server, { force: true });
      conditions.set(
        'Bootstrapped',
        'False',
        'CheckpointRejected',
        `the checkpointed admin key in Secret ${namespace}/${checkpointSecretName(server)} was refused; obtaining a new one`,
      );
      return stop(0);
    }
    if (!is(error, 409)) throw error;
    // Created by an earlier pass whose answer was lost: adopt it.
    const found = await admin.serviceAccounts.findByName(serviceAccountName);
    if (!found)
      throw new Error(`service account ${serviceAccountName} exists (409) but cannot be found by name`, {
        cause: error,
      });
    serviceAccount = found;
    // Revoke before minting: a key minted by a crashed pass is valid and held
    // by nobody. Revoking first means a failing revocation cannot leave a
    // growing pile of fresh keys behind; a crash after the mint leaves one
    // unrecorded key, which the next adoption revokes in turn.
    const recordedKeyId = existing?.serviceAccountId === found.id ? existing.keyId : undefined;
    const revoked = await revokeUnrecordedKeys(
      admin,
      found.id,
      new Set(recordedKeyId === undefined ? [] : [recordedKeyId]),
    );
    deps.log.info('adopted the existing service account; revoked keys no Secret recorded', {
      server: `${server.metadata.namespace}/${server.metadata.name}`,
      serviceAccount: serviceAccountName,
      revoked,
    });
    if (revoked > 0) {
      await deps.events.record(
        server,
        'Normal',
        'StaleKeysRevoked',
        `adopted service account ${serviceAccountName} on terdut-server at ${baseUrl} and revoked ${revoked} key(s) of it that no Secret recorded (minted by an interrupted bootstrap)`,
      );
    }
    key = await admin.serviceAccounts.createKey(found.id, `terdut-operator ${deps.now().toISOString()}`);
  }
  deps.failpoint('service-account');

  await writeCredentials(
    deps,
    server,
    { apiKey: key.key, serviceAccountId: serviceAccount.id, keyId: key.id },
    baseUrl,
  );
  deps.failpoint('credentials');

  await recordCredentials(deps, pass, undefined);

  // The admin key was only a means to mint the service account; nobody keeps
  // it, so revoke it rather than leave a live admin credential behind.
  if (checkpoint.adminUserId !== undefined && checkpoint.adminKeyId !== undefined) {
    try {
      await admin.users.deleteApiKey(checkpoint.adminUserId, checkpoint.adminKeyId);
      deps.failpoint('admin-key-revoked');
    } catch (error) {
      deps.log.warn('could not revoke the bootstrap admin key; it stays valid on the server', {
        server: `${server.metadata.namespace}/${server.metadata.name}`,
        error: (error as Error).message,
      });
    }
  }
  await deleteCheckpoint(deps, server, { force: true });
  deps.failpoint('checkpoint-deleted');

  const reason =
    checkpoint.source === 'recover'
      ? 'BootstrapRecovered'
      : checkpoint.source === 'bootstrap'
        ? 'BootstrapSucceeded'
        : 'BootstrapResumed';
  const note =
    checkpoint.source === 'recover'
      ? `terdut-server at ${baseUrl} was already bootstrapped (an existing database); the operator recovered admin access with its bootstrap token and minted service account ${serviceAccountName}`
      : checkpoint.source === 'bootstrap'
        ? `bootstrapped terdut-server at ${baseUrl}; service account ${serviceAccountName} key stored in Secret ${namespace}/${credentialsSecretName(server)}`
        : `continued the bootstrap from the admin key in Secret ${namespace}/${checkpointSecretName(server)}`;
  await deps.events.record(server, 'Normal', reason, note);
  return undefined;
}

/** Whether an API key authenticates (a 401 says no; other errors propagate). */
async function keyWorks(client: TerdutClient): Promise<boolean> {
  try {
    await client.users.me();
    return true;
  } catch (error) {
    if (is(error, 401) || is(error, 403)) return false;
    throw error;
  }
}

/** Records the credentials Secret in status now: it must be durable before the checkpoint goes. */
async function recordCredentials(
  deps: BootstrapDeps,
  pass: Pass,
  adoptedReason: string | undefined,
): Promise<void> {
  const { server } = pass;
  const ref = { name: credentialsSecretName(server), key: credentialsSecretKey };
  pass.status.credentialsSecretRef = ref;
  pass.server = await deps.kube.mergePatch<TerdutServer>(
    resourcePath(resources.terdutservers, server.metadata.namespace, server.metadata.name, 'status'),
    { status: { credentialsSecretRef: ref } },
  );
  deps.failpoint('status');
  pass.conditions.set(
    'Bootstrapped',
    'True',
    adoptedReason ?? 'CredentialsRecorded',
    `the operator's service-account key is in Secret ${deps.operatorNamespace}/${ref.name}`,
  );
  if (adoptedReason) await deleteCheckpoint(deps, server, { force: true });
}

/** What is checkpointed of a bootstrap or recover answer: the admin key and what revokes it later. */
function checkpointOf(result: BootstrapResult, source: Checkpoint['source']): Checkpoint {
  return { adminKey: result.api_key.key, adminUserId: result.user.id, adminKeyId: result.api_key.id, source };
}

/**
 * POST /api/bootstrap, or /recover when the server is already bootstrapped.
 * A 401 from either means the pod does not run with the token the operator
 * holds: rotate it (once), wait for the pod to read it, and give up with
 * BootstrapStateLost only after the pickup timeout.
 */
async function obtainAdminKey(
  deps: BootstrapDeps,
  pass: Pass,
  baseUrl: string,
): Promise<Checkpoint | { stop: true; requeueAfterMs?: number }> {
  const { server, conditions } = pass;
  const token = await readBootstrapToken(deps, server);
  if (!token) {
    conditions.set(
      'Bootstrapped',
      'False',
      'TokenSecretMissing',
      `Secret ${server.metadata.namespace}/${tokenSecretName(server)} is missing; recreating it`,
    );
    return stop(0);
  }
  const client = deps.serverClient(baseUrl);
  let source: 'bootstrap' | 'recover' = 'bootstrap';
  let refusedBy = 'POST /api/bootstrap';
  try {
    try {
      const result = await client.bootstrap.bootstrap(token.token, operatorAdmin);
      deps.failpoint('bootstrap');
      await clearRotationMark(deps, token.secret);
      return checkpointOf(result, source);
    } catch (error) {
      if (!is(error, 403)) throw error;
    }
    source = 'recover';
    refusedBy = 'POST /api/bootstrap/recover';
    const result = await client.bootstrap.recover(token.token, operatorAdmin);
    deps.failpoint('recover');
    await clearRotationMark(deps, token.secret);
    return checkpointOf(result, source);
  } catch (error) {
    if (!is(error, 401)) throw error;
    return onTokenRefused(deps, pass, token.secret, baseUrl, refusedBy);
  }
}

async function clearRotationMark(deps: BootstrapDeps, secret: Secret): Promise<void> {
  if (!secret.metadata.annotations?.[tokenRotatedAtAnnotation]) return;
  await deps.kube.mergePatch(
    resourcePath(resources.secrets, secret.metadata.namespace, secret.metadata.name),
    {
      metadata: { annotations: { [tokenRotatedAtAnnotation]: null } },
    },
  );
}

async function onTokenRefused(
  deps: BootstrapDeps,
  pass: Pass,
  secret: Secret,
  baseUrl: string,
  refusedBy: string,
): Promise<{ stop: true; requeueAfterMs?: number }> {
  const { server, conditions } = pass;
  const ns = server.metadata.namespace;
  const tokenSecret = `${ns}/${tokenSecretName(server)}`;
  const rotatedAt = secret.metadata.annotations?.[tokenRotatedAtAnnotation];
  if (!rotatedAt) {
    // The update carries the Secret's resourceVersion: if it changed since we
    // read the token, we retry instead of overwriting a newer rotation.
    await deps.kube.update(tokenSecretPath(server), {
      ...secret,
      metadata: {
        ...secret.metadata,
        annotations: { ...secret.metadata.annotations, [tokenRotatedAtAnnotation]: deps.now().toISOString() },
      },
      data: { ...secret.data, [tokenSecretKey]: encode(newBootstrapToken()) },
    });
    deps.failpoint('token-rotated');
    const message = `terdut-server at ${baseUrl} refused the operator's bootstrap token (${refusedBy} answered 401); the operator generated a new token in Secret ${tokenSecret} and waits for the pod to read it`;
    conditions.set('Bootstrapped', 'False', 'TokenRotated', message);
    await deps.events.record(server, 'Warning', 'TokenRotated', message);
    return stop(tokenPickupPollMs);
  }
  const waited = deps.now().getTime() - Date.parse(rotatedAt);
  if (waited < deps.tokenPickupTimeoutMs) {
    conditions.set(
      'Bootstrapped',
      'False',
      'WaitingForTokenPickup',
      `rotated the bootstrap token in Secret ${tokenSecret} at ${rotatedAt}; waiting up to ${Math.round(deps.tokenPickupTimeoutMs / 1000)} s for the pod to read it`,
    );
    return stop(tokenPickupPollMs);
  }
  const deployment = workloadName(server);
  const message =
    `terdut-server at ${baseUrl} still refuses the bootstrap token (${refusedBy} answered 401) ${Math.round(waited / 1000)} s after the operator rotated it, ` +
    `so the pod does not read Secret ${tokenSecret}. Next step: make sure nothing overrides TERDUT_BOOTSTRAP_TOKEN or TERDUT_BOOTSTRAP_TOKEN_FILE in the pod, ` +
    `then restart it (kubectl -n ${ns} rollout restart deployment/${deployment}); the operator retries when the Deployment changes. ` +
    `Or mint an admin key where the server runs (kubectl -n ${ns} exec deploy/${deployment} -- terdut-server admin recover --username ${operatorAdmin.username}) ` +
    `and store it as key admin-api-key in Secret ${deps.operatorNamespace}/${checkpointSecretName(server)}; the operator continues from it.`;
  conditions.set('Bootstrapped', 'False', 'BootstrapStateLost', message);
  if (conditions.changed('Bootstrapped'))
    await deps.events.record(server, 'Warning', 'BootstrapStateLost', message);
  // No requeue: retrying cannot help until the Deployment, the checkpoint or the TerdutServer changes.
  return stop();
}
