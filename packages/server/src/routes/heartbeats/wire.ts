import { Type } from 'typebox';
import type { HeartbeatRow } from '../../repositories/heartbeats.ts';
import { formatDuration } from '../../services/format-duration.ts';

export { ErrorSchema } from '@terdut/contract';

/** `HeartbeatInput` (api-contract.md). */
export const HeartbeatInputSchema = Type.Object(
  {
    name: Type.String({ maxLength: 200 }),
    interval: Type.String({
      description: 'Go-style duration, at least 30s: how often a sign of life is expected',
    }),
    grace: Type.Optional(Type.String({ description: 'extra wait before it counts as missed; default 1m' })),
    matchers: Type.Optional(
      Type.Array(Type.String({ maxLength: 1000 }), {
        maxItems: 50,
        description:
          'Alertmanager matchers; a firing alert that matches refreshes the heartbeat and opens no incident',
        examples: [['alertname="Watchdog"']],
      }),
    ),
  },
  { title: 'HeartbeatInput' },
);

/** `Heartbeat` (api-contract.md). */
export const HeartbeatSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    interval: Type.String(),
    grace: Type.String(),
    matchers: Type.Array(Type.String()),
    last_seen_at: Type.String({ format: 'date-time' }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { title: 'Heartbeat', additionalProperties: false },
);

const go = (ms: number) => (ms === 0 ? '0s' : formatDuration(ms));

export function serialiseHeartbeat(row: HeartbeatRow) {
  return {
    id: row.id,
    name: row.name,
    interval: go(Number(row.interval_ms)),
    grace: go(Number(row.grace_ms)),
    matchers: row.matchers,
    last_seen_at: row.last_seen_at.toISOString(),
    created_at: row.created_at.toISOString(),
  };
}
