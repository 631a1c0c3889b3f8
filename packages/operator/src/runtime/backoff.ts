/**
 * Per-key exponential back-off: base × 2^(failures-1), capped. A key's count
 * is reset (`forget`) after a successful reconcile, so one bad object backs
 * off without slowing the others.
 */
export class PerKeyBackoff {
  readonly #baseMs: number;
  readonly #maxMs: number;
  readonly #failures = new Map<string, number>();

  constructor(options: { baseMs?: number; maxMs?: number } = {}) {
    this.#baseMs = options.baseMs ?? 500;
    this.#maxMs = options.maxMs ?? 5 * 60_000;
  }

  /** Records one more failure of `key` and returns how long to wait before the next try. */
  next(key: string): number {
    const failures = (this.#failures.get(key) ?? 0) + 1;
    this.#failures.set(key, failures);
    return Math.min(this.#maxMs, this.#baseMs * 2 ** Math.min(failures - 1, 30));
  }

  failures(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  forget(key: string): void {
    this.#failures.delete(key);
  }
}
