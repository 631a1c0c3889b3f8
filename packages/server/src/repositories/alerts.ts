import type { Queryable } from '../db/database.ts';
import { alertContentDigest, type AlertState, type AlertStatus } from '../domain/alerts.ts';

/** A stored alert: the state its last notification described, plus what the server keeps about it. */
export interface AlertRow extends AlertState {
  id: number;
  /** When the current occurrence was first received (orders lists). */
  received_at: Date;
  /** When a notification last carried it (the wire's `received_at`). */
  last_seen_at: Date;
  incident_id: number | null;
  archived_at: Date | null;
}

const ALERT_COLUMN_NAMES = [
  'id',
  'fingerprint',
  'group_key',
  'name',
  'status',
  'labels',
  'annotations',
  'starts_at',
  'ends_at',
  'generator_url',
  'received_at',
  'last_seen_at',
  'resolution_source',
  'incident_id',
  'archived_at',
];
const ALERT_COLUMNS = ALERT_COLUMN_NAMES.join(', ');

/** Locks the alerts with these fingerprints (in fingerprint order, so concurrent writers cannot deadlock). */
export async function lockAlertsByFingerprint(db: Queryable, fingerprints: string[]): Promise<AlertRow[]> {
  if (fingerprints.length === 0) return [];
  const result = await db.query<AlertRow>(
    `SELECT ${ALERT_COLUMNS} FROM alerts WHERE fingerprint = ANY($1::text[]) ORDER BY fingerprint FOR UPDATE`,
    [fingerprints],
  );
  return result.rows;
}

/** An alert as the JSON records the inserting statements read (jsonb_to_recordset), with its content digest. */
export function alertRecord(alert: AlertState) {
  return {
    ...alert,
    starts_at: alert.starts_at.toISOString(),
    ends_at: alert.ends_at?.toISOString() ?? null,
    content_digest: alertContentDigest(alert),
  };
}

/**
 * Inserts alerts first seen now, in one statement. Fingerprints another
 * transaction inserted meanwhile are skipped (not returned); the caller locks
 * and treats those as existing.
 */
export async function insertAlerts(db: Queryable, alerts: AlertState[], now: Date): Promise<AlertRow[]> {
  if (alerts.length === 0) return [];
  const records = alerts.map(alertRecord);
  const result = await db.query<AlertRow>(
    `INSERT INTO alerts (fingerprint, group_key, name, status, labels, annotations, starts_at, ends_at,
                         generator_url, resolution_source, received_at, last_seen_at, content_digest)
     SELECT fingerprint, group_key, name, status, labels, annotations, starts_at, ends_at,
            generator_url, resolution_source, $2, $2, content_digest
       FROM jsonb_to_recordset($1::jsonb) AS x(fingerprint text, group_key text, name text, status text,
            labels jsonb, annotations jsonb, starts_at timestamptz, ends_at timestamptz,
            generator_url text, resolution_source text, content_digest text)
      ORDER BY fingerprint
     ON CONFLICT (fingerprint) DO NOTHING
     RETURNING ${ALERT_COLUMNS}`,
    [JSON.stringify(records), now],
  );
  return result.rows;
}

/**
 * What a notification's state of a stored alert is to the occurrence the row holds:
 * - `same`: that occurrence, changed (resolved, other annotations, Alertmanager's word on a presumed resolve);
 * - `revived`: that occurrence, resolved or presumed resolved, firing again (it opens or joins an incident anew);
 * - `new`: a new occurrence (a later start) that replaces it.
 */
export type OccurrenceUpdate = 'same' | 'revived' | 'new';

const SET_ALERT_STATE = `group_key = $2, name = $3, status = $4, labels = $5, annotations = $6, starts_at = $7,
            ends_at = $8, generator_url = $9, resolution_source = $10, last_seen_at = $11,
            received_at = CASE WHEN $12 THEN $11 ELSE received_at END,
            archived_at = CASE WHEN $12 THEN NULL ELSE archived_at END,
            content_digest = $13`;

