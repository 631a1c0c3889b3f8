import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Database } from './db/database.ts';

/**
 * Every Prometheus metric the server exports, on a registry of its own (not
 * prom-client's global one), so several app instances in one process (tests,
 * benchmarks) do not collide.
 */
export interface Metrics {
  registry: Registry;
  httpRequestDuration: Histogram<'method' | 'route' | 'status'>;
  webhookNotifications: Counter<'outcome'>;
  alertsReceived: Counter<'status'>;
  incidentsOpened: Counter;
  incidentsResolved: Counter<'source'>;
}

export function createMetrics(db: Database, options: { processMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry, prefix: 'terdut_' });
  const poolGauge = (
    name: string,
    help: string,
    pick: (stats: ReturnType<Database['poolStats']>) => number,
  ) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(pick(db.poolStats()));
      },
    });
  poolGauge('terdut_db_pool_connections', 'Database connections open in the pool', (s) => s.total);
  poolGauge('terdut_db_pool_idle_connections', 'Idle database connections in the pool', (s) => s.idle);
  poolGauge('terdut_db_pool_waiting_requests', 'Queries waiting for a database connection', (s) => s.waiting);
  return {
    registry,
    httpRequestDuration: new Histogram({
      name: 'terdut_http_request_duration_seconds',
      help: 'HTTP request duration by route template and status code',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    webhookNotifications: new Counter({
      name: 'terdut_webhook_notifications_total',
      help: 'Alertmanager webhook notifications received, by outcome (accepted, rejected, failed)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    alertsReceived: new Counter({
      name: 'terdut_alerts_received_total',
      help: 'Alerts received in webhook notifications, by status in the notification',
      labelNames: ['status'],
      registers: [registry],
    }),
    incidentsOpened: new Counter({
      name: 'terdut_incidents_opened_total',
      help: 'Incidents opened',
      registers: [registry],
    }),
    incidentsResolved: new Counter({
      name: 'terdut_incidents_resolved_total',
      help: 'Incidents resolved, by resolution source (alerts, manual)',
      labelNames: ['source'],
      registers: [registry],
    }),
  };
}
