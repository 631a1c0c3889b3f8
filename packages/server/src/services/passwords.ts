import type { Database } from '../db/database.ts';
import type { Principal } from '../auth/principal.ts';
import type { AuditService } from './audit.ts';
import type { SessionService } from './sessions.ts';
import type { SignInAttempt, SignInThrottle } from './sign-in-throttle.ts';
import { requireSelfOrAdmin } from '../auth/principal.ts';
import { badRequest, forbidden, notFound } from '../errors.ts';
import { hashPassword, verifyPassword } from '../auth/password-hash.ts';
import { findPasswordHolderById, setPasswordHash } from '../repositories/passwords.ts';

/** Setting and changing passwords (`PUT /api/users/{id}/password`). */
export class PasswordService {
  readonly #db: Database;
  readonly #sessions: SessionService;
  readonly #throttle: SignInThrottle;
  readonly #audit: AuditService;

  constructor(deps: {
    db: Database;
    sessions: SessionService;
    throttle: SignInThrottle;
    audit: AuditService;
  }) {
    this.#db = deps.db;
    this.#sessions = deps.sessions;
    this.#throttle = deps.throttle;
    this.#audit = deps.audit;
  }

  /**
   * Sets user `userId`'s password. People changing their own existing
   * password must give the current one (400 missing, 403 wrong, rate limited
   * like sign-in, since a stolen session could otherwise guess it); admins
   * may set anyone's. Every other session of that user is revoked.
   */
  async setPassword(
    principal: Principal,
    userId: number,
    input: { password: string; currentPassword?: string; clientAddress: string },
  ): Promise<void> {
    requireSelfOrAdmin(principal, userId, 'set a password');
    // Length (MIN/MAX_PASSWORD_LENGTH) is the contract's PasswordBody rule, checked before we get here.
    const target = await findPasswordHolderById(this.#db, userId);
    if (!target) throw notFound(`user ${userId}`);

    const ownExisting = principal.userId === userId && target.password_hash !== null;
    let attempt: SignInAttempt | undefined;
    if (ownExisting) {
      if (input.currentPassword === undefined) {
        throw badRequest('field "current_password" is required to change your own password');
      }
      // Counted as a failure from here until the password proves right.
      attempt = await this.#throttle.admit(target.username, input.clientAddress);
      if (!(await verifyPassword(input.currentPassword, target.password_hash!))) {
        throw forbidden('current_password is wrong');
      }
    }

    const hash = await hashPassword(input.password);
    await this.#db.transaction(async (tx) => {
      if (attempt !== undefined) await this.#throttle.succeeded(tx, attempt);
      await setPasswordHash(tx, userId, hash);
      const keep = principal.userId === userId ? principal.sessionId : undefined;
      const revoked = await this.#sessions.revokeAllOf(tx, userId, keep);
      await this.#audit.record(tx, {
        actor: principal,
        action: 'user.password_changed',
        target: `user:${userId}`,
        detail: { sessions_revoked: revoked, by_admin: principal.userId !== userId },
        clientAddress: input.clientAddress,
      });
    });
  }
}
