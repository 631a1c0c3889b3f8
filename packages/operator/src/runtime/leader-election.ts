/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go does it:
 * lease duration 15 s, renew deadline 10 s, retry period 2 s.
 *
 * - A candidate takes the lease when it is free, released (empty holder), or
 *   its holder has not renewed for a lease duration. "Not renewed" is
 *   measured on this replica's own clock from when it last saw the record
 *   change, so clock skew between nodes cannot make two leaders.
 * - Every write is an optimistic-concurrency update (resourceVersion), so two
 *   candidates racing for a free lease cannot both win.
 * - The leader renews every retry period; if it cannot renew for the renew
 *   deadline it has lost the lease and must stop acting (`onLost`): another
 *   replica may already lead.
 * - `release()` (on SIGTERM) empties the holder, so the next replica takes
 *   over within a retry period instead of waiting out the lease.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { isAlreadyExists, isConflict, resourcePath, resources, type KubeClient } from './kube-client.ts';

interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: {
    holderIdentity?: string | null;
    leaseDurationSeconds?: number;
    acquireTime?: string | null;
    renewTime?: string | null;
    leaseTransitions?: number;
  };
}

export interface LeaderElectionOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  /** Unique per replica; defaults to `<hostname>_<random>`. */
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  onStartedLeading: () => void;
  /** Leadership lost without `release()`: stop acting now (main exits). */
  onLost: () => void;
  onError?: (error: unknown) => void;
}

/** RFC 3339 with microseconds, the MicroTime format Lease fields use. */
const microTime = (date: Date): string => date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export class LeaderElector {
  readonly identity: string;
  readonly #options: Required<Omit<LeaderElectionOptions, 'onError' | 'identity'>> &
    Pick<LeaderElectionOptions, 'onError'>;
  readonly #path: string;
  #leading = false;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  /** The last lease record seen, and when (our clock) it last changed. */
  #observed: { record: string; at: number } | undefined;
  #lastRenew = 0;
  #inFlight: Promise<void> | undefined;

  constructor(options: LeaderElectionOptions) {
    this.identity = options.identity ?? `${hostname()}_${randomBytes(4).toString('hex')}`;
    this.#options = {
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      ...options,
    };
    this.#path = resourcePath(resources.leases, options.namespace, options.name);
  }

  get leading(): boolean {
    return this.#leading;
  }

  /** Starts trying to acquire, then renewing. */
  start(): void {
    this.#schedule(0);
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#inFlight = this.#tick().finally(() => {
        this.#inFlight = undefined;
        this.#schedule(this.#options.retryPeriodMs);
      });
    }, delayMs);
  }

  async #tick(): Promise<void> {
    let ok = false;
    // An attempt never outlasts the renew deadline (a leader's counted from
    // its last renewal): a request hanging on a stalled connection must not
    // keep a leader acting after the others may have taken the lease.
    const started = Date.now();
    const budgetMs = this.#leading
      ? this.#lastRenew + this.#options.renewDeadlineMs - started
      : this.#options.renewDeadlineMs;
    try {
      ok = await this.#tryAcquireOrRenew(
        this.#options.client.withSignal(AbortSignal.timeout(Math.max(1, budgetMs))),
        started,
      );
    } catch (error) {
      this.#options.onError?.(error);
    }
    if (this.#stopped) return;
    const now = Date.now();
    if (ok) {
      this.#lastRenew = started;
      if (!this.#leading) {
        this.#leading = true;
        this.#options.onStartedLeading();
      }
    } else if (this.#leading && now - this.#lastRenew >= this.#options.renewDeadlineMs) {
      this.#leading = false;
      this.#stopped = true;
      this.#options.onLost();
    }
  }

  async #tryAcquireOrRenew(client: KubeClient, startedAt: number): Promise<boolean> {
    const { namespace, name } = this.#options;
    const now = new Date(startedAt);
    const durationSeconds = Math.round(this.#options.leaseDurationMs / 1000);
    const current = await client.get<Lease>(this.#path);
    if (!current) {
      try {
        await client.create(resourcePath(resources.leases, namespace), {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace },
          spec: {
            holderIdentity: this.identity,
            leaseDurationSeconds: durationSeconds,
            acquireTime: microTime(now),
            renewTime: microTime(now),
            leaseTransitions: 0,
          },
        } satisfies Lease);
        return true;
      } catch (error) {
        if (isAlreadyExists(error)) return false;
        throw error;
      }
    }

    const record = JSON.stringify(current.spec);
    if (this.#observed?.record !== record) this.#observed = { record, at: Date.now() };
    const holder = current.spec.holderIdentity ?? '';
    const mine = holder === this.identity;
    const leaseMs = (current.spec.leaseDurationSeconds ?? durationSeconds) * 1000;
    if (!mine && holder !== '' && this.#observed.at + leaseMs > Date.now()) return false;

    const spec: Lease['spec'] = {
      ...current.spec,
      holderIdentity: this.identity,
      leaseDurationSeconds: durationSeconds,
      renewTime: microTime(now),
    };
    if (!mine) {
      spec.acquireTime = microTime(now);
      spec.leaseTransitions = (current.spec.leaseTransitions ?? 0) + 1;
    }
    try {
      const updated = await client.update<Lease>(this.#path, { ...current, spec });
      this.#observed = { record: JSON.stringify(updated.spec), at: Date.now() };
      return true;
    } catch (error) {
      if (isConflict(error)) return false;
      throw error;
    }
  }

  /**
   * Stops campaigning and, if leading, hands the lease back (empty holder,
   * 1 s duration) so a standby takes over at once. Call it after the
   * controllers have stopped, so no write of ours lands after the handover.
   */
  async release(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#inFlight;
    if (!this.#leading) return;
    this.#leading = false;
    const current = await this.#options.client.get<Lease>(this.#path);
    if (!current || current.spec.holderIdentity !== this.identity) return;
    const now = microTime(new Date());
    await this.#options.client.update(this.#path, {
      ...current,
      spec: {
        ...current.spec,
        holderIdentity: '',
        leaseDurationSeconds: 1,
        renewTime: now,
        acquireTime: now,
      },
    });
  }
}
