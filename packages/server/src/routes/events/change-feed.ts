import type { Change } from '@terdut/contract';
import type { Database } from '../../db/database.ts';
import { OnePassAtATime } from '../../one-pass-at-a-time.ts';

/** The NOTIFY channel every replica listens on for changes the web app shows. */
export const CHANGES_CHANNEL = 'terdut_changes';

export type { Change };

/**
 * How long announcements gather before their NOTIFY goes out. A browser
 * refetches on what it hears, so 20 ms later is nothing to a person; in an
 * alert storm of hundreds of webhook answers a second it makes their
 * NOTIFYs a few dozen a second.
 */
const GATHER_MS = 20;

/**
 * Fans database notifications out to this process's live streams. Changes
 * are announced with NOTIFY (any replica), heard through LISTEN (every
 * replica), so a person on replica A sees what someone did on replica B.
 * The LISTEN starts with the first subscriber, not at boot: a server nobody
 * watches is not sent the changes (the listening connection itself is open
 * from the start, for credential changes: services/authentication.ts).
 */
export class ChangeFeed {
  readonly #db: Database;
  readonly #subscribers = new Set<(change: Change) => void>();
  #listening: Promise<unknown> | undefined;
  #stopListening: (() => Promise<void>) | undefined;
  /** Announced, not yet sent: each distinct change once, in the order first announced. */
  readonly #pending = new Set<string>();
  /** One NOTIFY statement on the wire at a time; each takes what is pending when it starts. */
  readonly #sends = new OnePassAtATime(() => this.#sendPending());

  constructor(db: Database) {
    this.#db = db;
  }

  /**
   * Announces `changes` to every replica; resolves once they are sent. Never
   * throws: a lost announcement only delays a refresh.
   *
   * Announcements gather for GATHER_MS, then go in one NOTIFY statement,
   * each distinct change once; one statement is on the wire at a time, and
   * what is announced meanwhile goes in the next. Every webhook answer
   * announced the same two changes in a round trip of its own; a listener
   * needs to hear a change once to refetch.
   */
  announce(changes: Change[]): Promise<void> {
    if (changes.length === 0) return Promise.resolve();
    for (const change of changes) this.#pending.add(JSON.stringify(change));
    return this.#sends.run();
  }

  async #sendPending(): Promise<void> {
    await gather();
    const payloads = [...this.#pending];
    this.#pending.clear();
    // Already taken by the send before, which was gathering when they were announced.
    if (payloads.length === 0) return;
    // One statement for all of them, in order.
    await this.#db
      .query(
        'SELECT pg_notify($1, payload) FROM unnest($2::text[]) WITH ORDINALITY AS x(payload, n) ORDER BY n',
        [CHANGES_CHANNEL, payloads],
      )
      .catch(() => {});
  }

  /** Calls `onChange` for every change from now on; resolves when listening, with the unsubscribe function. */
  async subscribe(onChange: (change: Change) => void): Promise<() => void> {
    this.#subscribers.add(onChange);
    this.#listening ??= this.#db
      .listen(CHANGES_CHANNEL, (payload) => this.#deliver(payload))
      .then((stop) => (this.#stopListening = stop));
    await this.#listening;
    return () => this.#subscribers.delete(onChange);
  }

  async close(): Promise<void> {
    this.#subscribers.clear();
    await this.#stopListening?.().catch(() => {});
  }

  #deliver(payload: string): void {
    let change: Change;
    try {
      change = JSON.parse(payload) as Change;
    } catch {
      return;
    }
    for (const subscriber of this.#subscribers) subscriber(change);
  }
}

/**
 * Which changes a successful write under `path` makes. The routes stay as
 * they are: one hook after the answer (so after the commit) reads the path.
 */
export function changesOfWrite(path: string): Change[] {
  const incident = /^\/api\/incidents\/(\d+)/.exec(path);
  if (incident) return [{ topic: 'incidents', incident_id: Number(incident[1]) }];
  if (path.startsWith('/api/incidents')) return [{ topic: 'incidents' }];
  // Alertmanager's webhook adds alerts and opens, grows or resolves incidents.
  if (path.startsWith('/api/webhook') || path.startsWith('/api/alerts'))
    return [{ topic: 'alerts' }, { topic: 'incidents' }];
  if (path.startsWith('/api/schedule')) return [{ topic: 'schedule' }];
  return [];
}

/** Waits GATHER_MS without keeping the process alive for it (a lost announcement only delays a refresh). */
function gather(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, GATHER_MS).unref());
}
