import type { Clock } from '../clock.ts';
import type { ApiKeyOwnerRow } from '../repositories/api-keys.ts';

/**
 * How long a key's owner, once read, answers for the key without asking the
 * database again. It is also the bound on revocation when a replica misses
 * the notification of a change (README, "Users, API keys and service
 * accounts"): a revoked key, a deleted person or a changed role takes effect
 * at the latest this long after the change.
 */
export const API_KEY_CACHE_MS = 5_000;

/**
 * Keys remembered at most. Only keys that exist are remembered, so this is
 * far above any real number of keys in use within API_KEY_CACHE_MS; it only
 * stops memory growing without end.
 */
export const API_KEY_CACHE_ENTRIES = 10_000;

/**
 * The NOTIFY channel on which the database announces any change to what a
 * key lookup reads (migration 0990); the payload is empty.
 */
export const CREDENTIALS_CHANNEL = 'terdut_credentials';

/**
 * What a service calls right after it commits a change that takes rights
 * away (a key deleted, a person deleted or demoted): this replica forgets
 * its remembered keys at once. The database's notification of the change
 * reaches every replica, this one too, but a moment after the commit:
 * possibly after this replica's next request.
 */
export type CredentialsChanged = () => void;

interface Entry {
  owner: ApiKeyOwnerRow;
  readAtMs: number;
}

/**
 * A read of the database, as `ApiKeyOwnerCache.beginRead` hands it out:
 * what the cache will accept from it is decided when the read starts.
 */
export interface OwnerRead {
  readonly startedAt: Date;
  readonly generation: number;
}

/**
 * The owners of API keys found recently, by the key's SHA-256 hash (never
 * the key itself). An entry answers for API_KEY_CACHE_MS after its read
 * started, by the given clock; `clear` forgets everything at once. Misses
 * are never remembered: a key created a moment ago must work at once, and
 * random keys must not fill memory. When full, the oldest entry goes (a
 * Map keeps insertion order).
 *
 * @example
 * let owner = cache.get(hash);
 * if (owner === undefined) {
 *   const read = cache.beginRead();
 *   owner = await findKeyOwnerByHash(db, hash);
 *   if (owner) cache.remember(hash, owner, read);
 * }
 */
export class ApiKeyOwnerCache {
  readonly #clock: Clock;
  readonly #maxAgeMs: number;
  readonly #maxEntries: number;
  readonly #entries = new Map<string, Entry>();
  // Moves on every clear. A read that started before a clear may have seen
  // the state the clear is about (a key revoked while the query was on the
  // wire): its answer is used for its own request but not remembered.
  #generation = 0;

  constructor(clock: Clock, options: { maxAgeMs?: number; maxEntries?: number } = {}) {
    this.#clock = clock;
    this.#maxAgeMs = options.maxAgeMs ?? API_KEY_CACHE_MS;
    this.#maxEntries = options.maxEntries ?? API_KEY_CACHE_ENTRIES;
  }

  /** The owner remembered for `keyHash`, or undefined when none is, or it was read API_KEY_CACHE_MS ago or more. */
  get(keyHash: string): ApiKeyOwnerRow | undefined {
    const entry = this.#entries.get(keyHash);
    if (entry === undefined) return undefined;
    if (this.#clock.now().getTime() - entry.readAtMs >= this.#maxAgeMs) {
      this.#entries.delete(keyHash);
      return undefined;
    }
    return entry.owner;
  }

  /** Call before reading the database; pass the result to `remember`. */
  beginRead(): OwnerRead {
    return { startedAt: this.#clock.now(), generation: this.#generation };
  }

  /**
   * Remembers what `read` found, timed from when the read started (so the
   * bound holds however long the query took), unless everything was
   * forgotten since it started.
   */
  remember(keyHash: string, owner: ApiKeyOwnerRow, read: OwnerRead): void {
    if (read.generation !== this.#generation) return;
    // Re-inserted, not overwritten in place, so insertion order stays read order.
    this.#entries.delete(keyHash);
    if (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
    this.#entries.set(keyHash, { owner, readAtMs: read.startedAt.getTime() });
  }

  /**
   * Records that the key was just marked used, so the next request does not
   * mark it again; keeps the entry's age (the owner was not read again).
   */
  markUsed(keyHash: string, at: Date): void {
    const entry = this.#entries.get(keyHash);
    if (entry) entry.owner = { ...entry.owner, last_used_at: at };
  }

  /** Forgets every key: something a lookup reads has changed. */
  clear(): void {
    this.#entries.clear();
    this.#generation += 1;
  }

  /** How many keys are remembered (expired ones included until looked up). */
  get size(): number {
    return this.#entries.size;
  }
}
