import type { Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import { readSignedValue, signValue } from '../auth/signed-values.ts';
import { keptInstanceSecret, purposeKey } from '../repositories/instance-secrets.ts';
import type { CapabilityAction } from '../http/route-auth.ts';

/**
 * A capability: permission for ONE person to take ONE action on ONE incident
 * until it expires, carried by a link in a page (ntfy, e-mail) so the person
 * can act without signing in. It is a signed value, not a stored row: it
 * cannot be widened or extended by whoever holds it.
 */
export interface Capability {
  action: CapabilityAction;
  incidentId: number;
  userId: number;
  expiresAt: Date;
}

interface SignedCapability {
  a: CapabilityAction;
  i: number;
  u: number;
  e: number;
}

/** Issues and verifies capability tokens with a key derived from the instance's signing secret. */
export class CapabilityService {
  readonly #clock: Clock;
  // Derived, so a capability can never pass as an OIDC flow cookie signed with the same secret.
  readonly #signingKey: () => Promise<string>;

  constructor(deps: { db: Database; clock: Clock }) {
    this.#clock = deps.clock;
    this.#signingKey = keptInstanceSecret(deps.db, 'cookie_signing', (secret) =>
      purposeKey(secret, 'terdut capability v1'),
    );
  }

  /** A token for `capability` (the paging work calls this when it sends a page). */
  async issue(capability: Omit<Capability, 'expiresAt'> & { ttlMs: number }): Promise<string> {
    const signed: SignedCapability = {
      a: capability.action,
      i: capability.incidentId,
      u: capability.userId,
      e: this.#clock.now().getTime() + capability.ttlMs,
    };
    return signValue(signed, await this.#signingKey());
  }

  /** The capability inside `token` when it is genuine, unexpired and for `action`; else undefined. */
  async verify(token: string, action: CapabilityAction): Promise<Capability | undefined> {
    const value = readSignedValue(token, await this.#signingKey()) as Partial<SignedCapability> | undefined;
    if (value === undefined || value === null || typeof value !== 'object') return undefined;
    const { a, i, u, e } = value;
    if (a !== action || !Number.isSafeInteger(i) || !Number.isSafeInteger(u) || typeof e !== 'number') {
      return undefined;
    }
    if (e <= this.#clock.now().getTime()) return undefined;
    return { action: a, incidentId: i!, userId: u!, expiresAt: new Date(e) };
  }
}