/**
 * The links of the stored occurrence, which the statement replaces, are
 * given what their incidents show of it from now on: its end, its
 * annotations and how it resolved (migration 1090). Found by both columns
 * of incident_alerts_alert_occurrence, one or two at any age of the alert
 * (not every link of a flapping alert's past:
 * repositories/current-occurrence-links.test.ts). Links with an end recorded
 * already keep theirs (a revived occurrence that moves on again left those
 * incidents before). The stored row's values come as parameters, from the
 * row the caller holds locked: joined with the row in the statement
 * instead, it cost a re-fire 0.15 ms of PostgreSQL's time against 0.06
 * (mostly planning). Only on this path, which a notification takes when an
 * alert fires again: a new group, a repeat or a resolve never runs it.
 */
const END_STORED_OCCURRENCE = `
  WITH ended AS (
    UPDATE incident_alerts
       SET occurrence_ends_at = $14, occurrence_annotations = $15, occurrence_resolution_source = $16
     WHERE alert_id = $1 AND occurrence_starts_at = $17 AND occurrence_ends_at IS NULL)`;

/**
 * When the stored occurrence ended, for the incidents it leaves: its end if
 * it resolved (Alertmanager's endsAt, or the presumed one of an expiry;
 * else when a notification last carried it), or when the next one began if
 * it never resolved.
 */
function occurrenceEnd(stored: AlertRow, next: AlertState): Date {
  return stored.status === 'resolved' ? (stored.ends_at ?? stored.last_seen_at) : next.starts_at;
}

/**
 * Overwrites `stored` (locked by the caller) with the state a notification
 * carries. A `new` occurrence also restarts `received_at` and clears
 * `archived_at`; a `new` or `revived` one first records, on the incidents
 * the stored occurrence belongs to, how it ended there
 * (END_STORED_OCCURRENCE), in the same statement.
 */
export async function updateAlertState(
  db: Queryable,
  stored: AlertRow,
  state: AlertState,
  now: Date,
  occurrence: OccurrenceUpdate,
): Promise<AlertRow> {
  const params: unknown[] = [
    stored.id,
    state.group_key,
    state.name,
    state.status,
    JSON.stringify(state.labels),
    JSON.stringify(state.annotations),
    state.starts_at,
    state.ends_at,
    state.generator_url,
    state.resolution_source,
    now,
    occurrence === 'new',
    alertContentDigest(state),
  ];
  if (occurrence !== 'same') {
    params.push(
      occurrenceEnd(stored, state),
      JSON.stringify(stored.annotations),
      stored.resolution_source,
      stored.starts_at,
    );
  }
  const result = await db.query<AlertRow>(
    `${occurrence === 'same' ? '' : END_STORED_OCCURRENCE}
     UPDATE alerts
        SET ${SET_ALERT_STATE}
      WHERE id = $1
      RETURNING ${ALERT_COLUMNS}`,
    params,
  );
  return result.rows[0]!;
}

/**
 * Records that a notification carried these alerts unchanged ("last seen" is
 * all that moves; the digest is written for rows stored before it existed).
 */
export async function touchAlerts(
  db: Queryable,
  touched: { id: number; state: AlertState }[],
  groupKey: string,
  now: Date,
): Promise<void> {
  if (touched.length === 0) return;
  await db.query(
    `UPDATE alerts a SET last_seen_at = $3, group_key = $4, content_digest = t.digest
       FROM unnest($1::bigint[], $2::text[]) AS t (id, digest)
      WHERE a.id = t.id`,
    [touched.map((row) => row.id), touched.map((row) => alertContentDigest(row.state)), now, groupKey],
  );
}

