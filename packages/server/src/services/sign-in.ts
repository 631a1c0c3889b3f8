import { createHmac } from 'node:crypto';
import type { Database } from '../db/database.ts';
import type { AuditService } from './audit.ts';
import type { SessionService, StartedSession } from './sessions.ts';
import type { SignInThrottle } from './sign-in-throttle.ts';
import type { BootstrapGate } from './bootstrap-gate.ts';
import type { Clock } from '../clock.ts';
import { KnownDevices } from './known-devices.ts';
import { forbidden, unauthorized } from '../errors.ts';
import { dummyPasswordHash, verifyPassword } from '../auth/password-hash.ts';
import { findPasswordHolderByUsername } from '../repositories/passwords.ts';
import { findUserById, type UserRow } from '../repositories/users.ts';
import { isUsername } from './user-fields.ts';
import { keptInstanceSecret, purposeKey } from '../repositories/instance-secrets.ts';

/** The answer every sign-in gives before the instance is bootstrapped (bootstrap-protocol.md). */
export const NOT_SET_UP_MESSAGE = 'this server has not been set up yet';

/** Throws 403 "not set up" unless the instance is bootstrapped; shared by every way of signing in. */
export async function requireBootstrapped(gate: BootstrapGate): Promise<void> {
  if (!(await gate.isBootstrapped())) throw forbidden(NOT_SET_UP_MESSAGE);
}

/** Password sign-in and sign-out. */
export class SignInService {
  readonly #db: Database;
  readonly #sessions: SessionService;
  readonly #throttle: SignInThrottle;
  readonly #audit: AuditService;
  readonly #bootstrap: BootstrapGate;
  readonly #knownDevices: KnownDevices;
  readonly #typedNameKey: () => Promise<string>;

  constructor(deps: {
    db: Database;
    clock: Clock;
    sessions: SessionService;
    throttle: SignInThrottle;
    audit: AuditService;
    bootstrap: BootstrapGate;
  }) {
    this.#db = deps.db;
    this.#sessions = deps.sessions;
    this.#throttle = deps.throttle;
    this.#audit = deps.audit;
    this.#bootstrap = deps.bootstrap;
    this.#knownDevices = new KnownDevices(deps);
    this.#typedNameKey = keptInstanceSecret(deps.db, 'cookie_signing', (secret) =>
      purposeKey(secret, 'terdut typed usernames v1'),
    );
  }

  /**
   * Checks a username and password and starts a session. 403 before
   * bootstrap (nothing written), 429 when rate limited, 401 for a wrong
   * username or password (the same message and, thanks to the dummy hash,
   * the same time whether or not the user exists). `knownDevice` is the
   * browser's cookie from an earlier sign-in (services/known-devices.ts): its
   * failures are counted for it rather than for the username. A success
   * answers the cookie to give the browser now.
   */
  async signInWithPassword(input: {
    username: string;
    password: string;
    clientAddress: string;
    knownDevice?: string;
  }): Promise<{ user: UserRow; session: StartedSession; knownDevice: string }> {
    await requireBootstrapped(this.#bootstrap);
    const device = await this.#knownDevices.recognise(input.knownDevice, input.username);
    // Counted as a failure from here until the password proves right.
    const attempt = await this.#throttle.admit(input.username, input.clientAddress, device);

    // Only a name of a username's form can name an account: the database folds case with its
    // locale (lower('İ') is 'i'), the throttle with JavaScript's ('İ' becomes 'i' and a combining
    // dot), so "lİli" found lili's account with a budget of guesses of its own.
    const holder = isUsername(input.username)
      ? await findPasswordHolderByUsername(this.#db, input.username)
      : undefined;
    const storedHash = holder?.password_hash ?? (await dummyPasswordHash());
    const matches = await verifyPassword(input.password, storedHash);

    if (!holder || holder.password_hash === null || !matches) {
      // Before the transaction: the key may need a read of its own (one connection on PGlite).
      const typedName = holder ? undefined : await this.#typedNameDigest(input.username);
      await this.#db.transaction(async (tx) => {
        await this.#audit.record(tx, {
          actor: { name: 'anonymous' },
          action: 'sign_in.failed',
          target: holder ? `user:${holder.id}` : undefined,
          // The account's own name, never the text typed: a password typed into the
          // username field would sit in the audit log. An unknown name is kept as a
          // digest, enough to see one name tried again and again.
          detail: holder
            ? { method: 'password', username: holder.username }
            : { method: 'password', unknown_username_sha256: typedName },
          clientAddress: input.clientAddress,
        });
      });
      throw unauthorized('wrong username or password');
    }

    const knownDevice = await this.#knownDevices.issue(holder.username, device);
    return this.#db.transaction(async (tx) => {
      await this.#throttle.succeeded(tx, attempt);
      await this.#throttle.recordSuccess(tx, attempt);
      const session = await this.#sessions.start(tx, holder.id, 'password');
      await this.#audit.record(tx, {
        actor: { userId: holder.id, username: holder.username },
        action: 'sign_in',
        target: `user:${holder.id}`,
        detail: { method: 'password' },
        clientAddress: input.clientAddress,
      });
      const user = await findUserById(tx, holder.id);
      return { user: user!, session, knownDevice };
    });
  }

  /** Ends the session behind the cookie, if any. Always succeeds (signing out twice is fine). */
  async signOut(sessionCookie: string | undefined): Promise<void> {
    if (sessionCookie !== undefined) await this.#sessions.end(sessionCookie);
  }

  /**
   * The first 16 hex digits of an HMAC-SHA256 of a typed username, in lower
   * case (names are case-insensitive), keyed with a key derived from the
   * instance's secret: the same name always gives the same digest, but
   * whoever reads the audit log cannot check a guess (a password typed into
   * the username field) against it, as a plain SHA-256 would let them.
   */
  async #typedNameDigest(typed: string): Promise<string> {
    const key = await this.#typedNameKey();
    return createHmac('sha256', key).update(typed.toLowerCase(), 'utf8').digest('hex').slice(0, 16);
  }
}
