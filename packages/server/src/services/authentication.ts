import type { Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Principal } from '../auth/principal.ts';
import { hashApiKey } from '../auth/secrets.ts';
import { findKeyOwnerByHash, touchKey, type ApiKeyOwnerRow } from '../repositories/api-keys.ts';
import { ApiKeyOwnerCache, CREDENTIALS_CHANNEL } from './api-key-cache.ts';
import type { SessionService } from './sessions.ts';

// last_used_at is for people deciding which keys are stale, so minute
// precision is plenty and saves a write on every request.
const LAST_USED_PRECISION_MS = 60_000;

/** Turns credentials presented on a request into a Principal. */
export class AuthenticationService {
  readonly #db: Database;
  readonly #clock: Clock;
  readonly #sessions: SessionService;
  readonly #keyOwners: ApiKeyOwnerCache;
  #stopListening: (() => Promise<void>) | undefined;

  constructor(deps: { db: Database; clock: Clock; sessions: SessionService }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#sessions = deps.sessions;
    this.#keyOwners = new ApiKeyOwnerCache(deps.clock);
  }

  /**
   * Forgets every remembered API key whenever the database announces a
   * change to keys or users (migration 0990), on this replica and every
   * other; resolves once listening. Rejects when the LISTEN cannot be
   * placed; the caller may carry on without it, because every remembered
   * key is read again after API_KEY_CACHE_MS anyway. The same bound holds
   * while the listening connection is down and reconnecting: what is
   * announced meanwhile is not heard, and keys expire instead.
   */
  async listenForCredentialChanges(): Promise<void> {
    if (this.#stopListening) return;
    this.#stopListening = await this.#db.listen(CREDENTIALS_CHANNEL, () => this.#keyOwners.clear());
  }

  /**
   * Stops listening (the app is closing); remembered keys then expire by age
   * alone. Never throws: a database closed first has stopped it already.
   */
  async stopListening(): Promise<void> {
    const stop = this.#stopListening;
    this.#stopListening = undefined;
    await stop?.().catch(() => {});
  }

  /** Forgets every remembered API key (this replica changed keys or users; see CredentialsChanged). */
  forgetApiKeys(): void {
    this.#keyOwners.clear();
  }

  /**
   * The principal behind a browser session cookie's value, or undefined for
   * an unknown, revoked or expired session, or a deleted user.
   */
  async authenticateSession(cookieValue: string): Promise<Principal | undefined> {
    return this.#sessions.authenticate(cookieValue);
  }

  /**
   * The principal behind an API key, or undefined for an unknown or revoked
   * key. A key found is remembered for API_KEY_CACHE_MS (api-key-cache.ts),
   * and forgotten at once when keys or users change.
   */
  async authenticateApiKey(key: string): Promise<Principal | undefined> {
    if (!/^[0-9a-f]{64}$/.test(key)) return undefined;
    const keyHash = hashApiKey(key);
    const owner = this.#keyOwners.get(keyHash) ?? (await this.#readOwner(keyHash));
    if (!owner) return undefined;
    const now = this.#clock.now();
    const staleBefore = new Date(now.getTime() - LAST_USED_PRECISION_MS);
    if (owner.last_used_at === null || owner.last_used_at < staleBefore) {
      await touchKey(this.#db, owner.key_id, now, staleBefore);
      this.#keyOwners.markUsed(keyHash, now);
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

  async #readOwner(keyHash: string): Promise<ApiKeyOwnerRow | undefined> {
    const read = this.#keyOwners.beginRead();
    const owner = await findKeyOwnerByHash(this.#db, keyHash);
    if (owner) this.#keyOwners.remember(keyHash, owner, read);
    return owner;
  }
}