/** Marks firing alerts resolved because nothing refreshed them; ends_at is when they went stale. */
export async function expireAlerts(db: Queryable, ids: number[], staleAfterMs: number): Promise<AlertRow[]> {
  if (ids.length === 0) return [];
  const result = await db.query<AlertRow>(
    `UPDATE alerts
        SET status = 'resolved', resolution_source = 'expiry',
            ends_at = last_seen_at + ($2::bigint * interval '1 millisecond')
      WHERE id = ANY($1::bigint[]) AND status = 'firing'
      RETURNING ${ALERT_COLUMNS}`,
    [ids, staleAfterMs],
  );
  return result.rows;
}

/** Firing alerts last notified in `groupKey` and last seen before `cutoff`, locked. */
export async function lockStaleAlertsOfGroup(
  db: Queryable,
  groupKey: string,
  cutoff: Date,
): Promise<AlertRow[]> {
  const result = await db.query<AlertRow>(
    `SELECT ${ALERT_COLUMNS} FROM alerts
      WHERE group_key = $1 AND status = 'firing' AND last_seen_at < $2
      ORDER BY fingerprint FOR UPDATE`,
    [groupKey, cutoff],
  );
  return result.rows;
}

/**
 * Groups that have firing alerts last seen before `cutoff` (what the
 * staleness sweep visits), except those in `exclude`.
 */
export async function groupsWithStaleAlerts(
  db: Queryable,
  cutoff: Date,
  exclude: string[],
  limit: number,
): Promise<string[]> {
  const result = await db.query<{ group_key: string }>(
    `SELECT DISTINCT group_key FROM alerts
      WHERE status = 'firing' AND last_seen_at < $1 AND NOT (group_key = ANY($2::text[]))
      LIMIT $3`,
    [cutoff, exclude, limit],
  );
  return result.rows.map((row) => row.group_key);
}

export interface AlertFilter {
  status?: AlertStatus;
  archived: boolean;
  limit: number;
}

/** Alerts newest first (by when the current occurrence was received). */
export async function listAlerts(db: Queryable, filter: AlertFilter): Promise<AlertRow[]> {
  const result = await db.query<AlertRow>(
    `SELECT ${ALERT_COLUMNS} FROM alerts
      WHERE ($1::text IS NULL OR status = $1)
        AND (CASE WHEN $2 THEN archived_at IS NOT NULL ELSE archived_at IS NULL END)
      ORDER BY received_at DESC, id DESC
      LIMIT $3`,
    [filter.status ?? null, filter.archived, filter.limit],
  );
  return result.rows;
}

export async function findAlertById(db: Queryable, id: number): Promise<AlertRow | undefined> {
  const result = await db.query<AlertRow>(`SELECT ${ALERT_COLUMNS} FROM alerts WHERE id = $1`, [id]);
  return result.rows[0];
}

/**
 * Whether the link `ia` names an occurrence its alert `a` has since moved on
 * from (fired again: a new start, or revived): the end recorded when it did
 * (migration 1090), or, on a link written before that, an occurrence that
 * started before the alert's current one (links and alerts keep times at
 * milliseconds, as the server's Dates do; a microsecond more in `a` is the
 * same occurrence).
 */
const MOVED_ON = `(ia.occurrence_ends_at IS NOT NULL OR a.starts_at >= ia.occurrence_starts_at + interval '1 millisecond')`;

/** The columns of an alert that belong to one occurrence of it, as SQL expressions. */
interface OccurrenceSql {
  status: string;
  annotations: string;
  starts_at: string;
  ends_at: string;
  resolution_source: string;
}

/** The occurrence the alert `a` has now. */
const CURRENT_OCCURRENCE: OccurrenceSql = {
  status: 'a.status',
  annotations: 'a.annotations',
  starts_at: 'a.starts_at',
  ends_at: 'a.ends_at',
  resolution_source: 'a.resolution_source',
};

/**
 * The occurrence of `a` that link `ia` names, once the alert moved on from
 * it: resolved, with the link's start and what the link recorded then. A
 * link written before migration 1090 recorded nothing: its end and how it
 * resolved are unknown (omitted), its annotations the alert's current ones.
 */
