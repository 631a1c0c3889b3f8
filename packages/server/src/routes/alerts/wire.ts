import type { Alert } from '@terdut/contract';
import type { AlertRow } from '../../repositories/alerts.ts';

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
