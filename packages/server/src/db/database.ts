import pg from 'pg';
import type { PGlite as PGliteInstance } from '@electric-sql/pglite';
import { NoAnswerError, PooledConnection, runOnTheClock, StatementDeadlines } from './pooled-connections.ts';

/** Something that runs SQL: the whole database, or one open transaction. */
export interface Queryable {
  /** Runs one statement with `$1`-style parameters and returns its rows. */
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<QueryResult<Row>>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>;
}

export interface QueryResult<Row> {
  rows: Row[];
  /** Rows inserted, updated or deleted (0 for a plain SELECT on PGlite). */
  rowCount: number;
}

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

/**
 * The server's one handle on storage. The same SQL runs on a real PostgreSQL
 * (node-postgres pool) and on the embedded PGlite, so every repository is
 * written once against this interface.
 */
export interface Database extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /**
   * Runs `work` in one transaction: committed when it resolves, rolled back
   * when it throws. Callers answer 2xx only after this resolves.
   */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  poolStats(): PoolStats;
  /**
   * Subscribes to PostgreSQL notifications on `channel` (LISTEN); every
   * replica that listens hears every NOTIFY. Resolves once the LISTEN is in
   * place; the returned function stops listening.
   */
  listen(channel: string, onNotification: (payload: string) => void): Promise<() => Promise<void>>;
  /** NOTIFY `channel` with `payload` (under 8000 bytes); listeners hear it once the statement commits. */
  notify(channel: string, payload: string): Promise<void>;
  close(): Promise<void>;
}

// LISTEN takes an identifier, not a parameter: only plain names are accepted.
function quoteChannel(channel: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel))
    throw new Error(`invalid notification channel name "${channel}"`);
  return `"${channel}"`;
}

// 64-bit ids are serialized as JSON numbers (api-contract.md); ids never
// approach 2^53, so parse int8 into a number rather than a string.
const INT8_OID = 20;
const NUMERIC_OID = 1700;
pg.types.setTypeParser(INT8_OID, (value: string) => Number(value));
pg.types.setTypeParser(NUMERIC_OID, (value: string) => Number(value));

// Statements are prepared once per connection (parsed and planned once, not
// on every call): most of PostgreSQL's CPU per small notification went to
// parsing and planning the same dozen statements. The texts are few and
// fixed; dynamic ones (lists with optional filters) add a handful each. A
// bound keeps an unexpected stream of distinct texts from growing every
// connection's statement cache: past it, texts run unnamed, as before.
const MAX_PREPARED_TEXTS = 500;
const preparedNames = new Map<string, string>();

function preparedQuery(sql: string, params: readonly unknown[]): pg.QueryConfig {
  let name = preparedNames.get(sql);
  if (name === undefined && preparedNames.size < MAX_PREPARED_TEXTS) {
    name = `terdut_${preparedNames.size + 1}`;
    preparedNames.set(sql, name);
  }
  return name === undefined
    ? { text: sql, values: params as unknown[] }
    : { name, text: sql, values: params as unknown[] };
}

// timestamptz in PostgreSQL's usual ISO output ("2026-12-03
// 10:58:11.446123+00", any whole-minute offset, years 1000-9999) is read by
// the JavaScript engine's own date parser, to the same instant as
// node-postgres' default (postgres-date) at half the cost: an incident
// page of 1,000 alerts parses 4,000 of them. Everything else (infinity, BC,
// years before 1000, which the engine misreads, offsets with seconds) goes
// to the default parser.
const TIMESTAMPTZ_OID = 1184;
const COMMON_TIMESTAMPTZ = /^[1-9]\d{3}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})?[+-]\d\d(?::\d\d)?$/;
const parseAnyTimestamptz = pg.types.getTypeParser(TIMESTAMPTZ_OID, 'text') as (value: string) => Date;
/** node-postgres' timestamptz parser (exported for its test). */
export function parseTimestamptz(value: string): Date {
  return COMMON_TIMESTAMPTZ.test(value) ? new Date(value) : parseAnyTimestamptz(value);
}
pg.types.setTypeParser(TIMESTAMPTZ_OID, parseTimestamptz);