const PAST_OCCURRENCE: OccurrenceSql = {
  status: `'resolved'`,
  annotations: 'coalesce(ia.occurrence_annotations, a.annotations)',
  starts_at: 'ia.occurrence_starts_at',
  ends_at: 'ia.occurrence_ends_at',
  resolution_source: 'ia.occurrence_resolution_source',
};

/**
 * ALERT_COLUMNS of `a` as the incident of link `ia` shows the alert: the
 * occurrence's columns are the link's occurrence's (MOVED_ON), the others
 * (name, labels, "last seen", archived, newest incident) the alert's,
 * whichever occurrence. Labels are the fingerprint's, the same in each.
 */
const ALERT_COLUMNS_IN_INCIDENT = ALERT_COLUMN_NAMES.map((name) =>
  name in CURRENT_OCCURRENCE
    ? `CASE WHEN ${MOVED_ON} THEN ${PAST_OCCURRENCE[name as keyof OccurrenceSql]} ` +
      `ELSE ${CURRENT_OCCURRENCE[name as keyof OccurrenceSql]} END AS ${name}`
    : `a.${name}`,
).join(', ');

/**
 * The alerts that belong to an incident (its own, even those that moved on
 * to newer incidents), each as it was in this incident (ALERT_COLUMNS_IN_INCIDENT).
 */
export async function listAlertsOfIncident(db: Queryable, incidentId: number): Promise<AlertRow[]> {
  const result = await db.query<AlertRow>(
    `SELECT ${ALERT_COLUMNS_IN_INCIDENT}
       FROM alerts a
       JOIN incident_alerts ia ON ia.alert_id = a.id
      WHERE ia.incident_id = $1
      ORDER BY ia.added_at DESC, a.id DESC`,
    [incidentId],
  );
  return result.rows;
}

/**
 * A timestamptz as JavaScript's `Date#toISOString` writes it: UTC,
 * milliseconds (truncated, as node-postgres' Date keeps them), "Z". Alert
 * times lie in the years 1 to 9999 (alertmanager/parse.ts refuses others).
 */
