import type { Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Principal } from '../auth/principal.ts';
import { hashApiKey } from '../auth/secrets.ts';
import { findKeyOwnerByHash, touchKey } from '../repositories/api-keys.ts';
import type { SessionService } from './sessions.ts';

// last_used_at is for people deciding which keys are stale, so minute
// precision is plenty and saves a write on every request.
const LAST_USED_PRECISION_MS = 60_000;

/** Turns credentials presented on a request into a Principal. */
export class AuthenticationService {
  readonly #db: Database;
  readonly #clock: Clock;
  readonly #sessions: SessionService;

  constructor(deps: { db: Database; clock: Clock; sessions: SessionService }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#sessions = deps.sessions;
  }

  /**
   * The principal behind a browser session cookie's value, or undefined for
   * an unknown, revoked or expired session, or a deleted user.
   */
  async authenticateSession(cookieValue: string): Promise<Principal | undefined> {
    return this.#sessions.authenticate(cookieValue);
  }

  /** The principal behind an API key, or undefined for an unknown or revoked key. */
  async authenticateApiKey(key: string): Promise<Principal | undefined> {
    if (!/^[0-9a-f]{64}$/.test(key)) return undefined;
    const owner = await findKeyOwnerByHash(this.#db, hashApiKey(key));
    if (!owner) return undefined;
    const now = this.#clock.now();
    const staleBefore = new Date(now.getTime() - LAST_USED_PRECISION_MS);
    if (owner.last_used_at === null || owner.last_used_at < staleBefore) {
      await touchKey(this.#db, owner.key_id, now, staleBefore);
    }
    return {
      userId: owner.user_id,
      username: owner.username,
      // Service accounts of scope `instance` (the only scope) act as admins.
      role: owner.kind === 'service' ? 'admin' : owner.role,
      kind: owner.kind,
      via: 'api_key',
      apiKeyId: owner.key_id,
    };
  }
}
