/**
 * Step 5: the bootstrap (bootstrap-protocol.md, operator rules). This file
 * only orchestrates: it gathers the facts (Secrets, status, the server's
 * answers), asks `nextBootstrapStep` (bootstrap-decision.ts, pure, with the
 * protocol's table test) what to do, does it, and asks again. The exchange
 * with the server is server-exchange.ts, minting and adoption adoption.ts,
 * token rotation token-secret.ts, and the one rule that keeps credentials
 * from being left behind key-sweep.ts.
 *
 * Every write is ordered so that a crash right after it leaves a state the
 * next pass continues from, and every path to Bootstrapped=True goes through
 * the sweep: a Ready server's only valid operator key is the recorded one.
 */
import { TerdutApiError, isTransientError, type TerdutClient } from '@terdut/client';
import { resourcePath, resources } from '../../runtime/kube-client.ts';
import type { TerdutServer } from '../../api/v1alpha1/terdutserver.ts';
import { stop, type Pass, type ReconcileDeps, type Secret, type StepResult } from './context.ts';
import { nextBootstrapStep, readyReason, type BootstrapFacts, type ReadyPath } from './bootstrap-decision.ts';
import { deleteCheckpoint, readCheckpoint, writeCheckpoint, type Checkpoint } from './checkpoint.ts';
import { readCredentials, writeCredentials, type Credentials } from './credentials.ts';
import { keyWorks, revokeOperatorKeys } from './key-sweep.ts';
import { mintServiceAccountKey } from './adoption.ts';
import { bootstrapServer, recoverAdmin, type ExchangeAnswer } from './server-exchange.ts';
import { serverBaseUrl } from './server-url.ts';
import { writeStatus } from './status.ts';
import {
  checkpointSecretName,
  credentialsSecretKey,
  credentialsSecretName,
  operatorAdmin,
  serviceAccountName,
  tokenSecretName,
  workloadName,
} from './names.ts';
import {
  clearRotationMark,
  readBootstrapToken,
  rotateBootstrapToken,
  tokenPickupPollMs,
  tokenRotationState,
} from './token-secret.ts';

/** The Bootstrapped=True reason once the sweep ran; a pass seeing it knows the server is settled. */
export const verifiedReason = 'CredentialsVerified';

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
  | 'ownSecret'
  | 'keyVerifier'
  | 'now'
  | 'log'
>;

export async function reconcileBootstrap(deps: BootstrapDeps, pass: Pass): Promise<StepResult> {
  const baseUrl = serverBaseUrl(deps, pass.server);
  try {
    return await bootstrap(deps, pass, baseUrl);
  } catch (error) {
    const { conditions } = pass;
    if (error instanceof TerdutApiError && error.status === 429) {
      // The bootstrap endpoints are rate limited per address; come back when
      // the server says, rather than backing off further than needed.
      const seconds = error.retryAfterSeconds ?? 10;
      notBootstrappedYet(
        conditions,
        'RateLimited',
        `terdut-server at ${baseUrl} rate-limited the bootstrap; retrying in ${seconds} s`,
      );
      return stop(seconds * 1000);
    }
    if (isTransientError(error)) {
      notBootstrappedYet(
        conditions,
        'ServerUnreachable',
        `terdut-server at ${baseUrl} did not answer the bootstrap (${(error as Error).message}); retrying with back-off`,
      );
    } else {
      notBootstrappedYet(
        conditions,
        'BootstrapFailed',
        `${(error as Error).message}; retrying with back-off`,
      );
    }
    throw error;
  }
}

