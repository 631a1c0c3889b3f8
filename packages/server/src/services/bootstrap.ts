import type { Database, Queryable } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { ApiError, conflict, forbidden, tooManyRequests, unauthorized } from '../errors.ts';
import { secretsEqual } from '../auth/secrets.ts';
import {
  BootstrapTokenUnavailable,
  bootstrapTokenSource,
  type BootstrapTokenSource,
} from '../auth/bootstrap-token.ts';
import { FixedWindowRateLimiter } from '../auth/rate-limit.ts';
import {
  bootstrapRecordExists,
  insertBootstrapRecord,
  lockBootstrapState,
} from '../repositories/bootstrap-state.ts';
import {
  anyPersonEverExisted,
  findDeletedPersonByUsername,
  findUserByUsername,
  insertUser,
  restoreAsAdmin,
  setRole,
  type UserRow,
} from '../repositories/users.ts';
import type { AuditActor, AuditService } from './audit.ts';
import { mintApiKey, type NewApiKey } from './api-keys.ts';
import { parseEmail, parseUsername } from './user-fields.ts';
import { clientNetwork } from './sign-in-throttle.ts';

/**
 * Whether the instance has been claimed: the bootstrap record exists, or any
 * person was ever created (a database from before the bootstrap protocol).
 * Sign-in must refuse everyone while this is false (bootstrap-protocol.md).
 */
export async function isBootstrapped(db: Queryable): Promise<boolean> {
  return (await bootstrapRecordExists(db)) || (await anyPersonEverExisted(db));
}

/** An admin with a fresh key: what bootstrap and recovery hand back. */
export interface AdminCredential {
  user: UserRow;
  apiKey: NewApiKey;
}

/** How recovery found the named user. */
export type RecoveryOutcome = 'created' | 'restored' | 'promoted' | 'unchanged';

/**
 * Makes sure `username` exists as an admin and mints a fresh API key for it,
 * in one transaction: a live user is promoted, a deleted one restored, a
 * missing one created. Refused with 409 before bootstrap (that is what
 * POST /api/bootstrap is for). Used by POST /api/bootstrap/recover and by
 * `terdut-server admin recover`.
 */
export async function recoverAdmin(
  db: Database,
  audit: AuditService,
  input: { username: string; email?: string },
  context: { actor: AuditActor; clientAddress?: string },
): Promise<AdminCredential & { outcome: RecoveryOutcome }> {
  const username = parseUsername(input.username);
  const email = input.email === undefined || input.email.trim() === '' ? undefined : parseEmail(input.email);
  return db.transaction(async (tx) => {
    await lockBootstrapState(tx);
    if (!(await isBootstrapped(tx))) throw conflict('not bootstrapped yet; use POST /api/bootstrap');
    let user: UserRow;
    let outcome: RecoveryOutcome;
    const live = await findUserByUsername(tx, username);
    const deleted = live ? undefined : await findDeletedPersonByUsername(tx, username);
    if (live) {
      outcome = live.role === 'admin' ? 'unchanged' : 'promoted';
      user = live.role === 'admin' ? live : (await setRole(tx, live.id, 'admin'))!;
    } else if (deleted) {
      outcome = 'restored';
      user = await restoreAsAdmin(tx, deleted.id, email);
    } else {
      outcome = 'created';
      user = await insertUser(tx, { username, email: email ?? '', role: 'admin' });
    }
    const apiKey = await mintApiKey(tx, user.id, 'recovery');
    await audit.record(tx, {
      actor: context.actor,
      action: 'bootstrap.recover',
      target: `user:${user.id}`,
      detail: { username, outcome, api_key_id: apiKey.id },
      ...(context.clientAddress !== undefined ? { clientAddress: context.clientAddress } : {}),
    });
    return { user, apiKey, outcome };
  });
}

// Generous for a person or an operator (they need one or two calls), slow
// for anyone guessing.
const ATTEMPTS_PER_MINUTE = 10;

/** Bootstrap and recovery, gated by the bootstrap token (bootstrap-protocol.md). */
export class BootstrapService {
  readonly #db: Database;
  readonly #audit: AuditService;
  readonly #token: BootstrapTokenSource;
  readonly #limiter: FixedWindowRateLimiter;

