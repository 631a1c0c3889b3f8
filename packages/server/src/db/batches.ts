import type { Database } from './database.ts';

/**
 * Rows per statement for set-at-a-time writes of one notification. PGlite
 * runs each statement on the main thread, so one statement over thousands of
 * rows would hold the event loop for seconds (no /healthz answer); slices of
 * 50 keep each near 0.1 s on a busy 2-core machine, and the PGlite adapter
 * yields to pending I/O after every statement. PostgreSQL runs elsewhere:
 * larger slices only save round trips there.
 */
export function batchRowsFor(db: Pick<Database, 'kind'>): number {
  return db.kind === 'pglite' ? 50 : 1_000;
}

/** Runs `work` on consecutive slices of `items` (at most `size` each), in order, and concatenates the results. */
export async function inBatches<T, R = never>(
  items: readonly T[],
  size: number,
  work: (batch: T[]) => Promise<R[] | void>,
): Promise<R[]> {
  const results: R[] = [];
  for (let start = 0; start < items.length; start += size) {
    const rows = await work(items.slice(start, start + size));
    if (rows) results.push(...rows);
  }
  return results;
}
