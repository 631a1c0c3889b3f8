/**
 * Between reconcile passes, the recorded key of every settled TerdutServer
 * is checked with one GET /api/me every `intervalMs` (jittered so a fleet
 * does not check at once), and at most `perSecond` checks run per second
 * across all servers. A refusal (401/403: an admin revoked the key, another
 * operator adopted the account, the server lost its database) wakes that
 * TerdutServer's reconcile, which verifies the key itself and recovers.
 *
 * Why not a requeue of the whole pass: a pass re-applies the Deployment and
 * the Service (server-side apply is a write even when nothing changes), and
 * a settled operator must write nothing. The check talks only to the
 * terdut-server, never to the Kubernetes API.
 */
import { TerdutApiError, type TerdutClient } from '@terdut/client';
import type { TerdutServer } from '../../api/v1alpha1/terdutserver.ts';
import type { Logger } from '../../runtime/logger.ts';

export interface KeyVerifier {
  /** The pass verified `apiKey` for `server`: check it again from time to time. */
  watch(server: TerdutServer, baseUrl: string, apiKey: string): void;
  /** The server's credentials are gone or being replaced, or the server is being deleted. */
  forget(server: TerdutServer): void;
}

export const noKeyVerifier: KeyVerifier = { watch: () => {}, forget: () => {} };

interface Entry {
  key: string;
  baseUrl: string;
  apiKey: string;
  dueAt: number;
}

export class PeriodicKeyVerifier implements KeyVerifier {
  readonly #entries = new Map<string, Entry>();
  readonly #intervalMs: number;
  readonly #perSecond: number;
  readonly #client: (baseUrl: string, apiKey: string) => TerdutClient;
  readonly #onRefused: (key: string) => void;
  readonly #log: Logger;
  readonly #now: () => number;
  #timer: NodeJS.Timeout | undefined;
  /** Checks made, for the steady-state test's request budget. */
  checks = 0;

  constructor(options: {
    intervalMs: number;
    perSecond: number;
    client: (baseUrl: string, apiKey: string) => TerdutClient;
    onRefused: (key: string) => void;
    log: Logger;
    now?: () => number;
  }) {
    this.#intervalMs = options.intervalMs;
    this.#perSecond = options.perSecond;
    this.#client = options.client;
    this.#onRefused = options.onRefused;
    this.#log = options.log;
    this.#now = options.now ?? Date.now;
  }

  watch(server: TerdutServer, baseUrl: string, apiKey: string): void {
    const existing = this.#entries.get(server.metadata.uid);
    // A pass that just verified the key resets nothing if it is the same key: the schedule holds.
    if (existing?.apiKey === apiKey && existing.baseUrl === baseUrl) return;
    this.#entries.set(server.metadata.uid, {
      key: `${server.metadata.namespace}/${server.metadata.name}`,
      baseUrl,
      apiKey,
      dueAt: this.#now() + this.#intervalMs * (0.5 + Math.random() / 2),
    });
  }

  forget(server: TerdutServer): void {
    this.#entries.delete(server.metadata.uid);
  }

  /** Ticks once a second until `signal` aborts. */
  start(signal: AbortSignal): void {
    this.#timer = setInterval(() => void this.tick(), 1000);
    this.#timer.unref();
    signal.addEventListener('abort', () => clearInterval(this.#timer), { once: true });
  }

  /** Checks up to `perSecond` due keys. */
  async tick(): Promise<void> {
    const now = this.#now();
    const due = [...this.#entries.entries()]
      .filter(([, entry]) => entry.dueAt <= now)
      .sort(([, a], [, b]) => a.dueAt - b.dueAt)
      .slice(0, this.#perSecond);
    await Promise.all(
      due.map(async ([uid, entry]) => {
        entry.dueAt = now + this.#intervalMs;
        this.checks += 1;
        try {
          await this.#client(entry.baseUrl, entry.apiKey).users.me();
        } catch (error) {
          if (error instanceof TerdutApiError && (error.status === 401 || error.status === 403)) {
            this.#log.warn('the recorded key was refused; reconciling to replace it', { key: entry.key });
            this.#entries.delete(uid);
            this.#onRefused(entry.key);
          } else {
            // Unreachable or failing: not a verdict on the key. The next check asks again.
            this.#log.debug('could not verify the recorded key', {
              key: entry.key,
              error: (error as Error).message,
            });
          }
        }
      }),
    );
  }
}
