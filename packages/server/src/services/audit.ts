import { DEFAULT_AUDIT_LIMIT } from '@terdut/contract';
import type { Database, Queryable } from '../db/database.ts';
import type { Principal } from '../auth/principal.ts';
import { requireAdmin } from '../auth/principal.ts';
import { badRequest } from '../errors.ts';
import {
  countIntoThisMinutesRow,
  insertAuditRow,
  listAuditRows,
  type AuditRow,
  type NewAuditRow,
} from '../repositories/audit.ts';

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
    await insertAuditRow(tx, rowOf(event));
  }

  /**
   * Records an event anyone can cause over and over (a refused bootstrap
   * attempt) as one row per action, address and detail per minute, whose
   * `detail.count` says how many there were: a flood cannot fill the table.
   */
  async recordRepeated(db: Queryable, event: AuditEvent): Promise<void> {
    const row = rowOf(event);
    if (await countIntoThisMinutesRow(db, row)) return;
    await insertAuditRow(db, { ...row, detail: { ...row.detail, count: 1 } });
  }

  /** The newest entries first, or those older than entry `before` (admins only). */
  async list(principal: Principal, options: { limit?: number; before?: number }): Promise<AuditRow[]> {
    requireAdmin(principal, 'read the audit log');
    const rows = await listAuditRows(this.#db, options.limit ?? DEFAULT_AUDIT_LIMIT, options.before);
    if (rows === undefined) {
      throw badRequest(
        `query field "before" (${options.before}) is not the id of an audit entry; page with the last id of the page before`,
      );
    }
    return rows;
  }
}

function rowOf(event: AuditEvent): NewAuditRow {
  const actor = event.actor;
  return {
    actorUserId: 'userId' in actor ? actor.userId : null,
    actor: 'userId' in actor ? actor.username : actor.name,
    action: event.action,
    target: event.target ?? null,
    detail: event.detail ?? {},
    clientAddress: event.clientAddress ?? null,
  };
}
