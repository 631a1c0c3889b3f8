import type { BackgroundJob } from '../background-jobs.ts';
import type { AlertExpiryService } from './alert-expiry.ts';
import type { RetentionService } from './retention.ts';

const EXPIRY_SWEEP_INTERVAL_MS = 60_000;
const RETENTION_PRUNE_INTERVAL_MS = 5 * 60_000;

/**
 * The background work of alerts and incidents: the staleness sweep (every
 * minute: staleness is measured in hours, a minute late is fine) and the
 * retention prune (every five minutes).
 */
export function incidentBackgroundJobs(services: {
  alertExpiry: AlertExpiryService;
  retention: RetentionService;
}): BackgroundJob[] {
  return [
    { name: 'alert-expiry', intervalMs: EXPIRY_SWEEP_INTERVAL_MS, run: () => services.alertExpiry.sweep() },
    { name: 'retention', intervalMs: RETENTION_PRUNE_INTERVAL_MS, run: () => services.retention.prune() },
  ];
}
