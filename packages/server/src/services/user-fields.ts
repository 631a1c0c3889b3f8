import { badRequest } from '../errors.ts';

// Letters, digits and . _ @ - (so an email-like OIDC username fits), starting
// with a letter or digit. No ':' — service-account users are named
// `service:<name>`, so no person can ever take or shadow one.
const USERNAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
// Deliberately loose: one @, something on each side, a dot in the domain.
// Deliverability is the mail server's business, not ours.
/**
 * An address as a mail program takes it: the local part of letters, digits
 * and the characters RFC 5322 allows unquoted (no comma, angle bracket,
 * parenthesis or quote, which would make a list, a display name or a
 * comment of it), dots only between them; a domain of two or more labels,
 * letters of any script allowed (IDN).
 */
const EMAIL =
  /^[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+(?:\.[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+)*@(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?\.)+[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?$/u;

/** True when `value` has the form of a username (and so could name an account). */
export function isUsername(value: string): boolean {
  return USERNAME.test(value);
}

/** Checks a person's username; throws 400 naming `field`. */
export function parseUsername(value: string, field = 'username'): string {
  if (!USERNAME.test(value)) {
    throw badRequest(
      `field "${field}" must be 1-64 characters: letters, digits, ".", "_", "@" or "-", starting with a letter or digit`,
    );
  }
  return value;
}

/** Checks an email address (trimmed); throws 400 naming `field`. */
export function parseEmail(value: string, field = 'email'): string {
  const email = value.trim();
  if (email.length > 254 || !EMAIL.test(email)) {
    throw badRequest(`field "${field}" must be an email address like name@example.com`);
  }
  return email;
}

/** Checks the name of an API key (trimmed); throws 400 naming `field`. */
export function parseKeyName(value: string, field = 'name'): string {
  const name = value.trim();
  if (name.length === 0 || name.length > 100) {
    throw badRequest(`field "${field}" must be 1-100 characters`);
  }
  return name;
}

/**
 * The topic names every ntfy server keeps for its own paths (its
 * DefaultDisallowedTopics, compared exactly): it answers a publish to one
 * with 400 "topic name is not allowed", so every page there would fail.
 */
const NTFY_RESERVED_TOPICS = new Set([
  'docs',
  'static',
  'file',
  'app',
  'metrics',
  'account',
  'settings',
  'signup',
  'login',
  'v1',
]);

/**
 * An ntfy topic as stored: blank (after trimming) means "no topic" → null.
 * Topics are passed to ntfy as a path segment, so no whitespace or slashes;
 * a name ntfy keeps for itself is refused here rather than at every page.
 */
export function parseNtfyTopic(value: string, field = 'ntfy_topic'): string | null {
  const topic = value.trim();
  if (topic === '') return null;
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(topic)) {
    // Only the contract's ntfy_topic is cleared with ""; a contact method's topic is deleted with it.
    const clearing = field === 'ntfy_topic' ? ' (or "" to clear it)' : '';
    throw badRequest(`field "${field}" must be 1-64 characters: letters, digits, "_" or "-"${clearing}`);
  }
  if (NTFY_RESERVED_TOPICS.has(topic)) {
    throw badRequest(
      `field "${field}" is "${topic}", a name ntfy keeps for its own pages and refuses to publish to; ` +
        'choose another (an unguessable one: whoever knows the topic reads the pages)',
    );
  }
  return topic;
}
