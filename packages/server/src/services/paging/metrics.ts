import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Database } from '../../db/database.ts';
import type { Clock } from '../../clock.ts';
import { outboxDepth } from '../../repositories/page-deliveries.ts';

/** Paging's metrics, on the server's registry. */
export interface PagingMetrics {
  pagesSent: Counter<'method' | 'purpose'>;
  pagesFailed: Counter<'method' | 'purpose'>;
  deliveryLatency: Histogram<'method'>;
}

/** Registers the paging metrics; the outbox gauges read the database when scraped. */
export function createPagingMetrics(registry: Registry, db: Database, clock: Clock): PagingMetrics {
  let last: Promise<{ depth: number; oldestAgeSeconds: number }> | undefined;
  // One query serves both gauges of a scrape.
  const read = () => {
    last ??= outboxDepth(db, clock.now())
      .catch(() => ({ depth: 0, oldestAgeSeconds: 0 }))
      .finally(() => setTimeout(() => (last = undefined), 100).unref());
    return last;
  };
  new Gauge({
    name: 'terdut_paging_outbox_depth',
    help: 'Messages waiting to be sent (pending deliveries, including ones waiting to be retried)',
    registers: [registry],
    async collect() {
      this.set((await read()).depth);
    },
  });
  new Gauge({
    name: 'terdut_paging_outbox_oldest_age_seconds',
    help: 'Age of the oldest message waiting to be sent; 0 when none waits',
    registers: [registry],
    async collect() {
      this.set((await read()).oldestAgeSeconds);
    },
  });
  return {
    pagesSent: new Counter({
      name: 'terdut_pages_sent_total',
      help: 'Messages accepted by their provider, by contact method kind and purpose (page, resolved)',
      labelNames: ['method', 'purpose'],
      registers: [registry],
    }),
    pagesFailed: new Counter({
      name: 'terdut_pages_failed_total',
      help: 'Messages given up on (permanent error or retry budget spent), by contact method kind and purpose',
      labelNames: ['method', 'purpose'],
      registers: [registry],
    }),
    deliveryLatency: new Histogram({
      name: 'terdut_page_delivery_latency_seconds',
      help: 'From the incident opening (or the step becoming due) to the provider accepting the page',
      labelNames: ['method'],
      buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 900],
      registers: [registry],
    }),
  };
}
