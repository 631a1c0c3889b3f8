import { createHash } from 'node:crypto';
import { isIPv6 } from 'node:net';
import type { Database, Queryable } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import { tooManyRequests } from '../errors.ts';
import {
  clearFailures,
  forgetFailures,
  lockBuckets,
  recentFailures,
  recordFailures,
} from '../repositories/sign-in-failures.ts';

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

/** One sign-in attempt let through: counted as a failure until `succeeded` takes it back. */
export interface SignInAttempt {
  readonly buckets: readonly string[];
  readonly at: Date;
}

/**
 * Rate limit for failed sign-ins, counted in the database so every replica
 * sees the same counts. Only failures count; a success clears its username's (or its known
 * browser's, services/known-devices.ts).
 *
 * An attempt is counted as a failure when it is let in, before its password
 * is checked, and taken back if the password was right: checking the count
 * first and recording the failure after the (slow, about 0.1 s) password
 * hash let every guess sent at once through the check, 59 of them and then
 * the right password past a limit of 5. Letting in takes the buckets' locks,
 * so concurrent attempts, on any replica, queue for their places.
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

  /**
   * Lets one attempt for `username` from `clientAddress` in, counted as a
   * failure; throws 429 (with Retry-After) when the username or the address
   * already has too many recent failures. From a browser that signed in to
   * this username before (`knownDevice`, services/known-devices.ts), the
   * browser's failures count instead of the username's, with the same limit.
   */
  async admit(username: string, clientAddress: string, knownDevice?: string): Promise<SignInAttempt> {
    const now = this.#clock.now();
    const since = new Date(now.getTime() - this.#limits.windowMs);
    const buckets: [string, number][] = [
      [
        knownDevice === undefined ? usernameBucket(username) : deviceBucket(knownDevice),
        this.#limits.perUsername,
      ],
      [addressBucket(clientAddress), this.#limits.perAddress],
    ];
    return this.#db.transaction(async (tx) => {
      await lockBuckets(
        tx,
        buckets.map(([bucket]) => bucket),
      );
      for (const [bucket, limit] of buckets) {
        const failures = await recentFailures(tx, bucket, since, limit);
        if (failures.length < limit) continue;
        // Allowed again when the oldest of the last `limit` failures leaves the window.
        const oldest = failures[failures.length - 1]!.getTime();
        const retryAfter = Math.max(1, Math.ceil((oldest + this.#limits.windowMs - now.getTime()) / 1000));
        throw tooManyRequests(
          `too many failed sign-ins ${BUCKET_WORDS[bucket.slice(0, bucket.indexOf(':'))]}; ` +
            `try again in ${retryAfter} seconds`,
          retryAfter,
        );
      }
      const names = buckets.map(([bucket]) => bucket);
      await recordFailures(tx, names, now, since);
      return { buckets: names, at: now };
    });
  }

  /** The attempt's password was right: it no longer counts (inside the caller's transaction). */
  async succeeded(tx: Queryable, attempt: SignInAttempt): Promise<void> {
    await forgetFailures(tx, attempt.buckets, attempt.at);
  }

  /**
   * Forgets the earlier failures of the attempt's username, or of its known
   * browser, after it signed in successfully. A known browser's success
   * leaves the username's failures alone: they are strangers' guesses, and
   * forgetting them would hand those strangers five more at once.
   */
  async recordSuccess(tx: Queryable, attempt: SignInAttempt): Promise<void> {
    await clearFailures(tx, attempt.buckets[0]!);
  }
}

// Case-folded, so "Alice" and "alice" share one budget; and a digest, never the text typed:
// a password typed into the username field would otherwise sit in sign_in_failures (and in
// every backup) until the next failed sign-in prunes it.
const usernameBucket = (username: string): string => `username:${usernameDigest(username)}`;
const addressBucket = (address: string): string => `address:${clientNetwork(address)}`;
const deviceBucket = (deviceId: string): string => `device:${sha256Hex(deviceId)}`;

/** A typed username as it may be stored: case-folded ("Alice" is "alice") and digested, never the text. */
export const usernameDigest = (username: string): string => sha256Hex(username.toLowerCase());
const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');
const BUCKET_WORDS: Record<string, string> = {
  username: 'for this username',
  address: 'from your address',
  device: 'from this browser',
};

/**
 * What one client is counted as: an IPv4 address as it is (an IPv4-mapped
 * IPv6 one too), an IPv6 address by its /64. A subscriber is given a whole
 * /64 (RFC 6177; every VPS and home line), so counting each address alone
 * gave whoever holds one 2^64 budgets of guesses.
 *
 * @example clientNetwork('2001:db8:7:1::1') // '2001:db8:7:1::/64'
 */
export function clientNetwork(address: string): string {
  if (!isIPv6(address)) return address;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1]!;
  const [head = '', tail] = address.split('%', 1)[0]!.split('::');
  const groupsOf = (part: string) => (part === '' ? [] : part.split(':'));
  const front = groupsOf(head);
  const back = tail === undefined ? [] : groupsOf(tail);
  // `::` stands for enough zero groups to make eight; a trailing dotted IPv4 part is two groups.
  const width = (groups: string[]) => groups.length + (groups.at(-1)?.includes('.') ? 1 : 0);
  const zeros = tail === undefined ? [] : Array<string>(8 - width(front) - width(back)).fill('0');
  const groups = [...front, ...zeros, ...back];
  const prefix = groups.slice(0, 4).map((group) => parseInt(group, 16).toString(16));
  return `${prefix.join(':')}::/64`;
}
