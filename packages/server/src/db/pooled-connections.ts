import type pg from 'pg';

/**
 * Gives up on statements PostgreSQL has not answered within a bound
 * (TERDUT_DB_QUERY_TIMEOUT): a frozen server or network, which the server's
 * own statement_timeout cannot end. The request then fails instead of
 * hanging, and the connection leaves the pool.
 *
 * One ticker looks at every statement in flight, in place of node-postgres'
 * `query_timeout`, and a statement is run through node-postgres' callback
 * API, not its promise API. With either of those, V8's young-generation
 * collector found every result of the last few milliseconds still reachable
 * and moved it to the old generation, so a page of 1,000 alerts filled the
 * old generation every twenty refreshes and the server stopped for a full
 * collection (bench/README.md, "Results kept alive by node-postgres' timer").
 * Measured, not explained: no retaining path shows in a heap snapshot, whose
 * full collection frees them.
 */
export class StatementDeadlines {
  readonly timeoutMs: number;
  readonly #inFlight = new Set<InFlight>();
  #ticker: NodeJS.Timeout | undefined;

  constructor(timeoutMs: number) {
    this.timeoutMs = timeoutMs;
  }

  /** Starts the clock on one statement; `expire` runs once if it is not settled in time. */
  start(expire: (error: NoAnswerError) => void): InFlight {
    const inFlight: InFlight = { dueAt: performance.now() + this.timeoutMs, expire };
    this.#inFlight.add(inFlight);
    // Ticks while statements run, at a tenth of the bound (at most once a
    // second): a statement fails between one and 1.1 bounds after it began.
    this.#ticker ??= setInterval(() => this.#tick(), Math.min(1_000, this.timeoutMs / 10)).unref();
    return inFlight;
  }

  /** The statement was answered (or failed by itself): its clock stops. */
  settle(inFlight: InFlight): void {
    inFlight.expire = undefined;
    this.#inFlight.delete(inFlight);
  }

  #tick(): void {
    const now = performance.now();
    for (const inFlight of this.#inFlight) {
      if (inFlight.dueAt > now) continue;
      const expire = inFlight.expire;
      this.settle(inFlight);
      expire?.(new NoAnswerError(this.timeoutMs));
    }
    if (this.#inFlight.size === 0) {
      clearInterval(this.#ticker);
      this.#ticker = undefined;
    }
  }
}

/** A statement PostgreSQL did not answer in time; its connection is closed. */
export class NoAnswerError extends Error {
  constructor(timeoutMs: number) {
    super(
      `PostgreSQL did not answer within ${timeoutMs} ms (TERDUT_DB_QUERY_TIMEOUT); the connection was ` +
        'closed. Check that the database server and the network to it are up',
    );
  }
}

/**
 * Runs one statement on `client` through node-postgres' callback API, on
 * the clock: past the deadline `late` runs and the statement fails with
 * NoAnswerError, whatever becomes of it.
 */
export function runOnTheClock(
  client: pg.ClientBase,
  config: pg.QueryConfig | string,
  deadlines: StatementDeadlines,
  late: (error: NoAnswerError) => void,
): Promise<pg.QueryResult> {
  return new Promise((resolve, reject) => {
    const inFlight = deadlines.start((error) => {
      late(error);
      reject(error);
    });
    const answered = (error: Error | undefined, result: pg.QueryResult) => {
      deadlines.settle(inFlight);
      if (error) reject(error);
      else resolve(result);
    };
    if (typeof config === 'string') client.query(config, answered);
    else client.query(config, answered);
  });
}

/** A statement on the clock: when it is due, and what to do then (cleared once settled). */
export interface InFlight {
  readonly dueAt: number;
  expire: ((error: NoAnswerError) => void) | undefined;
}

/**
 * One connection borrowed from the pool for one statement or one
 * transaction. A statement past its deadline fails at once, and the
 * connection goes back to the pool marked broken, which closes it; later
 * statements on it fail at once with the same error.
 */
export class PooledConnection {
  readonly #client: pg.PoolClient;
  readonly #deadlines: StatementDeadlines;
  #released = false;
  #lost: Error | undefined;

  constructor(client: pg.PoolClient, deadlines: StatementDeadlines) {
    this.#client = client;
    this.#deadlines = deadlines;
  }

  query(config: pg.QueryConfig | string): Promise<pg.QueryResult> {
    if (this.#lost !== undefined) return Promise.reject(this.#lost);
    return runOnTheClock(this.#client, config, this.#deadlines, (error) => {
      this.#lost = error;
      this.release();
    });
  }

  /**
   * Back to the pool, once. A connection that errored by itself is closed by
   * the pool (it checks that the client can still take statements); one that
   * did not answer in time is closed here. A statement that failed on the
   * server (a constraint, a cancelled statement) leaves the connection, and
   * its prepared statements, usable.
   */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#client.release(this.#lost);
  }
}
