/**
 * The bootstrap as a decision: given what the pass knows about the Secrets
 * and what the server answered so far, what is the next step? Pure (no I/O),
 * so every row of bootstrap-protocol.md is a row of the table test beside
 * it; bootstrap.ts gathers the facts, runs the step, and asks again.
 *
 * The one rule the rows serve (the credential invariant): the operator's
 * identities on a server are its admin user and the `terdut-operator`
 * service account. Admin keys are a means to mint the service-account key
 * and are checkpointed before use. Once a service-account key is recorded
 * in the credentials Secret and answers, the pass *sweeps*: with that key it
 * revokes every key of the admin user and every other key of the service
 * account, and only then deletes the checkpoint and says Bootstrapped=True.
 * Whatever was lost on the way (an answer, a Secret, a process), the sweep
 * runs before Ready, so Ready means the recorded key is the only one.
 */

/** What a pass knows; bootstrap.ts refines it after each step. */
export interface BootstrapFacts {
  /** A replica of the server is available. */
  serverAvailable: boolean;
  /** status.credentialsSecretRef is set (an earlier pass recorded credentials). */
  recorded: boolean;
  /**
   * This TerdutServer's credentials Secret: absent; present but not yet tried
   * in this pass; its key answered GET /api/me; or the server refused it.
   */
  credentials: 'absent' | 'unchecked' | 'works' | 'refused';
  /** The stored status already says Bootstrapped=True: an earlier pass swept. */
  settled: boolean;
  /** The checkpoint Secret (an admin key): absent, present, or refused by the server. */
  checkpoint: 'absent' | 'present' | 'refused';
  /** The bootstrap-token Secret holds a token. */
  token: boolean;
  /** What this pass's bootstrap exchange got so far. */
  exchange: 'none' | 'bootstrap-forbidden' | 'token-refused';
  /** After a 401: the token was not rotated yet, was rotated recently, or long enough ago to give up. */
  tokenRotation: 'none' | 'waiting' | 'expired';
}

export type BootstrapStep =
  /** Nothing to ask the server yet. */
  | { do: 'wait-for-server' }
  /** GET /api/me with the recorded key. */
  | { do: 'verify-credentials' }
  /** Settled and the key works: nothing to do. */
  | { do: 'done' }
  /** The recorded key works: revoke every other key of the operator's identities, drop the checkpoint, say Bootstrapped. */
  | { do: 'sweep' }
  /** Status names credentials that are gone or refused: say so (event), clear the reference, obtain new ones. */
  | { do: 'forget-credentials'; because: 'missing' | 'refused' }
  /** The checkpointed admin key was refused: delete the checkpoint, obtain another. */
  | { do: 'drop-checkpoint' }
  /** With the checkpointed admin key: create (or adopt) the service account, mint a key, write the credentials Secret. */
  | { do: 'mint-credentials' }
  | { do: 'wait-for-token-secret' }
  /** POST /api/bootstrap, then checkpoint the answer. */
  | { do: 'bootstrap' }
  /** POST /api/bootstrap/recover (after 403), then checkpoint the answer. */
  | { do: 'recover' }
  | { do: 'rotate-token' }
  | { do: 'wait-for-token-pickup' }
  | { do: 'report-state-lost' };

export function nextBootstrapStep(facts: BootstrapFacts): BootstrapStep {
  switch (facts.credentials) {
    case 'unchecked':
      // A server that is not available cannot answer; a settled one keeps its state until it can.
      if (!facts.serverAvailable)
        return facts.settled && facts.checkpoint === 'absent' ? { do: 'done' } : { do: 'wait-for-server' };
      return { do: 'verify-credentials' };
    case 'works':
      // A checkpoint left behind is an admin key someone may still hold: sweep.
      return facts.settled && facts.checkpoint === 'absent' ? { do: 'done' } : { do: 'sweep' };
    case 'refused':
      return { do: 'forget-credentials', because: 'refused' };
    case 'absent':
      if (facts.recorded) return { do: 'forget-credentials', because: 'missing' };
  }
  if (!facts.serverAvailable) return { do: 'wait-for-server' };
  if (facts.checkpoint === 'present') return { do: 'mint-credentials' };
  if (facts.checkpoint === 'refused') return { do: 'drop-checkpoint' };
  if (!facts.token) return { do: 'wait-for-token-secret' };
  switch (facts.exchange) {
    case 'none':
      return { do: 'bootstrap' };
    case 'bootstrap-forbidden':
      return { do: 'recover' };
    case 'token-refused':
      return facts.tokenRotation === 'none'
        ? { do: 'rotate-token' }
        : facts.tokenRotation === 'waiting'
          ? { do: 'wait-for-token-pickup' }
          : { do: 'report-state-lost' };
  }
}

/** How this pass reached Bootstrapped=True, for the one event that says so. */
export interface ReadyPath {
  /** This pass minted the recorded key (else an earlier, interrupted pass did). */
  minted: boolean;
  /** Where the admin key that minted it came from. */
  adminKeyFrom: 'bootstrap' | 'recover' | 'checkpoint' | 'none';
  /** This pass replaced credentials that were missing or refused. */
  replaced: boolean;
}

export type ReadyReason =
  'BootstrapSucceeded' | 'BootstrapRecovered' | 'BootstrapResumed' | 'CredentialsReissued';

export function readyReason(path: ReadyPath): ReadyReason {
  if (path.replaced) return 'CredentialsReissued';
  if (!path.minted) return 'BootstrapResumed';
  if (path.adminKeyFrom === 'bootstrap') return 'BootstrapSucceeded';
  if (path.adminKeyFrom === 'recover') return 'BootstrapRecovered';
  return 'BootstrapResumed';
}
