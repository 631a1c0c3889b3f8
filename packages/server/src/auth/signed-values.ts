import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * A JSON value with an HMAC-SHA256 signature, for state a browser carries
 * for us (the OIDC flow cookie): it can hold it, not forge or alter it.
 *
 * @example const text = signValue({ a: 1 }, key); readSignedValue(text, key) // { a: 1 }
 */
export function signValue(value: unknown, key: string): string {
  const body = Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
  return `${body}.${mac(body, key)}`;
}

/** The value inside a signValue result, or undefined when the text is malformed or the signature is wrong. */
export function readSignedValue(text: string, key: string): unknown {
  const dot = text.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const body = text.slice(0, dot);
  // The signature's TEXT is compared, not its decoded bytes: base64url lets
  // several spellings decode to the same bytes (the last character carries
  // unused bits), and a signed value must be accepted in exactly the one
  // spelling we issued, or a "changed" link would still work.
  const given = Buffer.from(text.slice(dot + 1), 'utf8');
  const expected = Buffer.from(mac(body, key), 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function mac(body: string, key: string): string {
  return createHmac('sha256', key).update(body).digest('base64url');
}
