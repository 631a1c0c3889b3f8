import { Type } from 'typebox';
import type { MaintenanceWindowRow } from '../../repositories/maintenance-windows.ts';

export { ErrorSchema } from '@terdut/contract';

/** `MaintenanceWindowInput` (api-contract.md). */
export const MaintenanceWindowInputSchema = Type.Object(
  {
    starts_at: Type.String({ description: 'RFC 3339 time', examples: ['2026-12-03T22:00:00Z'] }),
    ends_at: Type.String({ description: 'RFC 3339 time, after starts_at, at most 31 days later' }),
    matchers: Type.Optional(
      Type.Array(Type.String({ maxLength: 1000 }), {
        maxItems: 50,
        description: 'Alertmanager matchers on the incident labels; none: every incident',
      }),
    ),
    reason: Type.String({ maxLength: 1000 }),
  },
  { title: 'MaintenanceWindowInput' },
);

/** `MaintenanceWindow` (api-contract.md). */
export const MaintenanceWindowSchema = Type.Object(
  {
    id: Type.Integer(),
    starts_at: Type.String({ format: 'date-time' }),
    ends_at: Type.String({ format: 'date-time' }),
    matchers: Type.Array(Type.String()),
    reason: Type.String(),
    created_by_id: Type.Optional(Type.Integer()),
    created_at: Type.String({ format: 'date-time' }),
  },
  { title: 'MaintenanceWindow', additionalProperties: false },
);

export function serialiseWindow(row: MaintenanceWindowRow) {
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
