import type { Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Principal } from '../auth/principal.ts';
import { hashApiKey } from '../auth/secrets.ts';
import { findKeyOwnerByHash, touchKey, type ApiKeyOwnerRow } from '../repositories/api-keys.ts';
import type { SessionService } from './sessions.ts';

// last_used_at is for people deciding which keys are stale, so minute
// precision is plenty and saves a write on every request.
const LAST_USED_PRECISION_MS = 60_000;

/**
 * How long another replica may go on accepting an API key after it was
 * deleted, or its owner deleted or demoted, elsewhere. Within one process
 * the change applies at once: every successful state-changing request
 * forgets the cache (forgetCachedKeys). The key lookup was one of the
 * round trips of every webhook and every API call.
 */
export const API_KEY_CACHE_MS = 5_000;
const API_KEY_CACHE_ENTRIES = 10_000;

interface CachedOwner {
  owner: ApiKeyOwnerRow;
  until: number;
}

/** Turns credentials presented on a request into a Principal. */
export class AuthenticationService {
  readonly #db: Database;
  readonly #clock: Clock;
  readonly #sessions: SessionService;
  readonly #keyOwners = new Map<string, CachedOwner>();
  // Bumped by forgetCachedKeys: a lookup that began before a forget must not
  // put what it read (perhaps before the change committed) into the cache.
  #generation = 0;

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
    const owner = await this.#ownerOf(hashApiKey(key));
    if (!owner) return undefined;
    const now = this.#clock.now();
    const staleBefore = new Date(now.getTime() - LAST_USED_PRECISION_MS);
    if (owner.last_used_at === null || owner.last_used_at < staleBefore) {
      await touchKey(this.#db, owner.key_id, now, staleBefore);
      owner.last_used_at = now;
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

  /**
   * Forgets every cached key owner. Called after each successful
   * state-changing request (http/authentication.ts), so a key deleted, or a
   * person deleted or demoted, through this process stops working at once.
   */
  forgetCachedKeys(): void {
    this.#generation += 1;
    this.#keyOwners.clear();
  }

  async #ownerOf(keyHash: string): Promise<ApiKeyOwnerRow | undefined> {
    const cached = this.#keyOwners.get(keyHash);
    if (cached !== undefined && cached.until > performance.now()) return cached.owner;
    const generation = this.#generation;
    const owner = await findKeyOwnerByHash(this.#db, keyHash);
    // Unknown keys are not cached: a guessing caller must not fill memory.
    if (owner === undefined || generation !== this.#generation) return owner;
    if (this.#keyOwners.size >= API_KEY_CACHE_ENTRIES) this.#keyOwners.clear();
    this.#keyOwners.set(keyHash, { owner, until: performance.now() + API_KEY_CACHE_MS });
    return owner;
  }
}
