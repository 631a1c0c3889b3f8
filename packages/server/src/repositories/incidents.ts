import type { Queryable } from '../db/database.ts';

export type IncidentStatus = 'triggered' | 'acknowledged' | 'resolved';
export type IncidentResolutionSource = 'alerts' | 'manual';

export interface IncidentRow {
  id: number;
  group_key: string;
  title: string;
  group_labels: Record<string, string>;
  status: IncidentStatus;
  severity: string | null;
  severity_rank: number;
  triggered_at: Date;
  acknowledged_by: number | null;
  /** Username of `acknowledged_by`, kept after the user is deleted. */
  acknowledged_by_username: string | null;
  acknowledged_at: Date | null;
  assigned_to: number | null;
  assigned_to_username: string | null;
  snoozed_until: Date | null;
  resolved_at: Date | null;
  resolution_source: IncidentResolutionSource | null;
  archived_at: Date | null;
}

/** An incident as the API answers with it. */
export interface CountedIncidentRow extends IncidentRow {
  /**
   * Its rows of incident_alerts: every alert that joined it, firing or
   * resolved, also one that fired again into a newer incident since.
   */
  alert_count: number;
}

// Users are soft-deleted, so the joins find the names of deleted users too.
const INCIDENT_COLUMNS = `
  SELECT i.id, i.group_key, i.title, i.group_labels, i.status, i.severity, i.severity_rank, i.triggered_at,
         i.acknowledged_by, ack.username AS acknowledged_by_username, i.acknowledged_at,
         i.assigned_to, asg.username AS assigned_to_username, i.snoozed_until,
         i.resolved_at, i.resolution_source, i.archived_at`;
const WITH_USERNAMES = `
    LEFT JOIN users ack ON ack.id = i.acknowledged_by
    LEFT JOIN users asg ON asg.id = i.assigned_to`;
const SELECT_INCIDENT = `${INCIDENT_COLUMNS} FROM incidents i ${WITH_USERNAMES}`;

/**
 * The incident's SELECT (alias `i`) with more columns and joins, for a
 * repository that reads an incident with a row of its own in one statement.
 */
export function selectIncidentWith(columns: string, joins: string): string {
  return `${INCIDENT_COLUMNS}, ${columns} FROM incidents i ${WITH_USERNAMES} ${joins}`;
}

/**
 * Serialises every writer of one alert group (intake, staleness sweep) across
 * all replicas until the transaction ends. Must run inside a transaction.
 */
export async function lockIncidentGroup(tx: Queryable, groupKey: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [groupKey]);
}

/** Like lockIncidentGroup, but gives up at once (false) when someone else holds the group. */
export async function tryLockIncidentGroup(tx: Queryable, groupKey: string): Promise<boolean> {
  const result = await tx.query<{ locked: boolean }>(
    'SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked',
    [groupKey],
  );
  return result.rows[0]?.locked === true;
}

// Rows are locked FOR NO KEY UPDATE (what an UPDATE that keeps the id takes
// anyway), not FOR UPDATE: inserting an event or alert link that references
// the incident takes a KEY SHARE lock on it, which FOR UPDATE would block,
// e.g. archiving an incident while a notification records an alert of it.

/** The group's open (not resolved) incident, locked. */
export async function lockOpenIncidentOfGroup(
  tx: Queryable,
  groupKey: string,
): Promise<IncidentRow | undefined> {
  const result = await tx.query<IncidentRow>(
    `${SELECT_INCIDENT} WHERE i.group_key = $1 AND i.status <> 'resolved' FOR NO KEY UPDATE OF i`,
    [groupKey],
  );
  return result.rows[0];
}

export interface NewIncident {
  group_key: string;
  title: string;
  group_labels: Record<string, string>;
  triggered_at: Date;
  /** The detail of its `triggered` timeline event, recorded with it. */
  triggered_detail: string;
}

/**
 * Opens an incident with its `triggered` event, in one statement. A second
 * open incident of the same group violates `incidents_one_open_per_group`.
 */
