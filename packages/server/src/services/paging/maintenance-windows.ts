import type { Database } from '../../db/database.ts';
import type { Clock } from '../../clock.ts';
import { requireAdmin, type Principal } from '../../auth/principal.ts';
import { badRequest, notFound } from '../../errors.ts';
import { instantField } from '../../instant.ts';
import {
  deleteWindow,
  insertWindow,
  listCurrentAndFutureWindows,
  type MaintenanceWindowRow,
} from '../../repositories/maintenance-windows.ts';
import type { AuditService } from '../audit.ts';
import { matchesAll, parseMatcher, parseMatcherToSave } from './matchers.ts';
import { makeDueNow, waitingEscalations } from '../../repositories/escalations.ts';

const MAX_WINDOW_MS = 31 * 24 * 3_600_000;

export interface WindowInput {
  starts_at: string;
  ends_at: string;
  matchers?: string[];
  reason: string;
}

/**
 * Maintenance windows: while one is in force, incidents whose labels match
 * are recorded but page nobody, and running escalations of such incidents
 * wait; at its end anything still open and unacknowledged pages from step 1.
 * Admins schedule and delete them (audited); everyone reads them.
 */
export class MaintenanceWindowService {
  readonly #db: Database;
  readonly #clock: Clock;
  readonly #audit: AuditService;

  constructor(deps: { db: Database; clock: Clock; audit: AuditService }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#audit = deps.audit;
  }

  /** Windows that have not ended yet, soonest first. */
  async list(): Promise<MaintenanceWindowRow[]> {
    return listCurrentAndFutureWindows(this.#db, this.#clock.now());
  }

  async create(
    principal: Principal,
    input: WindowInput,
    clientAddress: string,
  ): Promise<MaintenanceWindowRow> {
    requireAdmin(principal, 'schedule maintenance windows');
    const startsAt = instantField('starts_at', input.starts_at);
    const endsAt = instantField('ends_at', input.ends_at);
    if (endsAt <= startsAt) throw badRequest('field "ends_at" must be after "starts_at"');
    if (endsAt.getTime() - startsAt.getTime() > MAX_WINDOW_MS) {
      throw badRequest('field "ends_at": a window may last at most 31 days');
    }
    const now = this.#clock.now();
    if (endsAt <= now) throw badRequest('field "ends_at" is in the past');
    const reason = input.reason.trim();
    if (reason === '' || reason.length > 500) throw badRequest('field "reason" must be 1 to 500 characters');
    const matchers = input.matchers ?? [];
    matchers.forEach((text, index) => {
      try {
        parseMatcherToSave(text);
      } catch (error) {
        throw badRequest(`field "matchers.${index}": ${(error as Error).message}`);
      }
    });
    return this.#db.transaction(async (tx) => {
      const window = await insertWindow(
        tx,
        { starts_at: startsAt, ends_at: endsAt, matchers, reason, created_by: principal.userId },
        now,
      );
      // Running escalations the window matches are looked at again now, so
      // they pause at once. Only those: one made due fires its next step
      // (a window for other labels paged every running escalation's next
      // tier early).
      if (startsAt <= now) {
        const parsed = matchers.map(parseMatcher);
        const held = (await waitingEscalations(tx, now)).filter((escalation) =>
          matchesAll(parsed, escalation.labels),
        );
        await makeDueNow(
          tx,
          held.map((escalation) => escalation.incident_id),
          now,
        );
      }
      await this.#audit.record(tx, {
        actor: principal,
        action: 'maintenance_window.created',
        target: `maintenance_window:${window.id}`,
        detail: { starts_at: startsAt.toISOString(), ends_at: endsAt.toISOString(), matchers, reason },
        clientAddress,
      });
      return window;
    });
  }

  /** Deletes a window; held escalations are looked at again now (and resume from step 1). */
  async delete(principal: Principal, id: number, clientAddress: string): Promise<void> {
    requireAdmin(principal, 'delete maintenance windows');
    await this.#db.transaction(async (tx) => {
      const deleted = await deleteWindow(tx, id);
      if (deleted === undefined) throw notFound(`maintenance window ${id}`);
      await tx.query(`UPDATE escalations SET due_at = $1 WHERE state = 'paused' AND due_at = $2`, [
        this.#clock.now(),
        deleted.ends_at,
      ]);
      await this.#audit.record(tx, {
        actor: principal,
        action: 'maintenance_window.deleted',
        target: `maintenance_window:${id}`,
        detail: { reason: deleted.reason },
        clientAddress,
      });
    });
  }
}
