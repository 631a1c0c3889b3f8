import { DEFAULT_AUDIT_LIMIT } from '@terdut/contract';
import type { Database, Queryable } from '../db/database.ts';
import type { Principal } from '../auth/principal.ts';
import { requireAdmin } from '../auth/principal.ts';
import { insertAuditRow, listAuditRows, type AuditRow } from '../repositories/audit.ts';

/**
 * Who did it: a signed-in principal (its user id is recorded), or a named
 * non-user actor such as `"bootstrap token"` or `"cli"`.
 */
export type AuditActor = Pick<Principal, 'userId' | 'username'> | { name: string };

/** One security-relevant event. `action` is a dotted verb such as `user.created`. */
export interface AuditEvent {
  actor: AuditActor;
  action: string;
  /** What it was done to, e.g. `user:7` or `api_key:12`. */
  target?: string;
  /** Facts worth keeping; never secrets. */
  detail?: Record<string, unknown>;
  clientAddress?: string;
}

/** The audit log: written inside the transaction of the change it records, read by admins. */
export class AuditService {
  readonly #db: Database;

  constructor(deps: { db: Database }) {
    this.#db = deps.db;
  }

  /**
   * Records `event` in `tx`, the transaction making the change, so the entry
   * exists exactly when the change does.
   *
   * @example await audit.record(tx, { actor: principal, action: 'user.deleted', target: `user:${id}` });
   */
  async record(tx: Queryable, event: AuditEvent): Promise<void> {
    const actor = event.actor;
    await insertAuditRow(tx, {
      actorUserId: 'userId' in actor ? actor.userId : null,
      actor: 'userId' in actor ? actor.username : actor.name,
      action: event.action,
      target: event.target ?? null,
      detail: event.detail ?? {},
      clientAddress: event.clientAddress ?? null,
    });
  }

  /** The newest entries first (admins only). */
  async list(principal: Principal, options: { limit?: number }): Promise<AuditRow[]> {
    requireAdmin(principal, 'read the audit log');
    return listAuditRows(this.#db, options.limit ?? DEFAULT_AUDIT_LIMIT);
  }
}
