import type { BackgroundJob } from '../background-jobs.ts';
import type { AlertExpiryService } from './alert-expiry.ts';
import type { RetentionService } from './retention.ts';
import type { StatisticsService } from './statistics.ts';

const EXPIRY_SWEEP_INTERVAL_MS = 60_000;
const RETENTION_PRUNE_INTERVAL_MS = 5 * 60_000;
const STATISTICS_FOLD_INTERVAL_MS = 10_000;

/**
 * The background work of alerts and incidents: the staleness sweep (every
 * minute: staleness is measured in hours, a minute late is fine) and the
 * retention prune (every five minutes), and the fold of the statistics
 * deltas (every ten seconds: the statistics read what is not folded yet too,
 * so folding often only keeps that small; an alert storm appends a few
 * thousand delta rows in ten seconds).
 */
export function incidentBackgroundJobs(services: {
  alertExpiry: AlertExpiryService;
  retention: RetentionService;
  statistics: StatisticsService;
}): BackgroundJob[] {
  return [
    { name: 'alert-expiry', intervalMs: EXPIRY_SWEEP_INTERVAL_MS, run: () => services.alertExpiry.sweep() },
    { name: 'retention', intervalMs: RETENTION_PRUNE_INTERVAL_MS, run: () => services.retention.prune() },
    {
      name: 'statistics-fold',
      intervalMs: STATISTICS_FOLD_INTERVAL_MS,
      run: () => services.statistics.foldDeltas(),
    },
  ];
}