/**
 * pg.Pool's options as pg-pool reads them: it awaits `onConnect` before it
 * hands a new connection out (pg-pool's `_promiseTry(onConnect)`), where
 * @types/pg declares the hook returning void.
 */
interface PoolOptions extends Omit<pg.PoolConfig, 'onConnect'> {
  onConnect: (client: pg.ClientBase) => Promise<void>;
}

/** Connects a pool to a real PostgreSQL. Fails fast with a message naming the address. */
export async function openPostgres(
  url: string,
  options: { max?: number; statementTimeoutMs?: number; queryTimeoutMs?: number } = {},
): Promise<Database> {
  url = await withFallbackSslMode(withLibpqSslModes(url));
  // The client stops waiting when no answer comes at all (a frozen server or
  // network), so a request fails with 5xx instead of hanging.
  const deadlines = new StatementDeadlines(options.queryTimeoutMs ?? 35_000);
  const poolOptions: PoolOptions = {
    connectionString: url,
    max: options.max ?? 10,
    // Connecting (or waiting for a free connection) is waiting for an answer too.
    connectionTimeoutMillis: Math.min(10_000, options.queryTimeoutMs ?? 10_000),
    // The server cancels a statement running longer than this (and
    // `deadlines` gives up when no answer comes at all).
    statement_timeout: options.statementTimeoutMs ?? 30_000,
    // No JIT compiling, ever: PostgreSQL compiles a plan whose estimated
    // cost passes jit_above_cost, and a prepared statement keeps that
    // decision with its plan. Every statement here runs in milliseconds;
    // compiling one took 520-740 ms on every call once an emptied
    // statistics table was still estimated at 100k rows (bench/README.md,
    // "Half a second of JIT"). The pool hands a new connection out only
    // after this, so nothing is planned on it before. (A server without
    // the setting, older than PostgreSQL 11, has no JIT either.)
    //
    // And every statement planned for the arguments and table sizes of its
    // call: parsed once per connection (preparedQuery), but never run on a
    // generic plan kept from its first calls. A connection's first calls
    // come while tables are small, and PostgreSQL keeps a generic plan once
    // it looks no dearer than the custom ones; made on a nearly empty
    // table, it scans the whole table forever after (the paging pass' lock
    // of due incidents took 8.5 ms per call once incidents and escalations
    // had grown under it; bench/README.md, "Resolves and kept plans").
    // Planning a statement costs 0.1-0.3 ms (the incident lists'). The
    // database functions that keep their plans on purpose say so
    // themselves (migrations 1010, 1030). PostgreSQL 12 and later, which
    // migration 0900 already requires.
    onConnect: async (client) => {
      // On the clock, like every statement: a connection that goes silent
      // here fails to connect (the pool closes it) instead of hanging.
      await runOnTheClock(client, 'SET jit = off', deadlines, () => {}).catch((error: unknown) => {
        if (error instanceof NoAnswerError) throw error;
      });
      await runOnTheClock(client, 'SET plan_cache_mode = force_custom_plan', deadlines, () => {});
      // And no parallel plans: every statement here reads a few index
      // entries, and starting a worker costs more than it saves. The
      // incident page's links (1,000 by primary key, 5 ms) were read by a
      // parallel sequential scan of every link (20-27 ms) whenever ANALYZE's
      // sample put the incident's estimate near 600 rows (bench/README.md,
      // "The incident page without parallel plans").
      await runOnTheClock(client, 'SET max_parallel_workers_per_gather = 0', deadlines, () => {});
    },
  };
  const pool = new pg.Pool(poolOptions);
  // A connection that ends (a PostgreSQL restart or failover, an idle
  // session killer) must never crash the process: node-postgres emits
  // 'error' on its client, and an event without a listener is thrown.
  // While idle the pool listens (and drops it); while lent, it does not,
  // and the statement's own failure reaches its caller before the client
  // is back in the pool, so every client listens for good. Its statements
  // fail anyway, and the pool drops a client that cannot take more.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  try {
    const client = await pool.connect();
    client.release();
  } catch (error) {
    await pool.end().catch(() => {});
    // node-postgres reads the URL only now. One it cannot read is a typing
    // matter, not reachability: most often a password with a character that
    // means something in a URL (a # starts the fragment and cuts the rest off).
    if ((error as { code?: string }).code === 'ERR_INVALID_URL') {
      throw new Error(
        'DATABASE_URL is not a URL that can be read; percent-encode special characters in the user name ' +
          'and password (# as %23, / as %2F, ? as %3F, @ as %40, % as %25), e.g. with ' +
          `node -p 'encodeURIComponent(process.argv[1])' PASSWORD`,
        { cause: error },
      );
    }
    throw new Error(
      `database is not reachable at ${describeUrl(url)} (${(error as Error).message}); check DATABASE_URL`,
      { cause: error },
    );
  }
  const listeners = new PostgresListeners(url);
  const borrow = async () => new PooledConnection(await pool.connect(), deadlines);
  /** One statement (or script) on a connection of its own. */
  const runAlone = async (config: pg.QueryConfig | string) => {
    const connection = await borrow();
    try {
      return await connection.query(config);
    } finally {
      connection.release();
    }
  };
  return {
    kind: 'postgres',
    async query<Row>(sql: string, params: readonly unknown[] = []) {
      const result = await runAlone(preparedQuery(sql, params));
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
    },
    async exec(script: string) {
      await runAlone(script);
    },
    async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
      const connection = await borrow();
      try {
        await connection.query('BEGIN');
        const tx: Queryable = {
          async query<Row>(sql: string, params: readonly unknown[] = []) {
            const result = await connection.query(preparedQuery(sql, params));
            return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
          },
          async exec(script: string) {
            await connection.query(script);
          },
        };
        const value = await work(tx);
        await connection.query('COMMIT');
        return value;
      } catch (error) {
        await connection.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        connection.release();
      }
    },
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    listen: (channel, onNotification) => listeners.listen(channel, onNotification),
    async notify(channel, payload) {
      await runAlone({ text: 'SELECT pg_notify($1, $2)', values: [channel, payload] });
    },
    async close() {
      await listeners.close();
      await pool.end();
    },
  };
}

