/**
 * Runs a reconcile function over a work queue with N workers.
 *
 * A reconcile returns `{ requeueAfterMs }` to be looked at again later (a
 * pod still starting) or nothing when converged. A thrown error is retried
 * with the key's exponential back-off. A `TerminalError` is not retried:
 * only a change to the object (a new event adding the key) brings it back,
 * because retrying cannot fix what a person must change.
 */
import type { OperatorMetrics } from './metrics.ts';
import type { WorkQueue } from './work-queue.ts';

export interface ReconcileResult {
  requeueAfterMs?: number;
}

/** An error that retrying cannot fix; the key waits for the next change of its object. */
export class TerminalError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

export type Reconcile = (key: string) => Promise<ReconcileResult | void>;

export interface ControllerLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export class Controller {
  readonly name: string;
  readonly #queue: WorkQueue;
  readonly #reconcile: Reconcile;
  readonly #metrics: OperatorMetrics | undefined;
  readonly #logger: ControllerLogger | undefined;
  readonly #workers: Promise<void>[] = [];

  constructor(options: {
    name: string;
    queue: WorkQueue;
    reconcile: Reconcile;
    metrics?: OperatorMetrics;
    logger?: ControllerLogger;
  }) {
    this.name = options.name;
    this.#queue = options.queue;
    this.#reconcile = options.reconcile;
    this.#metrics = options.metrics;
    this.#logger = options.logger;
  }

  /** Starts `concurrency` workers. They stop when the queue shuts down. */
  start(concurrency: number): void {
    for (let i = 0; i < concurrency; i++) this.#workers.push(this.#work());
  }

  /** Resolves when every worker has finished its current key (after `queue.shutDown()`). */
  async stopped(): Promise<void> {
    await Promise.all(this.#workers);
  }

  async #work(): Promise<void> {
    for (;;) {
      const key = await this.#queue.get();
      if (key === undefined) return;
      this.#metrics?.queueDepth.set({ controller: this.name }, this.#queue.length);
      const end = this.#metrics?.reconcileDuration.startTimer({ controller: this.name });
      try {
        const result = await this.#reconcile(key);
        this.#queue.forget(key);
        if (result?.requeueAfterMs !== undefined) {
          this.#queue.addAfter(key, result.requeueAfterMs);
          this.#metrics?.reconcileTotal.inc({ controller: this.name, result: 'requeue' });
        } else this.#metrics?.reconcileTotal.inc({ controller: this.name, result: 'success' });
      } catch (error) {
        this.#metrics?.reconcileErrors.inc({ controller: this.name });
        if (error instanceof TerminalError) {
          this.#queue.forget(key);
          this.#metrics?.reconcileTotal.inc({ controller: this.name, result: 'terminal' });
          this.#logger?.error('reconcile failed; waiting for the object to change', {
            key,
            error: error.message,
          });
        } else {
          const delay = this.#queue.addRateLimited(key);
          this.#metrics?.reconcileTotal.inc({ controller: this.name, result: 'error' });
          this.#logger?.error('reconcile failed; retrying', {
            key,
            retryInMs: delay,
            error: (error as Error).message,
          });
        }
      } finally {
        end?.();
        this.#queue.done(key);
      }
    }
  }
}
