import type { Heartbeat } from '@terdut/contract';
import type { HeartbeatRow } from '../../repositories/heartbeats.ts';
import { formatDuration } from '../../services/format-duration.ts';

// The schemas are in @terdut/contract (paging.ts); this maps rows to them.

const go = (ms: number) => (ms === 0 ? '0s' : formatDuration(ms));

export function serialiseHeartbeat(row: HeartbeatRow): Heartbeat {
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