export async function insertIncident(tx: Queryable, incident: NewIncident): Promise<IncidentRow> {
  // One round trip: the row comes back as every other read returns it.
  const result = await tx.query<IncidentRow>(
    `WITH i AS (INSERT INTO incidents (group_key, title, group_labels, triggered_at)
                VALUES ($1, $2, $3, $4) RETURNING *),
          triggered AS (INSERT INTO incident_events (incident_id, type, detail, created_at)
                        SELECT id, 'triggered', $5, $4 FROM i)
     ${INCIDENT_COLUMNS} FROM i ${WITH_USERNAMES}`,
    [
      incident.group_key,
      incident.title,
      JSON.stringify(incident.group_labels),
      incident.triggered_at,
      incident.triggered_detail,
    ],
  );
  return result.rows[0]!;
}

export async function findIncidentById(db: Queryable, id: number): Promise<IncidentRow | undefined> {
  const result = await db.query<IncidentRow>(`${SELECT_INCIDENT} WHERE i.id = $1`, [id]);
  return result.rows[0];
}

// Counted by the primary key of incident_alerts (incident_id, alert_id), an
// index-only scan. Only for answers: the intake and the paging read
// incidents far more often than people do, and need no count.
const ALERT_COUNT = `(SELECT count(*) FROM incident_alerts ia WHERE ia.incident_id = i.id)::integer`;

/** How many alerts joined the incident (CountedIncidentRow's `alert_count`). */
export async function countAlertsOfIncident(db: Queryable, id: number): Promise<number> {
  const result = await db.query<{ alert_count: number }>(
    'SELECT count(*)::integer AS alert_count FROM incident_alerts WHERE incident_id = $1',
    [id],
  );
  return result.rows[0]!.alert_count;
}

/** One incident, locked until the transaction ends. */
export async function lockIncidentById(tx: Queryable, id: number): Promise<IncidentRow | undefined> {
  const result = await tx.query<IncidentRow>(`${SELECT_INCIDENT} WHERE i.id = $1 FOR NO KEY UPDATE OF i`, [
    id,
  ]);
  return result.rows[0];
}

/** The columns a service may change. */
export interface IncidentChanges {
  status?: IncidentStatus;
  severity?: string;
  severity_rank?: number;
  acknowledged_by?: number | null;
  acknowledged_at?: Date | null;
  assigned_to?: number | null;
  snoozed_until?: Date | null;
  resolved_at?: Date | null;
  resolution_source?: IncidentResolutionSource | null;
  archived_at?: Date | null;
}

const CHANGEABLE: readonly (keyof IncidentChanges)[] = [
  'status',
  'severity',
  'severity_rank',
  'acknowledged_by',
  'acknowledged_at',
  'assigned_to',
  'snoozed_until',
  'resolved_at',
  'resolution_source',
  'archived_at',
];

/** Applies `changes` and returns the incident as it is now. */
export async function updateIncident(
  tx: Queryable,
  id: number,
  changes: IncidentChanges,
): Promise<IncidentRow> {
  const columns = CHANGEABLE.filter((column) => column in changes);
  if (columns.length === 0) return (await findIncidentById(tx, id))!;
  const assignments = columns.map((column, index) => `${column} = $${index + 2}`).join(', ');
  // One round trip: the updated row with the names, as findIncidentById returns it.
  const result = await tx.query<IncidentRow>(
    `WITH i AS (UPDATE incidents SET ${assignments} WHERE id = $1 RETURNING *)
     ${INCIDENT_COLUMNS} FROM i ${WITH_USERNAMES}`,
    [id, ...columns.map((column) => changes[column])],
  );
  return result.rows[0]!;
}

export interface IncidentFilter {
  status?: IncidentStatus;
  /** Only archived incidents; otherwise only those not archived. */
  archived: boolean;
  /** Only currently snoozed incidents; otherwise (not archived) only those not currently snoozed. */
  snoozed: boolean;
  now: Date;
  limit: number;
}

// The status is written into the statement, not passed as a parameter: a
// statement prepared once per connection may run with a generic plan, which
// cannot use a partial index whose predicate names a status
// (incidents_open_newest, incidents_resolved_newest) and would walk the whole
// history by incidents_newest instead. Three fixed words, three statements.
const STATUS_LITERALS: Record<IncidentStatus, string> = {
  triggered: `'triggered'`,
  acknowledged: `'acknowledged'`,
  resolved: `'resolved'`,
};

