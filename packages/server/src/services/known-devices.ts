import { randomBytes } from 'node:crypto';
import type { Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import { readSignedValue, signValue } from '../auth/signed-values.ts';
import { keptInstanceSecret, purposeKey } from '../repositories/instance-secrets.ts';
import { usernameDigest } from './sign-in-throttle.ts';

/** How long a browser stays known after its last successful password sign-in. */
export const KNOWN_DEVICE_TTL_MS = 90 * 24 * 3_600_000;

interface KnownDeviceValue {
  /** The browser's own id: its failures are counted under it. */
  d: string;
  /** The account's username as usernameDigest gives it (case-folded, digested). */
  n: string;
  /** Expiry, milliseconds since the epoch. */
  e: number;
}

/**
 * Browsers that signed in to an account with its password before: OWASP's
 * "device cookies", against lockout as a denial of service. Failed sign-ins
 * are limited per username (sign-in-throttle.ts), so anyone who knows a
 * username could keep its owner locked out for good with five wrong
 * passwords every 15 minutes, from anywhere, on the night they are paged. A
 * successful sign-in gives the browser a signed cookie naming the account;
 * an attempt that brings it is counted against that browser, not the
 * username, so strangers' guesses do not lock it out, and whoever holds it
 * still gets five guesses in 15 minutes. It is no credential: the password
 * is checked as always.
 */
export class KnownDevices {
  readonly #clock: Clock;
  // Derived, so a device cookie never passes for an OIDC flow cookie or a capability.
  readonly #signingKey: () => Promise<string>;

  constructor(deps: { db: Database; clock: Clock }) {
    this.#clock = deps.clock;
    this.#signingKey = keptInstanceSecret(deps.db, 'cookie_signing', (secret) =>
      purposeKey(secret, 'terdut known device v1'),
    );
  }

  /** The id of the browser behind `cookie` when it is genuine, unexpired and for `username`; else undefined. */
  async recognise(cookie: string | undefined, username: string): Promise<string | undefined> {
    if (cookie === undefined || cookie.length > 500) return undefined;
    const value = readSignedValue(cookie, await this.#signingKey()) as Partial<KnownDeviceValue> | undefined;
    if (value === undefined || value === null || typeof value !== 'object') return undefined;
    const { d, n, e } = value;
    if (typeof d !== 'string' || typeof e !== 'number' || n !== usernameDigest(username)) return undefined;
    return e > this.#clock.now().getTime() ? d : undefined;
  }

  /** A cookie for a browser that just signed in to `username`, keeping its id when it had one. */
  async issue(username: string, deviceId?: string): Promise<string> {
    const value: KnownDeviceValue = {
      d: deviceId ?? randomBytes(16).toString('base64url'),
      n: usernameDigest(username),
      e: this.#clock.now().getTime() + KNOWN_DEVICE_TTL_MS,
    };
    return signValue(value, await this.#signingKey());
  }
}
