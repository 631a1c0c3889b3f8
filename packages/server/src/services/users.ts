import type { Database } from '../db/database.ts';
import type { Principal } from '../auth/principal.ts';
import { requireAdmin, requireSelfOrAdmin } from '../auth/principal.ts';
import { conflict, notFound, unauthorized } from '../errors.ts';
import { isUniqueViolation } from '../db/unique-violation.ts';
import {
  findPersonById,
  findUserById,
  insertUser,
  listPeople,
  lockLiveAdminIds,
  setNtfyTopic,
  setRole,
  softDeleteUser,
  type UserRow,
} from '../repositories/users.ts';
import { deleteKeysOfUser } from '../repositories/api-keys.ts';
import { revokeSessionsOfUser } from '../repositories/sessions.ts';
import { deleteFeed, personFeedCreatedAt } from '../repositories/schedules.ts';
import type { AuditService } from './audit.ts';
import type { SchedulesService } from './schedules.ts';
import type { CredentialsChanged } from './api-key-cache.ts';
import { parseEmail, parseNtfyTopic, parseUsername } from './user-fields.ts';

export type Role = 'admin' | 'member';

/** People: who they are, their role and notification topic. Admins manage everyone; members themselves. */
export class UserService {
  readonly #db: Database;
  readonly #audit: AuditService;
  readonly #credentialsChanged: CredentialsChanged;
  readonly #schedules: Pick<SchedulesService, 'changeOfPerson'>;

  /** `schedules`: deleting someone on call now is a change of who is on call (handoff notices). */
  constructor(deps: {
    db: Database;
    audit: AuditService;
    credentialsChanged: CredentialsChanged;
    schedules: Pick<SchedulesService, 'changeOfPerson'>;
  }) {
    this.#db = deps.db;
    this.#audit = deps.audit;
    this.#credentialsChanged = deps.credentialsChanged;
    this.#schedules = deps.schedules;
  }

  /** The caller's own user (a person or a service account). */
  async me(principal: Principal): Promise<{ user: UserRow; calendarFeedCreatedAt: Date | undefined }> {
    const user = await findUserById(this.#db, principal.userId);
    // Deleted between authentication and now: the credentials are no longer good.
    if (!user) throw unauthorized('this user has been deleted');
    return { user, calendarFeedCreatedAt: await personFeedCreatedAt(this.#db, user.id) };
  }

  /**
   * Every live person (not service accounts), newest first. Anyone may list,
   * e.g. to assign work; but a person's ntfy topic is a contact method, and
   * whoever reads the topic reads their pages and can press Acknowledge as
   * them, so members see only their own (as with contact methods).
   */
  async list(principal: Principal): Promise<UserRow[]> {
    const people = await listPeople(this.#db);
    if (principal.role === 'admin') return people;
    return people.map((user) => (user.id === principal.userId ? user : { ...user, ntfy_topic: null }));
  }

  /** Creates a person (admins only); 409 when the username is taken by a live user. */
  async create(
    principal: Principal,
    input: { username: string; email: string; role?: Role },
    clientAddress: string,
  ): Promise<UserRow> {
    requireAdmin(principal, 'create users');
    const username = parseUsername(input.username);
    const email = parseEmail(input.email);
    const role = input.role ?? 'member';
    try {
      return await this.#db.transaction(async (tx) => {
        const user = await insertUser(tx, { username, email, role });
        await this.#audit.record(tx, {
          actor: principal,
          action: 'user.created',
          target: `user:${user.id}`,
          detail: { username, role },
          clientAddress,
        });
        return user;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict(`username "${username}" is taken`);
      throw error;
    }
  }

  /**
   * Soft-deletes a person, deletes their API keys and revokes their sessions (admins only). Refused
   * with 409 for yourself and for the last admin, so an instance cannot be
   * left without anyone able to manage it. Whoever is on call now in their
   * place (a layer below, another's override) is told their shift started.
   */
  async delete(principal: Principal, id: number, clientAddress: string): Promise<void> {
    requireAdmin(principal, 'delete users');
    if (id === principal.userId) throw conflict('you cannot delete yourself; ask another admin');
    // Their shifts fall through and their overrides vanish, so who is on call
    // now may move without a schedule being edited: the schedules service
    // locks the schedules that name them and tells whoever takes over, in
    // this transaction. They themselves are not told: paging sends nothing
    // to a deleted person.
    await this.#schedules.changeOfPerson(id, async (tx, now) => {
      const admins = await lockLiveAdminIds(tx);
      const user = await findPersonById(tx, id);
      if (!user) throw notFound(`user ${id}`);
      if (user.role === 'admin' && admins.length <= 1) {
        throw conflict('this is the last admin; make another user admin first');
      }
      await softDeleteUser(tx, id, now);
      const keys = await deleteKeysOfUser(tx, id);
      // Revoked, not just hidden behind deleted_at: a later recovery that
      // restores this user must not bring old browser sessions back to life.
      const sessions = await revokeSessionsOfUser(tx, id, now);
      // Their calendar feed's URL is a credential too, and a recovery must not revive it either.
      await deleteFeed(tx, { userId: id });
      await this.#audit.record(tx, {
        actor: principal,
        action: 'user.deleted',
        target: `user:${id}`,
        detail: { username: user.username, api_keys_deleted: keys, sessions_revoked: sessions },
        clientAddress,
      });
    });
    this.#credentialsChanged();
  }

  /**
   * Sets or clears (`""`) a person's ntfy topic: your own, or anyone's as an
   * admin. Audited like contact methods, without the topic (a credential).
   */
  async setNotifyTopic(
    principal: Principal,
    id: number,
    topicText: string,
    clientAddress: string,
  ): Promise<UserRow> {
    requireSelfOrAdmin(principal, id, 'set the notification topic');
    const topic = parseNtfyTopic(topicText);
    const existing = await findPersonById(this.#db, id);
    if (!existing) throw notFound(`user ${id}`);
    return this.#db.transaction(async (tx) => {
      const user = await setNtfyTopic(tx, id, topic);
      if (!user) throw notFound(`user ${id}`);
      await this.#audit.record(tx, {
        actor: principal,
        action: topic === null ? 'user.ntfy_topic_cleared' : 'user.ntfy_topic_set',
        target: `user:${id}`,
        detail: { username: user.username },
        clientAddress,
      });
      return user;
    });
  }

  /** Makes a person admin or member (admins only); the last admin cannot be demoted (409). */
  async setRole(principal: Principal, id: number, role: Role, clientAddress: string): Promise<UserRow> {
    requireAdmin(principal, 'change roles');
    const changed = await this.#db.transaction(async (tx) => {
      const admins = await lockLiveAdminIds(tx);
      const user = await findPersonById(tx, id);
      if (!user) throw notFound(`user ${id}`);
      if (user.role === role) return user;
      if (user.role === 'admin' && admins.length <= 1) {
        throw conflict('this is the last admin; make another user admin first');
      }
      const updated = (await setRole(tx, id, role))!;
      await this.#audit.record(tx, {
        actor: principal,
        action: 'user.role_changed',
        target: `user:${id}`,
        detail: { username: user.username, from: user.role, to: role },
        clientAddress,
      });
      return updated;
    });
    this.#credentialsChanged();
    return changed;
  }
}