/**
 * Opens the embedded PostgreSQL (PGlite, WASM) in `dataDir`, or in memory when
 * `dataDir` is undefined. One connection: statements and transactions queue.
 */
export async function openPglite(
  dataDir: string | undefined,
  options: {
    /**
     * PostgreSQL's shared_buffers ("16MB"); unset: PGlite's 128MB. Its
     * WebAssembly memory grows to hold them and never shrinks: 32MB instead
     * of 128MB is about 115 MiB less resident memory, for full scans of
     * tables larger than that about 1.5 times slower (bench/README.md).
     */
    sharedBuffers?: string;
  } = {},
): Promise<Database> {
  // Loaded here, not at the top: a server on PostgreSQL never holds
  // PGlite's code (a few MiB of its resident memory, bench/README.md).
  const { PGlite } = await import('@electric-sql/pglite');
  const parsers = {
    [INT8_OID]: (value: string) => Number(value),
    [NUMERIC_OID]: (value: string) => Number(value),
    [TIMESTAMPTZ_OID]: parseTimestamptz,
  };
  const startParams = [
    ...PGlite.defaultStartParams,
    ...(options.sharedBuffers === undefined ? [] : ['-c', `shared_buffers=${options.sharedBuffers}`]),
    // A page of WebAssembly memory, once touched, stays resident, so what
    // one VACUUM or ANALYZE takes at its peak is kept for good: VACUUM's
    // list of dead rows at most 8MB (not 64MB), and ANALYZE's sample 3,000
    // rows (not 30,000, about 15 MiB of alerts). Plans here look rows up
    // by key; coarser statistics do not change them (bench/README.md,
    // "The embedded database under 250 MiB").
    '-c',
    'maintenance_work_mem=8MB',
    '-c',
    'default_statistics_target=10',
  ];
  const settings = { parsers, startParams };
  const db = dataDir === undefined ? new PGlite(settings) : new PGlite(dataDir, settings);
  await db.waitReady;
  const run = async <Row>(
    target: Pick<PGliteInstance, 'query'>,
    sql: string,
    params: readonly unknown[],
  ): Promise<QueryResult<Row>> => {
    let result;
    try {
      result = await target.query<Row>(sql, params as unknown[]);
    } catch (error) {
      throw withoutStatement(error);
    }
    // PGlite runs on this thread and settles its promises without returning
    // to the event loop: a transaction of many statements would starve every
    // other request (/healthz included) until it commits. Let pending I/O in
    // between statements.
    await new Promise((resolve) => setImmediate(resolve));
    return { rows: result.rows, rowCount: result.affectedRows ?? 0 };
  };
  return {
    kind: 'pglite',
    query: <Row>(sql: string, params: readonly unknown[] = []) => run<Row>(db, sql, params),
    exec: async (script: string) => {
      await db.exec(script);
    },
    transaction: <T>(work: (tx: Queryable) => Promise<T>) =>
      db.transaction((pgTx) =>
        work({
          query: <Row>(sql: string, params: readonly unknown[] = []) => run<Row>(pgTx, sql, params),
          exec: async (script: string) => {
            await pgTx.exec(script);
          },
        }),
      ),
    poolStats: () => ({ total: 1, idle: 1, waiting: 0 }),
    async listen(channel, onNotification) {
      quoteChannel(channel);
      const unsubscribe = await db.listen(channel, onNotification);
      return () => unsubscribe();
    },
    async notify(channel, payload) {
      await db.query('SELECT pg_notify($1, $2)', [channel, payload]);
    },
    close: () => db.close(),
  };
}