async function bootstrap(deps: BootstrapDeps, pass: Pass, baseUrl: string): Promise<StepResult> {
  const { server, conditions } = pass;
  const ns = deps.operatorNamespace;
  const previous = server.status?.conditions?.find((c) => c.type === 'Bootstrapped');
  const recorded = pass.status.credentialsSecretRef;
  let credentials: Credentials | undefined = await readCredentials(deps, server, recorded?.name, {
    expected: recorded !== undefined,
  });
  const settled = recorded !== undefined && previous?.status === 'True' && previous.reason === verifiedReason;
  // A settled server costs no checkpoint read unless the watch cache has one.
  let checkpoint: Checkpoint | undefined =
    settled && !deps.cachedSecret(ns, checkpointSecretName(server))
      ? undefined
      : await readCheckpoint(deps, server);
  const facts: BootstrapFacts = {
    serverAvailable: conditions.isTrue('Available'),
    recorded: recorded !== undefined,
    credentials: credentials ? 'unchecked' : 'absent',
    settled,
    checkpoint: checkpoint ? 'present' : 'absent',
    token: true,
    exchange: 'none',
    tokenRotation: 'none',
  };
  const path: ReadyPath = {
    minted: false,
    adminKeyFrom: checkpoint ? 'checkpoint' : 'none',
    // Persisted by forget-credentials, so a pass resuming after a crash still knows.
    replaced:
      previous?.status === 'False' &&
      (previous.reason === 'CredentialsRefused' || previous.reason === 'CredentialsMissing'),
  };
  let token: { token: string; secret: Secret } | undefined;
  let tokenRead = false;
  let refusedBy = '';
  const client = (key?: string): TerdutClient => deps.serverClient(baseUrl, key);
  const exchanged = async (answer: ExchangeAnswer, secret: Secret): Promise<void> => {
    if ('admin' in answer) {
      await clearRotationMark(deps, secret);
      // Checkpointed BEFORE it is used for anything: a crash from here on resumes from it.
      await writeCheckpoint(deps, server, answer.admin);
      deps.failpoint('checkpoint');
      checkpoint = answer.admin;
      facts.checkpoint = 'present';
      path.adminKeyFrom = answer.admin.source === 'recover' ? 'recover' : 'bootstrap';
    } else if (answer.refused === 'already-bootstrapped') {
      facts.exchange = 'bootstrap-forbidden';
    } else {
      facts.exchange = 'token-refused';
      refusedBy = answer.by;
      facts.tokenRotation = tokenRotationState(secret, deps.now(), deps.tokenPickupTimeoutMs).state;
    }
  };

  // Each step changes a fact; the bound only guards against a decision loop.
  for (let steps = 0; steps < 16; steps++) {
    if (facts.credentials === 'absent' && facts.checkpoint === 'absent' && !tokenRead) {
      // Read from the API server, not a cache: a rotation must be seen at once.
      token = await readBootstrapToken(deps, server);
      tokenRead = true;
      facts.token = token !== undefined;
    }
    const step = nextBootstrapStep(facts);
    switch (step.do) {
      case 'wait-for-server':
        notBootstrappedYet(
          conditions,
          'WaitingForServer',
          'the bootstrap runs once a replica of the server is available',
        );
        return undefined;

      case 'verify-credentials': {
        try {
          let works = await keyWorks(client(credentials!.apiKey));
          if (!works) {
            // The cache may hold an older version of the Secret (a reissue a
            // moment ago): only the API server's copy can be refused.
            const live = await readCredentials(deps, server, recorded?.name, { live: true });
            if (live && live.apiKey !== credentials!.apiKey) {
              credentials = live;
              works = await keyWorks(client(live.apiKey));
            }
          }
          // Without the key's ids the sweep cannot tell it from a stray key: replace it.
          facts.credentials =
            works && credentials!.keyId !== undefined && credentials!.serviceAccountId !== undefined
              ? 'works'
              : 'refused';
        } catch (error) {
          // A settled server that does not answer right now keeps its state;
          // the key verifier and the next pass ask again.
          if (!(facts.settled && isTransientError(error))) throw error;
          deps.log.info('could not verify the recorded key; the server did not answer', {
            error: (error as Error).message,
          });
          facts.credentials = 'works';
        }
        break;
      }

      case 'done':
        conditions.set('Bootstrapped', 'True', verifiedReason, recordedMessage(ns, server));
        deps.keyVerifier.watch(server, baseUrl, credentials!.apiKey);
        return undefined;

      case 'sweep': {
        if (!facts.recorded) {
          // Credentials written by a pass that crashed before its status write.
          await recordCredentials(deps, pass);
          facts.recorded = true;
        }
        const swept = await revokeOperatorKeys(client(credentials!.apiKey), {
          keepServiceAccountKeyId: credentials!.keyId,
          failpoint: deps.failpoint,
        });
        if (facts.checkpoint !== 'absent') {
          await deleteCheckpoint(deps, server, { force: true });
          deps.failpoint('checkpoint-deleted');
        }
        conditions.set('Bootstrapped', 'True', verifiedReason, recordedMessage(ns, server));
        const reason = readyReason(path);
        await deps.events.record(server, 'Normal', reason, readyNote(reason, baseUrl, ns, server, swept));
        deps.log.info('bootstrapped; the recorded key is the only key of the operator on the server', {
          reason,
          revokedServiceAccountKeys: swept.serviceAccountKeys,
          revokedAdminKeys: swept.adminKeys,
        });
        deps.keyVerifier.watch(server, baseUrl, credentials!.apiKey);
        return undefined;
      }

      case 'forget-credentials': {
        const name = recorded?.name ?? credentialsSecretName(server);
        const what =
          step.because === 'missing'
            ? `Secret ${ns}/${name} is gone`
            : `terdut-server at ${baseUrl} refused the key in Secret ${ns}/${name} (revoked, or the server lost its database)`;
        await deps.events.record(
          server,
          'Warning',
          step.because === 'missing' ? 'CredentialsMissing' : 'CredentialsRefused',
          `${what}; obtaining a new key from the server, then revoking every other key of the operator's identities`,
        );
        deps.keyVerifier.forget(server);
        pass.status.credentialsSecretRef = undefined;
        credentials = undefined;
        Object.assign(facts, { recorded: false, credentials: 'absent', settled: false });
        path.replaced = true;
        // Durable before anything else: Ready=False at once, and a crash
        // from here on leaves a status that is not settled, so the pass that
        // finishes sweeps and says how.
        conditions.set(
          'Bootstrapped',
          'False',
          step.because === 'missing' ? 'CredentialsMissing' : 'CredentialsRefused',
          `${what}; obtaining a new key`,
        );
        await writeStatus(deps, pass);
        deps.failpoint('credentials-forgotten');
        break;
      }

      case 'drop-checkpoint':
        await deleteCheckpoint(deps, server, { force: true });
        deps.failpoint('checkpoint-dropped');
        deps.log.info('the checkpointed admin key was refused; obtaining a new one', {
          checkpoint: `${ns}/${checkpointSecretName(server)}`,
        });
        checkpoint = undefined;
        facts.checkpoint = 'absent';
        path.adminKeyFrom = 'none';
        break;

      case 'mint-credentials': {
        let minted;
        try {
          minted = await mintServiceAccountKey(client(checkpoint!.adminKey), deps.failpoint, deps.now);
        } catch (error) {
          // The checkpointed key no longer works (revoked, or from another database).
          if (error instanceof TerdutApiError && (error.status === 401 || error.status === 403)) {
            facts.checkpoint = 'refused';
            break;
          }
          throw error;
        }
        credentials = {
          apiKey: minted.apiKey,
          serviceAccountId: minted.serviceAccountId,
          keyId: minted.keyId,
        };
        await writeCredentials(deps, server, credentials as Required<Credentials>, baseUrl);
        deps.failpoint('credentials');
        await recordCredentials(deps, pass);
        Object.assign(facts, { recorded: true, credentials: 'works' });
        path.minted = true;
        break;
      }

      case 'wait-for-token-secret':
        notBootstrappedYet(
          conditions,
          'TokenSecretMissing',
          `Secret ${server.metadata.namespace}/${tokenSecretName(server)} is missing; recreating it`,
        );
        return stop(0);

      case 'bootstrap':
        await exchanged(await bootstrapServer(client(), token!.token, deps.failpoint), token!.secret);
        break;

      case 'recover':
        await exchanged(await recoverAdmin(client(), token!.token, deps.failpoint), token!.secret);
        break;

      case 'rotate-token': {
        await rotateBootstrapToken(deps, server, token!.secret);
        const message = `terdut-server at ${baseUrl} refused the operator's bootstrap token (${refusedBy} answered 401); the operator generated a new token in Secret ${server.metadata.namespace}/${tokenSecretName(server)} and waits for the pod to read it`;
        notBootstrappedYet(conditions, 'TokenRotated', message);
        await deps.events.record(server, 'Warning', 'TokenRotated', message);
        deps.failpoint('token-rotated');
        return stop(tokenPickupPollMs);
      }

      case 'wait-for-token-pickup': {
        const { rotatedAt } = tokenRotationState(token!.secret, deps.now(), deps.tokenPickupTimeoutMs);
        notBootstrappedYet(
          conditions,
          'WaitingForTokenPickup',
          `rotated the bootstrap token in Secret ${server.metadata.namespace}/${tokenSecretName(server)} at ${rotatedAt}; waiting up to ${Math.round(deps.tokenPickupTimeoutMs / 1000)} s for the pod to read it`,
        );
        return stop(tokenPickupPollMs);
      }

      case 'report-state-lost': {
        const { waitedMs } = tokenRotationState(token!.secret, deps.now(), deps.tokenPickupTimeoutMs);
        const message = stateLostMessage(deps, server, baseUrl, refusedBy, waitedMs ?? 0);
        conditions.set('Bootstrapped', 'False', 'BootstrapStateLost', message);
        if (conditions.changed('Bootstrapped'))
          await deps.events.record(server, 'Warning', 'BootstrapStateLost', message);
        // No requeue: retrying cannot help until the Deployment, the checkpoint or the TerdutServer changes.
        return stop();
      }
    }
  }
  throw new Error('the bootstrap did not settle within one pass; retrying');
}

