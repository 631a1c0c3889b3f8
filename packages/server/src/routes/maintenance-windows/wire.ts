import type { MaintenanceWindow } from '@terdut/contract';
import type { MaintenanceWindowRow } from '../../repositories/maintenance-windows.ts';

// The schemas are in @terdut/contract (paging.ts); this maps rows to them.

export function serialiseWindow(row: MaintenanceWindowRow): MaintenanceWindow {
  return {
    id: row.id,
    starts_at: row.starts_at.toISOString(),
    ends_at: row.ends_at.toISOString(),
    matchers: row.matchers,
    reason: row.reason,
    ...(row.created_by !== null ? { created_by_id: row.created_by } : {}),
    created_at: row.created_at.toISOString(),
  };
}