/**
 * PGlite's errors carry the statement and every parameter (notes, e-mails,
 * key hashes), which must not reach a log line. Keep what callers and
 * operators use: the SQLSTATE code and the message.
 */
function withoutStatement(error: unknown): unknown {
  if (typeof error !== 'object' || error === null) return error;
  const { code, message } = error as { code?: unknown; message?: unknown };
  const clean = new Error(typeof message === 'string' ? message : 'database error');
  return Object.assign(clean, { code });
}

/**
 * LISTEN needs a connection of its own that stays open (a pooled one would be
 * handed to other queries and its subscriptions lost), so one dedicated client
 * carries every channel of this process. It is opened on the first listen;
 * when it drops, it reconnects and listens again, so a database restart only
 * costs the notifications sent while it was away (the web app refetches on
 * reconnect, and polls as a fallback).
 */
class PostgresListeners {
  readonly #url: string;
  readonly #handlers = new Map<string, Set<(payload: string) => void>>();
  #client: pg.Client | undefined;
  #connecting: Promise<pg.Client> | undefined;
  #closed = false;

  constructor(url: string) {
    this.#url = url;
  }

  async listen(channel: string, onNotification: (payload: string) => void): Promise<() => Promise<void>> {
    const quoted = quoteChannel(channel);
    let handlers = this.#handlers.get(channel);
    const first = handlers === undefined;
    if (handlers === undefined) {
      handlers = new Set();
      this.#handlers.set(channel, handlers);
    }
    handlers.add(onNotification);
    const client = await this.#connect();
    if (first) await client.query(`LISTEN ${quoted}`);
    return async () => {
      const current = this.#handlers.get(channel);
      current?.delete(onNotification);
      if (current?.size === 0) {
        this.#handlers.delete(channel);
        await this.#client?.query(`UNLISTEN ${quoted}`).catch(() => {});
      }
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => {});
  }

