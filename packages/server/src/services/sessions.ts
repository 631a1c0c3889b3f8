import { createHash, randomBytes } from 'node:crypto';
import type { Database, Queryable } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Principal } from '../auth/principal.ts';
import {
  deleteEndedSessionsOfUser,
  findLiveSession,
  insertSession,
  revokeSession,
  revokeSessionsOfUser,
  touchSession,
} from '../repositories/sessions.ts';

/** A session just started: what goes into the browser's cookies. */
export interface StartedSession {
  /** The session cookie's value (32 random bytes). Only its hash is stored. */
  cookieValue: string;
  /** The CSRF token (double-submit: a readable cookie echoed in X-CSRF-Token). */
  csrfToken: string;
}

// The sliding expiry moves with use, but writing last_seen_at on every
// request would turn every read into a write; a minute of slack is harmless
// against a TTL of hours.
const LAST_SEEN_PRECISION_MS = 60_000;

/** The stored id of a session: SHA-256 of the cookie value (a database leak yields no usable cookie). */
export function sessionIdOf(cookieValue: string): string {
  return createHash('sha256').update(cookieValue, 'utf8').digest('hex');
}

/**
 * The CSRF token that belongs to a session cookie. Derived, not stored: only
 * someone who can read the session cookie can compute it, and a cross-site
 * page can read neither cookie, so it cannot send the matching header.
 */
export function csrfTokenOf(cookieValue: string): string {
  return createHash('sha256').update(`terdut-csrf\0${cookieValue}`, 'utf8').digest('base64url');
}

/** Browser sessions in the database: started at sign-in, found on each request, revoked at will. */
export class SessionService {
  readonly #db: Database;
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #maxAgeMs: number;

  constructor(deps: {
    db: Database;
    clock: Clock;
    config: { sessionTtlMs: number; sessionMaxAgeMs: number };
  }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#ttlMs = deps.config.sessionTtlMs;
    this.#maxAgeMs = deps.config.sessionMaxAgeMs;
  }

  /** Starts a session for `userId` inside `tx` (the sign-in's transaction). */
  async start(tx: Queryable, userId: number, method: 'password' | 'oidc'): Promise<StartedSession> {
    const cookieValue = randomBytes(32).toString('base64url');
    const now = this.#clock.now();
    // Housekeeping: this user's sessions that ended long ago (idle or
    // revoked for two TTLs) go; recent ones stay for anyone looking into a
    // sign-in problem.
    await deleteEndedSessionsOfUser(tx, userId, new Date(now.getTime() - 2 * this.#ttlMs));
    await insertSession(tx, { id: sessionIdOf(cookieValue), userId, method, now });
    return { cookieValue, csrfToken: csrfTokenOf(cookieValue) };
  }

  /**
   * The principal behind a session cookie, or undefined when the session is
   * unknown, revoked, idle longer than the TTL, older than the maximum age
   * (a session used every day would otherwise last for good: someone removed
   * at the OIDC provider would keep it), or its user was deleted.
   */
  async authenticate(cookieValue: string): Promise<Principal | undefined> {
    if (!/^[\w-]{43}$/.test(cookieValue)) return undefined;
    const now = this.#clock.now();
    const id = sessionIdOf(cookieValue);
    const owner = await findLiveSession(this.#db, id, {
      idleSince: new Date(now.getTime() - this.#ttlMs),
      startedSince: new Date(now.getTime() - this.#maxAgeMs),
    });
    if (!owner) return undefined;
    const staleBefore = new Date(now.getTime() - LAST_SEEN_PRECISION_MS);
    if (new Date(owner.last_seen_at) < staleBefore) await touchSession(this.#db, id, now, staleBefore);
    return {
      userId: owner.user_id,
      username: owner.username,
      role: owner.role,
      kind: owner.kind,
      via: 'session',
      sessionId: id,
    };
  }

  /** Ends the session behind a cookie (sign-out). Unknown cookies are ignored. */
  async end(cookieValue: string): Promise<void> {
    await revokeSession(this.#db, sessionIdOf(cookieValue), this.#clock.now());
  }

  /**
   * Revokes every session of `userId` inside `tx` (password changed), except
   * `keepSessionId`: people changing their own password stay signed in where
   * they did it, and everywhere else is signed out.
   */
  async revokeAllOf(tx: Queryable, userId: number, keepSessionId?: string): Promise<number> {
    return revokeSessionsOfUser(tx, userId, this.#clock.now(), keepSessionId);
  }
}
