import type { Alert } from '@terdut/contract';
import type { AlertRow, AlertRowWithJsonMaps } from '../../repositories/alerts.ts';

/**
 * Alert row → wire object; absent fields are left undefined, which the
 * response schemas omit from the JSON (never null; no spread per optional
 * field, which costs an object each). The wire's `received_at` is "last
 * seen": the last notification that carried the alert (the row's
 * `received_at`, when the occurrence was first received, orders lists).
 */
export function serializeAlert(row: AlertRow): Alert {
  return {
    id: row.id,
    fingerprint: row.fingerprint,
    name: row.name,
    status: row.status,
    labels: row.labels,
    annotations: row.annotations,
    starts_at: row.starts_at.toISOString(),
    ends_at: row.ends_at?.toISOString(),
    generator_url: row.generator_url,
    received_at: row.last_seen_at.toISOString(),
    archived_at: row.archived_at?.toISOString(),
    incident_id: row.incident_id ?? undefined,
    resolution_source: row.resolution_source ?? undefined,
  };
}

/**
 * The same alert as JSON text, the same fields as serializeAlert (the
 * incident page's test compares the two), written directly: the labels and
 * annotations are PostgreSQL's own JSON text of them, sent as they are, and
 * every other value goes through JSON.stringify. An incident page of 1,000
 * alerts thus parses, copies and re-serialises no label map.
 */
export function alertJson(row: AlertRowWithJsonMaps): string {
  let json =
    `{"id":${row.id},"fingerprint":${JSON.stringify(row.fingerprint)},"name":${JSON.stringify(row.name)}` +
    `,"status":${JSON.stringify(row.status)},"labels":${row.labels},"annotations":${row.annotations}` +
    `,"starts_at":"${row.starts_at.toISOString()}"`;
  if (row.ends_at !== null) json += `,"ends_at":"${row.ends_at.toISOString()}"`;
  json += `,"generator_url":${JSON.stringify(row.generator_url)},"received_at":"${row.last_seen_at.toISOString()}"`;
  if (row.archived_at !== null) json += `,"archived_at":"${row.archived_at.toISOString()}"`;
  if (row.incident_id !== null) json += `,"incident_id":${row.incident_id}`;
  if (row.resolution_source !== null) json += `,"resolution_source":${JSON.stringify(row.resolution_source)}`;
  return json + '}';
}