function isoTimeSql(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** `"key":value` for a column that may be null: nothing when it is (the wire omits absent fields). */
function optionalSql(key: string, valueSql: string, column: string): string {
  return `CASE WHEN ${column} IS NULL THEN '' ELSE ',"${key}":' || ${valueSql} END`;
}

/**
 * One alert of `a`, with the columns of `occurrence`, as JSON text written by
 * PostgreSQL: the same fields and values as `serializeAlert`
 * (routes/alerts/wire.ts) writes, in its order, absent ones omitted (the
 * incident page's tests compare the two on awkward values and on past
 * occurrences). Strings go through `to_json` (JSON's escaping), label maps
 * are jsonb's own text; `status` and `resolution_source` are constrained words.
 */
function alertWireJson(occurrence: OccurrenceSql): string {
  return [
    `'{"id":' || a.id`,
    `',"fingerprint":' || to_json(a.fingerprint)`,
    `',"name":' || to_json(a.name)`,
    `',"status":"' || ${occurrence.status} || '"'`,
    `',"labels":' || a.labels::text`,
    `',"annotations":' || ${occurrence.annotations}::text`,
    `',"starts_at":"' || ${isoTimeSql(occurrence.starts_at)} || '"'`,
    optionalSql('ends_at', `'"' || ${isoTimeSql(occurrence.ends_at)} || '"'`, occurrence.ends_at),
    `',"generator_url":' || to_json(a.generator_url)`,
    `',"received_at":"' || ${isoTimeSql('a.last_seen_at')} || '"'`,
    optionalSql('archived_at', `'"' || ${isoTimeSql('a.archived_at')} || '"'`, 'a.archived_at'),
    optionalSql('incident_id', 'a.incident_id', 'a.incident_id'),
    optionalSql(
      'resolution_source',
      `'"' || ${occurrence.resolution_source} || '"'`,
      occurrence.resolution_source,
    ),
    `'}'`,
  ].join('\n  || ');
}

/**
 * The alert `a` as the incident of link `ia` shows it, as listAlertsOfIncident
 * reads it, in JSON text. One condition per alert, not one per field: an
 * alert that never moved on is written by the same expression as before
 * migration 1090.
 */
const ALERT_WIRE_JSON_IN_INCIDENT = `CASE WHEN ${MOVED_ON}
  THEN ${alertWireJson(PAST_OCCURRENCE)}
  ELSE ${alertWireJson(CURRENT_OCCURRENCE)} END`;

/** How many alerts one part of alertsOfIncidentJsonParts holds (about 15 KB each on the bench's alerts). */
const ALERTS_PER_JSON_PART = 32;

/**
 * The alerts of listAlertsOfIncident, in its order, as JSON text written by
 * PostgreSQL, in parts of a few dozen alerts: the elements of one JSON array,
 * comma-separated within a part, without the brackets or the commas between
 * parts (routes/incidents/wire.ts joins them). A page of 1,000 alerts costs
 * the server some 30 short strings instead of 1,000 rows to parse, dates to
 * build and objects to serialise (bench/README.md, "The incident page
 * written by PostgreSQL"). Parts, not one string: a text of half a
 * megabyte is born in V8's old generation, one more step towards a full
 * collection at every refresh, where short strings die young
 * (bench/README.md, "Results kept alive by node-postgres' timer").
 * With how many there are: the page's `alert_count`, from the same snapshot.
 */
export async function alertsOfIncidentJsonParts(
  db: Queryable,
  incidentId: number,
): Promise<{ parts: string[]; count: number }> {
  const result = await db.query<{ part: string; alerts: number }>(
    `SELECT string_agg(alert, ',' ORDER BY position) AS part, count(*)::integer AS alerts
       FROM (SELECT ${ALERT_WIRE_JSON_IN_INCIDENT} AS alert,
                    row_number() OVER (ORDER BY ia.added_at DESC, a.id DESC) - 1 AS position
               FROM alerts a
               JOIN incident_alerts ia ON ia.alert_id = a.id
              WHERE ia.incident_id = $1) numbered
      GROUP BY position / ${ALERTS_PER_JSON_PART}
      ORDER BY position / ${ALERTS_PER_JSON_PART}`,
    [incidentId],
  );
  return {
    parts: result.rows.map((row) => row.part),
    count: result.rows.reduce((sum, row) => sum + row.alerts, 0),
  };
}

/** Sets or clears `archived_at` on the alerts whose newest incident is `incidentId`. */
export async function setAlertsArchivedForIncident(
  db: Queryable,
  incidentId: number,
  archivedAt: Date | null,
): Promise<void> {
  await db.query(`UPDATE alerts SET archived_at = $2 WHERE incident_id = $1`, [incidentId, archivedAt]);
}

/**
 * Deletes up to `limit` resolved alerts that belong to no incident any
 * more and were last seen before `cutoff`. Returns how many.
 *
 * `incident_id IS NULL` changes nothing and lets the partial index
 * alerts_resolved_unlinked find them (migration 0970): an alert without links
 * never had an incident, or its newest incident, and so all of them, were
 * deleted, and deleting an incident sets incident_id to NULL. The batch
 * is chosen once (an array, not a subquery the planner may run again for
 * every alert), and the conditions are asked again of each row as it is
 * deleted, so an alert that fired again meanwhile stays.
 */
export async function deleteUnreferencedAlerts(db: Queryable, cutoff: Date, limit: number): Promise<number> {
  const unreferenced = `a.status = 'resolved' AND a.incident_id IS NULL AND a.last_seen_at < $1
        AND NOT EXISTS (SELECT 1 FROM incident_alerts ia WHERE ia.alert_id = a.id)`;
  const result = await db.query(
    `DELETE FROM alerts a
      WHERE a.id = ANY (ARRAY(SELECT a.id FROM alerts a WHERE ${unreferenced} LIMIT $2))
        AND ${unreferenced}`,
    [cutoff, limit],
  );
  return result.rowCount;
}
