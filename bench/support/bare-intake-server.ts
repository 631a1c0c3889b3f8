/**
 * The least an HTTP intake can do, as a process of its own: `node:http`, the
 * notification's JSON parsed, its alerts stored as rows of the raw table
 * (`raw-inserts.ts`) in one INSERT, committed, then a 200. No API key, no
 * validation, no incident, no framework. `bench:intake-floor` measures it
 * with the intake benchmarks' senders: what any HTTP intake that commits
 * before it answers can reach on this machine, terdut-server's code or not.
 *
 * Environment: BARE_PORT (on 127.0.0.1), BARE_DATABASE_URL (a database
 * holding `raw_alerts`),
 * BARE_MODE: `answer` (parse and answer, store nothing), `insert` (one INSERT
 * per notification) or `gathered` (group commit: notifications that arrive
 * while two INSERTs are in flight go together in the next one, as terdut's
 * new groups do).
 */
import http from 'node:http';
import pg from 'pg';

type Mode = 'answer' | 'insert' | 'gathered';
interface RawRow {
  fingerprint: string;
  group_key: string;
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  starts_at: string;
}
interface Notification {
  groupKey: string;
  alerts: {
    fingerprint: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
    startsAt: string;
  }[];
}

const INSERT = `INSERT INTO raw_alerts (fingerprint, group_key, name, status, labels, annotations, starts_at, received_at, last_seen_at)
  SELECT x.fingerprint, x.group_key, x.name, 'firing', x.labels, x.annotations, x.starts_at, now(), now()
    FROM jsonb_to_recordset($1::jsonb)
      AS x(fingerprint text, group_key text, name text, labels jsonb, annotations jsonb, starts_at timestamptz)`;

const mode = (process.env.BARE_MODE ?? 'insert') as Mode;
const pool = new pg.Pool({ connectionString: process.env.BARE_DATABASE_URL, max: 4 });

/** Up to two INSERTs in flight, as terdut's gathered new groups (services/intake.ts); rows that arrive meanwhile wait for the next. */
class GroupCommit {
  static readonly IN_FLIGHT = 2;
  #inFlight = 0;
  #waiting: { rows: RawRow[]; settle: (error?: Error) => void }[] = [];

  store(rows: RawRow[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ rows, settle: (error) => (error === undefined ? resolve() : reject(error)) });
      this.#flush();
    });
  }

  #flush(): void {
    if (this.#inFlight >= GroupCommit.IN_FLIGHT || this.#waiting.length === 0) return;
    const batch = this.#waiting;
    this.#waiting = [];
    this.#inFlight++;
    pool
      .query(INSERT, [JSON.stringify(batch.flatMap((entry) => entry.rows))])
      .then(
        () => batch.forEach((entry) => entry.settle()),
        (error: unknown) => batch.forEach((entry) => entry.settle(error as Error)),
      )
      .finally(() => {
        this.#inFlight--;
        this.#flush();
      });
  }
}

const groupCommit = new GroupCommit();

async function store(notification: Notification): Promise<void> {
  if (mode === 'answer') return;
  const rows = notification.alerts.map((alert) => ({
    fingerprint: alert.fingerprint,
    group_key: notification.groupKey,
    name: alert.labels.alertname ?? '',
    labels: alert.labels,
    annotations: alert.annotations,
    starts_at: alert.startsAt,
  }));
  if (mode === 'gathered') return groupCommit.store(rows);
  await pool.query(INSERT, [JSON.stringify(rows)]);
}

const server = http.createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const answer = (status: number, body: string): void => {
      response.writeHead(status, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      response.end(body);
    };
    let notification: Notification;
    try {
      notification = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Notification;
    } catch {
      answer(400, '{"error":"not JSON"}');
      return;
    }
    store(notification).then(
      () => answer(200, '{"ok":true}'),
      (error: unknown) => answer(500, JSON.stringify({ error: (error as Error).message })),
    );
  });
});

server.listen(Number(process.env.BARE_PORT), '127.0.0.1');
