import pg from 'pg';

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
    client.query(typeof config === 'string' ? { text: config } : config, answered);
  });
}

/** A statement on the clock: when it is due, and what to do then (cleared once settled). */
export interface InFlight {
  readonly dueAt: number;
  expire: ((error: NoAnswerError) => void) | undefined;
}

/**
 * SQLSTATE classes of errors that end one statement and leave its session
 * as it was: data (22), constraints (23), serialisation and deadlocks
 * (40), syntax and access (42), locks not available (55), PL/pgSQL's
 * RAISE (P0); and a statement cancelled by statement_timeout (57014).
 * Anything else (the session ended: 57P01 administrator command, 08
 * connection exceptions, FATAL errors, a broken socket) closes the
 * connection.
 */
const STATEMENT_ERROR_CLASSES = new Set(['22', '23', '40', '42', '55', 'P0']);

function endsOnlyTheStatement(error: unknown): boolean {
  if (!(error instanceof pg.DatabaseError) || error.code === undefined) return false;
  return error.code === '57014' || STATEMENT_ERROR_CLASSES.has(error.code.slice(0, 2));
}

/**
 * One connection borrowed from the pool for one statement or one
 * transaction. It goes back to the pool only if its statements were
 * answered and none failed in a way that can end a session; otherwise it
 * goes back marked broken, which closes it, and later statements on it
 * fail at once with the same error. A statement past its deadline fails at
 * once and gives its connection back then. (PostgreSQL's last message on a
 * connection it ended, "terminating connection", reaches the statement
 * before the connection's end reaches node-postgres: given back as it was,
 * it sat idle in the pool, dead, until then.)
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

  async query(config: pg.QueryConfig | string): Promise<pg.QueryResult> {
    if (this.#lost !== undefined) throw this.#lost;
    try {
      return await runOnTheClock(this.#client, config, this.#deadlines, (error) => {
        this.#lost = error;
        this.release();
      });
    } catch (error) {
      if (!endsOnlyTheStatement(error)) this.#lost ??= error as Error;
      throw error;
    }
  }

  /** Back to the pool, once; closed by the pool when a statement on it failed beyond itself. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#client.release(this.#lost);
  }
}
