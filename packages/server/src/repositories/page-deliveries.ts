import type { Queryable } from '../db/database.ts';

export type DeliveryPurpose = 'page' | 'resolved' | 'update' | 'summary' | 'handoff';
export type DeliveryState = 'pending' | 'sent' | 'failed' | 'cancelled' | 'folded';

export interface PageDeliveryRow {
  id: number;
  /** Null for handoff notices (purpose 'handoff'), which have `handoff_notice_id` instead. */
  incident_id: number | null;
  handoff_notice_id: number | null;
  purpose: DeliveryPurpose;
  round: number;
  step: number;
  repeat: number;
  user_id: number;
  contact_key: string;
  method_id: number | null;
  kind: string;
  target: string;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: Date;
  last_error: string | null;
  provider_message_id: string | null;
  created_at: Date;
  sent_at: Date | null;
}

const COLUMNS = `id, incident_id, handoff_notice_id, purpose, round, step, repeat, user_id, contact_key, method_id, kind, target,
  state, attempts, next_attempt_at, last_error, provider_message_id, created_at, sent_at`;

export interface NewDelivery {
  incident_id: number | null;
  handoff_notice_id?: number;
  purpose: DeliveryPurpose;
  round: number;
  step: number;
  repeat: number;
  user_id: number;
  contact_key: string;
  method_id: number | null;
  kind: string;
  target: string;
}

/**
 * Claims messages: a row whose unique key (incident, purpose, round, step,
 * repeat, person, contact) exists already is skipped, so however many
 * replicas decide the same page, one row (one send) results. Returns how
 * many rows were new.
 */
export async function insertDeliveries(
  tx: Queryable,
  deliveries: NewDelivery[],
  now: Date,
  options: { state?: 'pending' | 'folded'; dueAt?: Date } = {},
): Promise<number> {
  if (deliveries.length === 0) return 0;
  const result = await tx.query(
    `INSERT INTO page_deliveries
       (incident_id, handoff_notice_id, purpose, round, step, repeat, user_id, contact_key, method_id,
        kind, target, state, next_attempt_at, created_at)
     SELECT incident_id, handoff_notice_id, purpose, round, step, repeat, user_id, contact_key, method_id,
            kind, target, $3, $4, $2
       FROM jsonb_to_recordset($1::jsonb) AS x(incident_id bigint, handoff_notice_id bigint, purpose text,
            round int, step int,
            repeat int, user_id bigint, contact_key text, method_id bigint, kind text, target text)
     ON CONFLICT DO NOTHING`,
    [JSON.stringify(deliveries), now, options.state ?? 'pending', options.dueAt ?? now],
  );
  return result.rowCount;
}

/**
 * Claims up to `limit` due messages for one worker: each is leased for
 * `leaseMs` (its next attempt moves past the lease), so no other replica
 * takes it while it is being sent; after a crash it becomes due again.
 * SKIP LOCKED lets replicas claim disjoint rows without waiting.
 */
export async function claimDueDeliveries(
  tx: Queryable,
  now: Date,
  leaseMs: number,
  limit: number,
): Promise<PageDeliveryRow[]> {
  const result = await tx.query<PageDeliveryRow>(
    `UPDATE page_deliveries SET attempts = attempts + 1, next_attempt_at = $2
      WHERE id IN (SELECT id FROM page_deliveries
                    WHERE state = 'pending' AND next_attempt_at <= $1
                    ORDER BY next_attempt_at, id LIMIT $3 FOR UPDATE SKIP LOCKED)
      RETURNING ${COLUMNS}`,
    [now, new Date(now.getTime() + leaseMs), limit],
  );
  return result.rows.sort((a, b) => a.id - b.id);
}

/**
 * Moves the lease of claim number `attempts` of delivery `id` on to `until`,
 * while its sender is still at it; nothing when the row was claimed again,
 * recorded, or already leased longer.
 */
export async function renewLease(db: Queryable, id: number, attempts: number, until: Date): Promise<void> {
  await db.query(
    `UPDATE page_deliveries SET next_attempt_at = $3
      WHERE id = $1 AND attempts = $2 AND state = 'pending' AND next_attempt_at < $3`,
    [id, attempts, until],
  );
}

/** Records an accepted message. */
export async function markSent(
  tx: Queryable,
  id: number,
  providerMessageId: string | null,
  now: Date,
): Promise<void> {
  await tx.query(
    `UPDATE page_deliveries SET state = 'sent', sent_at = $2, provider_message_id = $3, last_error = NULL
      WHERE id = $1`,
    [id, now, providerMessageId],
  );
}

/** Schedules another attempt after a transient failure. */
export async function scheduleRetry(tx: Queryable, id: number, at: Date, error: string): Promise<void> {
  await tx.query(
    `UPDATE page_deliveries SET next_attempt_at = $2, last_error = $3 WHERE id = $1 AND state = 'pending'`,
    [id, at, error],
  );
}

/**
 * Fails a message still pending; false when it is no longer (its incident
 * was acknowledged or resolved while it was being sent, and it stays cancelled).
 */
