/**
 * A keyed work queue with the semantics of client-go's workqueue:
 *
 * - It holds keys (`namespace/name`), never events; adding a key that is
 *   already waiting does nothing, so a burst of events is one reconcile.
 * - A key handed to a worker is "processing" until `done`; adding it
 *   meanwhile marks it dirty and it is queued again only after `done`, so one
 *   key is never reconciled by two workers at once and no change is lost.
 * - `addAfter` delays a key (the earliest pending time wins);
 *   `addRateLimited` delays it by the key's own exponential back-off, which
 *   `forget` resets.
 */
import { PerKeyBackoff } from './backoff.ts';

export class WorkQueue {
  readonly #queue: string[] = [];
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #delayed = new Map<string, { due: number; timer: NodeJS.Timeout }>();
  readonly #waiters: ((key: string | undefined) => void)[] = [];
  readonly #backoff: PerKeyBackoff;
  #shuttingDown = false;

  constructor(options: { backoff?: PerKeyBackoff } = {}) {
    this.#backoff = options.backoff ?? new PerKeyBackoff();
  }

  /** Keys waiting to be handed out (not processing, not delayed). */
  get length(): number {
    return this.#queue.length;
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  add(key: string): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#dirty.add(key);
    if (this.#processing.has(key)) return;
    const waiter = this.#waiters.shift();
    if (waiter) {
      this.#dirty.delete(key);
      this.#processing.add(key);
      waiter(key);
    } else this.#queue.push(key);
  }

  /** Adds `key` after `delayMs`, unless it is already due earlier. */
  addAfter(key: string, delayMs: number): void {
    if (this.#shuttingDown) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const due = Date.now() + delayMs;
    const pending = this.#delayed.get(key);
    if (pending && pending.due <= due) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.#delayed.delete(key);
      this.add(key);
    }, delayMs);
    timer.unref();
    this.#delayed.set(key, { due, timer });
  }

  /** Adds `key` after its next back-off delay; returns that delay. */
  addRateLimited(key: string): number {
    const delay = this.#backoff.next(key);
    this.addAfter(key, delay);
    return delay;
  }

  /** Resets `key`'s back-off (after a success, or when it should not be retried). */
  forget(key: string): void {
    this.#backoff.forget(key);
  }

  /** How many times in a row `key` has failed. */
  failures(key: string): number {
    return this.#backoff.failures(key);
  }

  /** The next key to work on; undefined once the queue is shut down. */
  get(): Promise<string | undefined> {
    if (this.#shuttingDown) return Promise.resolve(undefined);
    const key = this.#queue.shift();
    if (key !== undefined) {
      this.#dirty.delete(key);
      this.#processing.add(key);
      return Promise.resolve(key);
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Marks `key` finished; if it was added meanwhile it is queued again. */
  done(key: string): void {
    this.#processing.delete(key);
    if (this.#dirty.has(key)) {
      this.#dirty.delete(key);
      this.add(key);
    }
  }

  /** Stops handing out keys: waiting `get`s resolve undefined; delayed keys are dropped. */
  shutDown(): void {
    this.#shuttingDown = true;
    for (const { timer } of this.#delayed.values()) clearTimeout(timer);
    this.#delayed.clear();
    for (const waiter of this.#waiters.splice(0)) waiter(undefined);
  }
}
