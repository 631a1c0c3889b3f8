import { readSignedValue, signValue } from '../../auth/signed-values.ts';

/**
 * The capability inside a page's Acknowledge button or link: it lets whoever
 * holds it do ONE thing (acknowledge one incident as one person) until it
 * expires, and nothing else; it is not the person's API key. It is signed
 * with the instance secret `paging_capability` (migration 0700), so it
 * cannot be forged or altered. Anyone who can read the message can use it;
 * the README says so and how to close that (ntfy access tokens, a private
 * ntfy server).
 */
export interface Capability {
  action: 'acknowledge';
  incidentId: number;
  userId: number;
  /**
   * The paging round that sent it (a new round starts when an
   * acknowledgement is taken back or a snooze ends): once another round
   * pages, an older button no longer acknowledges. Absent in tokens issued
   * before rounds were named, which work in any round until they expire.
   */
  round?: number;
  expiresAt: Date;
}

interface CapabilityWire {
  v: 1;
  a: 'acknowledge';
  i: number;
  u: number;
  /** The paging round. */
  r?: number;
  /** Expiry, seconds since the epoch. */
  e: number;
}

/** @example issueCapability({ action: 'acknowledge', incidentId: 7, userId: 3, expiresAt }, key) // "eyJ2Ijo….mac" */
export function issueCapability(capability: Capability, key: string): string {
  const wire: CapabilityWire = {
    v: 1,
    a: capability.action,
    i: capability.incidentId,
    u: capability.userId,
    ...(capability.round !== undefined ? { r: capability.round } : {}),
    e: Math.floor(capability.expiresAt.getTime() / 1000),
  };
  return signValue(wire, key);
}

/**
 * The capability in `token`, or why it is not good: `invalid` (forged,
 * altered, malformed) or `expired`; an expired one's signature is good, so
 * the incident it names can be trusted (to link it, never to act on it).
 */
export function readCapability(
  token: string,
  key: string,
  now: Date,
): { capability: Capability } | { problem: 'invalid' } | { problem: 'expired'; incidentId: number } {
  const value = readSignedValue(token, key) as Partial<CapabilityWire> | undefined;
  if (
    value === undefined ||
    value === null ||
    value.v !== 1 ||
    value.a !== 'acknowledge' ||
    !Number.isInteger(value.i) ||
    !Number.isInteger(value.u) ||
    (value.r !== undefined && !Number.isInteger(value.r)) ||
    !Number.isInteger(value.e)
  ) {
    return { problem: 'invalid' };
  }
  const expiresAt = new Date(value.e! * 1000);
  if (expiresAt <= now) return { problem: 'expired', incidentId: value.i! };
  return {
    capability: {
      action: 'acknowledge',
      incidentId: value.i!,
      userId: value.u!,
      ...(value.r !== undefined ? { round: value.r } : {}),
      expiresAt,
    },
  };
}
