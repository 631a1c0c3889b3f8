/**
 * Runs a reconcile function over a work queue with N workers.
 *
 * A reconcile returns `{ requeueAfterMs }` to be looked at again later (a
 * pod still starting) or nothing when converged. A thrown error is retried
 * with the key's exponential back-off. A state that retrying cannot fix (one
 * a person must change) is not an error: the reconcile sets a condition that
 * says what to do and returns without a requeue, so only a change to the
 * object brings the key back. A write refused because the object changed
 * since it was read (409 Conflict) is retried the same way but is no error:
 * concurrent writers meet it in normal operation, and the next pass reads
 * the newer object.
 */
import { KubeApiError } from './kube-client.ts';
import type { OperatorMetrics } from './metrics.ts';
import type { WorkQueue } from './work-queue.ts';

export interface ReconcileResult {
  requeueAfterMs?: number;
}

/** `signal` aborts when the operator stops: requests in flight end, as in a crash (which every step survives). */
export type Reconcile = (key: string, signal: AbortSignal) => Promise<ReconcileResult | void>;

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
  readonly #abort = new AbortController();

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

  /** Aborts the reconciles in flight (their requests fail; the keys are not retried after shutDown). */
  abort(): void {
    this.#abort.abort();
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
        const result = await this.#reconcile(key, this.#abort.signal);
        this.#queue.forget(key);
        if (result?.requeueAfterMs !== undefined) {
          this.#queue.addAfter(key, result.requeueAfterMs);
          this.#metrics?.reconcileTotal.inc({ controller: this.name, result: 'requeue' });
        } else this.#metrics?.reconcileTotal.inc({ controller: this.name, result: 'success' });
      } catch (error) {
        const delay = this.#queue.addRateLimited(key);
        if (isStaleWrite(error)) {
          this.#metrics?.reconcileTotal.inc({ controller: this.name, result: 'conflict' });
          this.#logger?.info('an object changed while it was reconciled; reading it again', {
            key,
            retryInMs: delay,
            error: (error as Error).message,
          });
        } else {
          this.#metrics?.reconcileErrors.inc({ controller: this.name });
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

/** 409 Conflict: a write with a resourceVersion precondition met a newer object (not AlreadyExists). */
function isStaleWrite(error: unknown): boolean {
  return error instanceof KubeApiError && error.status === 409 && error.reason === 'Conflict';
}
