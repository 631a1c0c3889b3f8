import type { Database, Queryable } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import { tooManyRequests } from '../errors.ts';
import { clearFailures, recentFailures, recordFailures } from '../repositories/sign-in-failures.ts';

/** How many failed sign-ins are tolerated in a sliding window, per username and per client address. */
export interface SignInLimits {
  windowMs: number;
  perUsername: number;
  perAddress: number;
}

/**
 * 5 wrong passwords per username and 30 per address in 15 minutes: enough
 * for a person mistyping, far too few for guessing (about 500 guesses a day
 * per account). The address limit is higher because several people can
 * share one address (an office, a proxy).
 */
export const DEFAULT_SIGN_IN_LIMITS: SignInLimits = { windowMs: 15 * 60_000, perUsername: 5, perAddress: 30 };

/**
 * Rate limit for failed sign-ins, counted in the database so every replica
 * sees the same counts. Only failures count; a success clears its username.
 */
export class SignInThrottle {
  readonly #db: Database;
  readonly #clock: Clock;
  readonly #limits: SignInLimits;

  constructor(deps: { db: Database; clock: Clock; limits?: SignInLimits }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#limits = deps.limits ?? DEFAULT_SIGN_IN_LIMITS;
  }

  /** Throws 429 (with Retry-After) when the username or the address has too many recent failures. */
  async check(username: string, clientAddress: string): Promise<void> {
    const now = this.#clock.now().getTime();
    const since = new Date(now - this.#limits.windowMs);
    const buckets: [string, number][] = [
      [usernameBucket(username), this.#limits.perUsername],
      [addressBucket(clientAddress), this.#limits.perAddress],
    ];
    for (const [bucket, limit] of buckets) {
      const failures = await recentFailures(this.#db, bucket, since, limit);
      if (failures.length < limit) continue;
      // Allowed again when the oldest of the last `limit` failures leaves the window.
      const oldest = failures[failures.length - 1]!.getTime();
      const retryAfter = Math.max(1, Math.ceil((oldest + this.#limits.windowMs - now) / 1000));
      throw tooManyRequests(
        `too many failed sign-ins ${bucket.startsWith('username:') ? 'for this username' : 'from your address'}; ` +
          `try again in ${retryAfter} seconds`,
        retryAfter,
      );
    }
  }

  /** Counts one failure against the username and the address (inside the caller's transaction). */
  async recordFailure(tx: Queryable, username: string, clientAddress: string): Promise<void> {
    const now = this.#clock.now();
    await recordFailures(
      tx,
      [usernameBucket(username), addressBucket(clientAddress)],
      now,
      new Date(now.getTime() - this.#limits.windowMs),
    );
  }

  /** Forgets the username's failures after it signed in successfully. */
  async recordSuccess(tx: Queryable, username: string): Promise<void> {
    await clearFailures(tx, usernameBucket(username));
  }
}

// Case-folded, so "Alice" and "alice" share one budget.
const usernameBucket = (username: string): string => `username:${username.toLowerCase()}`;
const addressBucket = (address: string): string => `address:${address}`;
