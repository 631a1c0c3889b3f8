import type { Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import { deleteIncidentsResolvedBefore } from '../repositories/incidents.ts';
import { deleteUnreferencedAlerts } from '../repositories/alerts.ts';

// Any constant works; it only has to be the same for every replica.
const RETENTION_LOCK_KEY = 7_362_300;
const BATCH = 1000;
/** Alerts per batch: each deleted alert costs about 0.1 ms of triggers and foreign keys. */
const ALERT_BATCH = 5000;

export interface PruneResult {
  /** False when another replica was pruning; nothing was done here. */
  ran: boolean;
  incidents: number;
  alerts: number;
}

/**
 * Deletes resolved incidents older than the retention (by `resolved_at`),
 * with their timelines, and the alerts no incident refers to any more.
 * One replica at a time: the others find the lock taken and skip.
 */
export class RetentionService {
  readonly #db: Database;
  readonly #clock: Clock;
  readonly #retentionMs: number;

  constructor(deps: { db: Database; clock: Clock; config: { retentionMs: number } }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#retentionMs = deps.config.retentionMs;
  }

  async prune(): Promise<PruneResult> {
    const cutoff = new Date(this.#clock.now().getTime() - this.#retentionMs);
    const result: PruneResult = { ran: true, incidents: 0, alerts: 0 };
    // Batches in short transactions, so a large first prune does not hold
    // locks (or one huge transaction) for long, nor outlast the statement
    // timeout: incidents first, then the alerts they leave behind.
    for (;;) {
      const batch = await this.#db.transaction(async (tx) => {
        const locked = await tx.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [
          RETENTION_LOCK_KEY,
        ]);
        if (locked.rows[0]?.locked !== true) return undefined;
        const incidents = await deleteIncidentsResolvedBefore(tx, cutoff, BATCH);
        const alerts = incidents < BATCH ? await deleteUnreferencedAlerts(tx, cutoff, ALERT_BATCH) : 0;
        return { incidents, alerts };
      });
      if (batch === undefined) return { ...result, ran: result.incidents > 0 };
      result.incidents += batch.incidents;
      result.alerts += batch.alerts;
      if (batch.incidents < BATCH && batch.alerts < ALERT_BATCH) return result;
    }
  }
}
