import type { BackgroundJob } from '../../background-jobs.ts';
import type { PagingConfig } from './config.ts';
import type { PagingService } from './paging.ts';
import type { HeartbeatService } from './heartbeats.ts';
import { HANDOFF_INTERVAL_MS, type HandoffNoticeService } from './handoff-notices.ts';

/** Missed heartbeats are looked for this often; intervals are at least 30s. */
const HEARTBEAT_SWEEP_INTERVAL_MS = 10_000;

/**
 * The paging worker, on every replica: fires due escalation steps and sends
 * due messages every TERDUT_PAGING_POLL_INTERVAL (default 1s). All state is
 * in the database, so replicas share the work and a restart loses nothing.
 */
export function pagingBackgroundJobs(
  services: { paging: PagingService; heartbeats: HeartbeatService; handoffNotices: HandoffNoticeService },
  config: PagingConfig,
): BackgroundJob[] {
  return [
    { name: 'paging', intervalMs: config.pollIntervalMs, run: () => services.paging.runOnce() },
    { name: 'heartbeats', intervalMs: HEARTBEAT_SWEEP_INTERVAL_MS, run: () => services.heartbeats.sweep() },
    // Schedule handoffs: each claimed once in the database, sent through the paging outbox.
    {
      name: 'handoff-notices',
      intervalMs: HANDOFF_INTERVAL_MS,
      run: () => services.handoffNotices.runOnce(),
    },
  ];
}