  constructor(deps: { db: Database; clock: Clock; config: Config; audit: AuditService }) {
    this.#db = deps.db;
    this.#audit = deps.audit;
    this.#token = bootstrapTokenSource(deps.config);
    this.#limiter = new FixedWindowRateLimiter({
      limit: ATTEMPTS_PER_MINUTE,
      windowMs: 60_000,
      clock: deps.clock,
    });
  }

  /** The token generated at start-up, when none was configured; undefined otherwise. */
  get generatedToken(): string | undefined {
    return this.#token.generated;
  }

  /** Where the token comes from, for start-up instructions. */
  get tokenSource(): Pick<BootstrapTokenSource, 'origin' | 'path' | 'generated'> {
    return this.#token;
  }

  async status(): Promise<{ bootstrapped: boolean }> {
    return { bootstrapped: await isBootstrapped(this.#db) };
  }

  /**
   * Lets a bootstrap or recover request through, or throws: 429 over the rate
   * limit, 503 when the token file cannot be read, 401 for a missing or wrong
   * token. Runs before the body is looked at, so strangers learn nothing else.
   */
  async admit(
    authorization: string | undefined,
    clientAddress: string,
    endpoint: 'bootstrap' | 'recover',
  ): Promise<void> {
    // Counted, and audited, per client network as failed sign-ins are: an IPv6 client by its /64,
    // or each of its 2^64 addresses had an attempt budget and a stream of audit rows of its own.
    const client = clientNetwork(clientAddress);
    const given = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
    // No token guesses nothing: it is told what is missing (401), not to wait,
    // and does not spend the network's attempts (audited below like the others).
    const decision = given === undefined ? { allowed: true as const } : this.#limiter.hit(client);
    if (!decision.allowed) {
      const wait = decision.retryAfterSeconds;
      throw tooManyRequests(`too many bootstrap attempts from this address; retry in ${wait}s`, wait);
    }
    let expected: string;
    try {
      expected = await this.#token.current();
    } catch (error) {
      if (error instanceof BootstrapTokenUnavailable) throw new ApiError(503, error.message);
      throw error;
    }
    const refusal =
      given === undefined
        ? 'bootstrap token required: send Authorization: Bearer <bootstrap token>'
        : secretsEqual(given, expected)
          ? undefined
          : 'invalid bootstrap token';
    if (refusal === undefined) return;
    await this.#audit.recordRepeated(this.#db, {
      actor: { name: 'anonymous' },
      action: `${endpoint === 'bootstrap' ? 'bootstrap' : 'bootstrap.recover'}.denied`,
      detail: { reason: given === undefined ? 'missing token' : 'wrong token' },
      // The /64 of an IPv6 client (one row a minute for the network); any other address as it is.
      clientAddress: client.endsWith('/64') ? client : clientAddress,
    });
    throw unauthorized(refusal);
  }

  /** Creates the first admin and its key and records the bootstrap, exactly once (403 afterwards). */
  async bootstrap(
    input: { username: string; email: string },
    clientAddress: string,
  ): Promise<AdminCredential> {
    const username = parseUsername(input.username);
    // Blank is accepted: an operator's admin may have no mailbox (clients send "").
    const email = input.email.trim() === '' ? '' : parseEmail(input.email);
    return this.#db.transaction(async (tx) => {
      // Concurrent callers queue here; each then sees whether an earlier one won.
      await lockBootstrapState(tx);
      if (await isBootstrapped(tx)) throw forbidden('already bootstrapped');
      const user = await insertUser(tx, { username, email, role: 'admin' });
      const apiKey = await mintApiKey(tx, user.id, 'bootstrap');
      await insertBootstrapRecord(tx, user.id);
      await this.#audit.record(tx, {
        actor: { name: 'bootstrap token' },
        action: 'bootstrap',
        target: `user:${user.id}`,
        detail: { username, api_key_id: apiKey.id },
        clientAddress,
      });
      return { user, apiKey };
    });
  }

  /** Recovery with the bootstrap token; see recoverAdmin. */
  async recover(
    input: { username: string; email?: string },
    clientAddress: string,
  ): Promise<AdminCredential> {
    return recoverAdmin(this.#db, this.#audit, input, { actor: { name: 'bootstrap token' }, clientAddress });
  }
}