export async function markFailed(tx: Queryable, id: number, error: string): Promise<boolean> {
  const result = await tx.query(
    `UPDATE page_deliveries SET state = 'failed', last_error = $2 WHERE id = $1 AND state = 'pending'`,
    [id, error],
  );
  return result.rowCount > 0;
}

/** Cancels the incident's pages not yet sent (acknowledged, snoozed, resolved). */
export async function cancelPendingPages(tx: Queryable, incidentId: number): Promise<number> {
  const result = await tx.query(
    `UPDATE page_deliveries SET state = 'cancelled' WHERE incident_id = $1 AND purpose = 'page' AND state = 'pending'`,
    [incidentId],
  );
  return result.rowCount;
}

/** Everyone (person and contact) who received a page for the incident. */
export async function pagedContacts(
  tx: Queryable,
  incidentId: number,
): Promise<Pick<PageDeliveryRow, 'user_id' | 'contact_key' | 'method_id' | 'kind' | 'target'>[]> {
  const result = await tx.query<
    Pick<PageDeliveryRow, 'user_id' | 'contact_key' | 'method_id' | 'kind' | 'target'>
  >(
    `SELECT DISTINCT ON (user_id, contact_key) user_id, contact_key, method_id, kind, target
       FROM page_deliveries WHERE incident_id = $1 AND purpose = 'page' AND state = 'sent'
      ORDER BY user_id, contact_key, id`,
    [incidentId],
  );
  return result.rows;
}

/** Whether any message of this step is still pending or was delivered. */
export async function stepHasLiveDelivery(
  tx: Queryable,
  delivery: Pick<PageDeliveryRow, 'incident_id' | 'round' | 'step' | 'repeat'>,
): Promise<boolean> {
  const result = await tx.query<{ live: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM page_deliveries
                     WHERE incident_id = $1 AND purpose = 'page' AND round = $2 AND step = $3 AND repeat = $4
                       AND state IN ('pending', 'sent')) AS live`,
    [delivery.incident_id, delivery.round, delivery.step, delivery.repeat],
  );
  return result.rows[0]?.live === true;
}

export async function listDeliveriesOfIncident(
  db: Queryable,
  incidentId: number,
): Promise<PageDeliveryRow[]> {
  const result = await db.query<PageDeliveryRow>(
    `SELECT ${COLUMNS} FROM page_deliveries WHERE incident_id = $1 ORDER BY id`,
    [incidentId],
  );
  return result.rows;
}

/** Messages waiting to be sent and the age of the oldest (for the outbox metrics). */
export async function outboxDepth(
  db: Queryable,
  now: Date,
): Promise<{ depth: number; oldestAgeSeconds: number }> {
  const result = await db.query<{ depth: number; oldest: Date | null }>(
    `SELECT count(*)::int AS depth, min(created_at) AS oldest FROM page_deliveries WHERE state = 'pending'`,
  );
  const row = result.rows[0]!;
  return {
    depth: row.depth,
    oldestAgeSeconds:
      row.oldest === null ? 0 : Math.max(0, (now.getTime() - new Date(row.oldest).getTime()) / 1000),
  };
}

/**
 * Incidents the person was paged for since `since` (folded ones included:
 * they count toward the storm). Call under lockPersonForPaging.
 */
export async function countRecentPagedIncidents(tx: Queryable, userId: number, since: Date): Promise<number> {
  const result = await tx.query<{ count: number }>(
    `SELECT count(DISTINCT incident_id)::int AS count FROM page_deliveries
      WHERE user_id = $1 AND purpose = 'page' AND created_at > $2 AND state <> 'cancelled'`,
    [userId, since],
  );
  return result.rows[0]!.count;
}

/** Serialises storm decisions for one person across replicas until the transaction ends. */
export async function lockPersonForPaging(tx: Queryable, userId: number): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('terdut-paging-person:' || $1::text, 0))`, [
    userId,
  ]);
}

/** An incident a summary lists; `missed_heartbeat`: opened because a heartbeat went silent. */
export interface FoldedIncident {
  id: number;
  title: string;
  severity: string | null;
  missed_heartbeat: boolean;
}

/** Open incidents whose pages to this contact were folded in [from, to), oldest first. */
export async function foldedIncidents(
  db: Queryable,
  userId: number,
  contactKey: string,
  from: Date,
  to: Date,
): Promise<FoldedIncident[]> {
  const result = await db.query<FoldedIncident>(
    `SELECT DISTINCT i.id, i.title, i.severity, i.group_key LIKE 'heartbeat:%' AS missed_heartbeat
       FROM page_deliveries d JOIN incidents i ON i.id = d.incident_id
      WHERE d.user_id = $1 AND d.contact_key = $2 AND d.state = 'folded' AND d.created_at >= $3 AND d.created_at < $4
        AND i.status = 'triggered'
      ORDER BY i.id`,
    [userId, contactKey, from, to],
  );
  return result.rows;
}

export async function markCancelled(tx: Queryable, id: number, reason: string): Promise<void> {
  await tx.query(`UPDATE page_deliveries SET state = 'cancelled', last_error = $2 WHERE id = $1`, [
    id,
    reason,
  ]);
}
