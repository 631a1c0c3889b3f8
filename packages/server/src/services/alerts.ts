import type { Database } from '../db/database.ts';
import { notFound } from '../errors.ts';
import { findAlertById, listAlerts, type AlertRow } from '../repositories/alerts.ts';
import type { AlertStatus } from '../domain/alerts.ts';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from './incidents.ts';

/** Read access to alerts (they change only through the intake). */
export class AlertService {
  readonly #db: Database;

  constructor(deps: { db: Database }) {
    this.#db = deps.db;
  }

  /** Newest first; `archived` returns only archived alerts, otherwise only those not archived. */
  async list(query: { status?: AlertStatus; archived?: boolean; limit?: number }): Promise<AlertRow[]> {
    return listAlerts(this.#db, {
      ...(query.status !== undefined ? { status: query.status } : {}),
      archived: query.archived === true,
      limit: Math.min(query.limit ?? DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT),
    });
  }

  async get(id: number): Promise<AlertRow> {
    const alert = await findAlertById(this.#db, id);
    if (alert === undefined) throw notFound(`alert ${id}`);
    return alert;
  }
}