  #connect(): Promise<pg.Client> {
    if (this.#client) return Promise.resolve(this.#client);
    this.#connecting ??= (async () => {
      const client = new pg.Client({ connectionString: this.#url, connectionTimeoutMillis: 10_000 });
      client.on('notification', (message) => {
        for (const handler of this.#handlers.get(message.channel) ?? []) handler(message.payload ?? '');
      });
      client.on('error', () => this.#lost(client));
      client.on('end', () => this.#lost(client));
      try {
        await client.connect();
      } finally {
        this.#connecting = undefined;
      }
      this.#client = client;
      return client;
    })();
    return this.#connecting;
  }

  #lost(client: pg.Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    if (this.#closed) return;
    const retry = (): void => {
      if (this.#closed || this.#handlers.size === 0) return;
      this.#connect()
        .then(async (fresh) => {
          for (const channel of this.#handlers.keys()) await fresh.query(`LISTEN ${quoteChannel(channel)}`);
        })
        .catch(() => setTimeout(retry, 1000).unref());
    };
    setTimeout(retry, 1000).unref();
  }
}

/**
 * The URL with `sslmode` read as libpq reads it (libpq-ssl.html, table 34.1):
 * `require` encrypts without checking the certificate, `verify-ca` checks it
 * against `sslrootcert`, `verify-full` also checks the host name. node-postgres
 * 8 takes `prefer`, `require` and `verify-ca` as `verify-full` unless told
 * `uselibpqcompat=true`, so a DATABASE_URL with `sslmode=require` (the
 * operator's default for a Zalando cluster, whose certificate is self-signed)
 * could not connect, and every start printed a SECURITY WARNING about it.
 * A URL that says `uselibpqcompat` itself, or cannot be parsed, is left alone,
 * and so is node-postgres's own `sslmode=no-verify`.
 *
 * @example withLibpqSslModes('postgres://db/app?sslmode=require') // '…?sslmode=require&uselibpqcompat=true'
 */
export function withLibpqSslModes(url: string): string {
  if (!URL.canParse(url)) return url;
  const parsed = new URL(url);
  const sslmode = parsed.searchParams.get('sslmode');
  // `no-verify` is node-postgres's own mode (encrypt, check nothing), which libpq does not know.
  if (sslmode === null || sslmode === 'no-verify' || parsed.searchParams.has('uselibpqcompat')) return url;
  parsed.searchParams.set('uselibpqcompat', 'true');
  return parsed.toString();
}

/**
 * `sslmode=prefer` and `sslmode=allow` made concrete for this server, as libpq
 * would connect (libpq-ssl.html, table 34.1): `prefer` (libpq's default, and
 * what many generated URLs say) tries TLS and falls back to a plain
 * connection when the server has no TLS; `allow` tries plain and falls back to
 * TLS when the server demands it. node-postgres has no fallback: `prefer`
 * failed on every server without TLS ("The server does not support SSL
 * connections") and `allow` on every server with it required. One connection
 * tried here decides for every later one (libpq decides per connection): a
 * server that starts or stops serving TLS is seen at the next start.
 * Whatever else fails here is left for the caller's first connection to
 * report, with the mode libpq would have tried first.
 */
async function withFallbackSslMode(url: string): Promise<string> {
  if (!URL.canParse(url)) return url;
  const parsed = new URL(url);
  const sslmode = parsed.searchParams.get('sslmode');
  if (sslmode !== 'prefer' && sslmode !== 'allow') return url;
  const withMode = (mode: string): string => {
    const concrete = new URL(parsed);
    concrete.searchParams.set('sslmode', mode);
    return concrete.toString();
  };
  const [first, second] = sslmode === 'prefer' ? ['require', 'disable'] : ['disable', 'require'];
  const probe = new pg.Client({ connectionString: withMode(first), connectionTimeoutMillis: 10_000 });
  // A connection that fails after it opened must not crash the process (see the pool's listener).
  probe.on('error', () => {});
  try {
    await probe.connect();
    return withMode(first);
  } catch (error) {
    const message = (error as Error).message;
    // The server has no TLS (node-postgres' words for the server's 'N' to SSLRequest).
    if (sslmode === 'prefer' && /does not support SSL/i.test(message)) return withMode(second);
    // pg_hba.conf has only `hostssl` lines for this client: 28000 "no pg_hba.conf entry … no encryption".
    if (
      sslmode === 'allow' &&
      (error as { code?: string }).code === '28000' &&
      /no encryption/i.test(message)
    ) {
      return withMode(second);
    }
    return withMode(first);
  } finally {
    await probe.end().catch(() => {});
  }
}

/** host:port/db of a connection URL, without user or password, for messages and logs. */
export function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`;
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}