const recordedMessage = (ns: string, server: TerdutServer): string =>
  `the operator's service-account key is in Secret ${ns}/${credentialsSecretName(server)}, answers, and is the only key of the operator's identities on the server`;

function readyNote(
  reason: ReturnType<typeof readyReason>,
  baseUrl: string,
  ns: string,
  server: TerdutServer,
  swept: { serviceAccountKeys: number; adminKeys: number },
): string {
  const how = {
    BootstrapSucceeded: `bootstrapped terdut-server at ${baseUrl} and minted service account ${serviceAccountName}`,
    BootstrapRecovered: `terdut-server at ${baseUrl} was already bootstrapped (an existing database or a lost answer); the operator recovered admin access with its bootstrap token and minted service account ${serviceAccountName}`,
    BootstrapResumed: `continued an interrupted bootstrap of terdut-server at ${baseUrl} from Secret ${ns}/${checkpointSecretName(server)} or ${ns}/${credentialsSecretName(server)}`,
    CredentialsReissued: `replaced missing or refused credentials for terdut-server at ${baseUrl} with a new key of service account ${serviceAccountName}`,
  }[reason];
  return `${how}; key stored in Secret ${ns}/${credentialsSecretName(server)}; revoked ${swept.adminKeys} admin key(s) of user ${operatorAdmin.username} and ${swept.serviceAccountKeys} other service-account key(s)`;
}

