import type { Clock } from '../clock.ts';

export type RateLimitDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/**
 * A fixed-window counter per key (e.g. client address): at most `limit` hits
 * per `windowMs`. Kept in memory, so each replica counts on its own; the
 * effective limit is `limit` × replicas, which is fine for its use (slowing
 * down guessing at endpoints protected by a 256-bit token).
 */
export class FixedWindowRateLimiter {
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #clock: Clock;
  readonly #windows = new Map<string, { startedAt: number; hits: number }>();

  constructor(options: { limit: number; windowMs: number; clock: Clock }) {
    this.#limit = options.limit;
    this.#windowMs = options.windowMs;
    this.#clock = options.clock;
  }

  /** Counts one hit for `key` and says whether it is allowed. */
  hit(key: string): RateLimitDecision {
    const now = this.#clock.now().getTime();
    this.#forgetExpired(now);
    let window = this.#windows.get(key);
    if (!window || now - window.startedAt >= this.#windowMs) {
      window = { startedAt: now, hits: 0 };
      this.#windows.set(key, window);
    }
    window.hits += 1;
    if (window.hits <= this.#limit) return { allowed: true };
    return {
      allowed: false,
      retryAfterSeconds: Math.max(1, Math.ceil((window.startedAt + this.#windowMs - now) / 1000)),
    };
  }

  /** How many keys are tracked; expired windows are dropped once 10,000 are held. */
  get size(): number {
    return this.#windows.size;
  }

  // Bounds memory under a flood of distinct addresses; cheap because it only
  // runs when the map has grown.
  #forgetExpired(now: number): void {
    if (this.#windows.size < 10_000) return;
    for (const [key, window] of this.#windows) {
      if (now - window.startedAt >= this.#windowMs) this.#windows.delete(key);
    }
  }
}