/**
 * Incidents newest first. Without `status`, the default set is the open
 * incidents (what people work on); the snoozed list those held by a snooze
 * (not resolved); the archived list is of any status unless one is given.
 */
export async function listIncidents(db: Queryable, filter: IncidentFilter): Promise<CountedIncidentRow[]> {
  const conditions: string[] = [];
  const params: unknown[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  if (filter.status !== undefined) conditions.push(`i.status = ${STATUS_LITERALS[filter.status]}`);
  if (filter.archived) {
    conditions.push('i.archived_at IS NOT NULL');
  } else {
    conditions.push('i.archived_at IS NULL');
    if (filter.snoozed) {
      conditions.push(`i.snoozed_until > ${param(filter.now)}`);
      // A resolved incident is not held by its snooze (and can no longer be
      // unsnoozed), whatever status was asked for.
      conditions.push(`i.status <> 'resolved'`);
    } else {
      if (filter.status === undefined) conditions.push(`i.status <> 'resolved'`);
      // A snooze on a resolved incident no longer hides it.
      conditions.push(
        `(i.status = 'resolved' OR i.snoozed_until IS NULL OR i.snoozed_until <= ${param(filter.now)})`,
      );
    }
  }
  // Counted outside the limited select, so only for the rows answered
  // whatever plan the filter gets (EXPLAIN: the count's loops are the rows
  // returned); the outer ORDER BY costs no sort, the subquery's order
  // carries through.
  const result = await db.query<CountedIncidentRow>(
    `SELECT i.*, ${ALERT_COUNT} AS alert_count
       FROM (${SELECT_INCIDENT} WHERE ${conditions.join(' AND ')}
              ORDER BY i.triggered_at DESC, i.id DESC LIMIT ${param(filter.limit)}) i
      ORDER BY i.triggered_at DESC, i.id DESC`,
    params,
  );
  return result.rows;
}

/**
 * Deletes up to `limit` incidents resolved before `cutoff` (their events and
 * alert links go with them). Returns how many.
 */
export async function deleteIncidentsResolvedBefore(
  tx: Queryable,
  cutoff: Date,
  limit: number,
): Promise<number> {
  const result = await tx.query(
    `DELETE FROM incidents WHERE id IN (
       SELECT id FROM incidents WHERE status = 'resolved' AND resolved_at < $1 ORDER BY resolved_at LIMIT $2)`,
    [cutoff, limit],
  );
  return result.rowCount;
}

/**
 * Groups of open incidents that have alerts and none of them firing, except
 * those in `exclude`: incidents the resolve of their last alert did not
 * reach (the alert resolved, or expired, through another group that carries
 * it too). What the staleness sweep resolves. Not those whose group's
 * notification left alerts out (max_alerts) after `leftOutAfter`.
 */
export async function groupsOfOpenIncidentsWithoutFiringAlerts(
  db: Queryable,
  exclude: string[],
  limit: number,
  leftOutAfter: Date,
): Promise<string[]> {
  const result = await db.query<{ group_key: string }>(
    `SELECT i.group_key FROM incidents i
      WHERE i.status <> 'resolved' AND NOT (i.group_key = ANY($1::text[]))
        AND (i.alerts_left_out_at IS NULL OR i.alerts_left_out_at <= $3)
        AND EXISTS (SELECT 1 FROM incident_alerts ia WHERE ia.incident_id = i.id)
        AND NOT EXISTS (SELECT 1 FROM incident_alerts ia JOIN alerts a ON a.id = ia.alert_id
                         WHERE ia.incident_id = i.id AND a.status = 'firing')
      LIMIT $2`,
    [exclude, limit, leftOutAfter],
  );
  return result.rows.map((row) => row.group_key);
}

/** Notes that the group's notification left alerts out just now (the column's migration, 1080). */
export async function markAlertsLeftOut(tx: Queryable, incidentId: number, now: Date): Promise<void> {
  await tx.query('UPDATE incidents SET alerts_left_out_at = $2 WHERE id = $1', [incidentId, now]);
}
