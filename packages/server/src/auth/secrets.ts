import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new API key: 32 random bytes as 64 hex characters (api-contract.md). */
export function generateApiKey(): string {
  return randomBytes(32).toString('hex');
}

/**
 * What we store for an API key. A fast hash is enough here: the key has 256
 * bits of randomness, so there is nothing to brute-force (passwords, which
 * are guessable, use scrypt instead).
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Compares two secrets in constant time (for the lengths given), so timing reveals nothing. */
export function secretsEqual(given: string, expected: string): boolean {
  // Hash both first: equal-length inputs for timingSafeEqual, and the length
  // of the expected secret does not leak either.
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}