/** Records the credentials Secret in status now: it must be durable before the checkpoint goes. */
async function recordCredentials(deps: BootstrapDeps, pass: Pass): Promise<void> {
  const { server } = pass;
  const ref = { name: credentialsSecretName(server), key: credentialsSecretKey };
  pass.status.credentialsSecretRef = ref;
  pass.server = await deps.kube.mergePatch<TerdutServer>(
    resourcePath(resources.terdutservers, server.metadata.namespace, server.metadata.name, 'status'),
    { status: { credentialsSecretRef: ref } },
  );
  deps.failpoint('status');
}

function stateLostMessage(
  deps: BootstrapDeps,
  server: TerdutServer,
  baseUrl: string,
  refusedBy: string,
  waitedMs: number,
): string {
  const ns = server.metadata.namespace;
  const deployment = workloadName(server);
  return (
    `terdut-server at ${baseUrl} still refuses the bootstrap token (${refusedBy} answered 401) ${Math.round(waitedMs / 1000)} s after the operator rotated it, ` +
    `so the pod does not read Secret ${ns}/${tokenSecretName(server)}. Next step: make sure nothing overrides TERDUT_BOOTSTRAP_TOKEN or TERDUT_BOOTSTRAP_TOKEN_FILE in the pod, ` +
    `then restart it (kubectl -n ${ns} rollout restart deployment/${deployment}); the operator retries when the Deployment changes. ` +
    `Or mint an admin key where the server runs (kubectl -n ${ns} exec deploy/${deployment} -- terdut-server admin recover --username ${operatorAdmin.username}) ` +
    `and store it as key admin-api-key in Secret ${deps.operatorNamespace}/${checkpointSecretName(server)}; the operator continues from it.`
  );
}

// The reasons that say a refused or missing key is being replaced.
const REPLACING: ReadonlySet<string> = new Set(['CredentialsRefused', 'CredentialsMissing']);

/**
 * Bootstrapped=False because something holds the bootstrap up. While a
 * refused or missing key is being replaced, the reason stays the one that
 * says so, and the hold-up goes in the message: that reason is how a pass
 * resuming after a crash knows it finishes a reissue (ReadyPath.replaced),
 * and a transient hold-up written over it made the reissue end as
 * BootstrapResumed.
 */
function notBootstrappedYet(conditions: Pass['conditions'], reason: string, message: string): void {
  const current = conditions.get('Bootstrapped');
  if (current?.status === 'False' && REPLACING.has(current.reason)) {
    conditions.set('Bootstrapped', 'False', current.reason, `replacing the key: ${message}`);
    return;
  }
  conditions.set('Bootstrapped', 'False', reason, message);
}
