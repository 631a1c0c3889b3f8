import type { Database, Queryable } from '../../db/database.ts';
import type { Clock } from '../../clock.ts';
import type { Metrics } from '../../metrics.ts';
import { requireAdmin, type Principal } from '../../auth/principal.ts';
import { badRequest, conflict, notFound } from '../../errors.ts';
import { parseDuration } from '../../duration.ts';
import { isUniqueViolation } from '../../db/unique-violation.ts';
import { HEARTBEAT_GROUP_PREFIX, type AlertState } from '../../domain/alerts.ts';
import {
  deleteHeartbeat,
  hasIncidentSince,
  insertHeartbeat,
  listHeartbeats,
  overdueHeartbeats,
  refreshHeartbeats,
  type HeartbeatRow,
} from '../../repositories/heartbeats.ts';
import {
  insertIncident,
  lockIncidentGroup,
  lockOpenIncidentOfGroup,
  updateIncident,
} from '../../repositories/incidents.ts';
import { insertEvents } from '../../repositories/incident-events.ts';
import type { AuditService } from '../audit.ts';
import { formatDuration } from '../format-duration.ts';
import { endPaging, startPaging } from './escalation-hooks.ts';
import { matchesAll, parseMatcher, parseMatcherToSave } from './matchers.ts';

export interface HeartbeatInput {
  name: string;
  interval: string;
  grace?: string;
  matchers?: string[];
}

/** The incident group of a heartbeat: never an Alertmanager groupKey (those start with `{`). */
export const heartbeatGroup = (id: number): string => `${HEARTBEAT_GROUP_PREFIX}${id}`;

/** The heartbeat whose missed-heartbeat incident has this group, or undefined for any other incident. */
export function heartbeatOfGroup(groupKey: string): number | undefined {
  const id = /^heartbeat:(\d+)$/.exec(groupKey)?.[1];
  return id === undefined ? undefined : Number(id);
}

/**
 * How long another replica may go on using a heartbeat list from before a
 * heartbeat was added or deleted elsewhere (this process forgets at once).
 * Reading the list was one of the round trips of every notification.
 */
export const HEARTBEAT_CACHE_MS = 5_000;

/**
 * The longest interval, and the longest grace: the sweep adds both to the
 * last sign of life in SQL, and one past PostgreSQL's range failed the
 * sweep of every heartbeat ("interval out of range").
 */
const MAX_HEARTBEAT_DURATION_MS = 365 * 24 * 3_600_000;

interface CachedMatchers {
  heartbeats: { id: number; matchers: ReturnType<typeof parseMatcher>[] }[];
  until: number;
}

/**
 * Heartbeats (dead man's switches). A heartbeat is refreshed by an alert
 * that matches it (Prometheus's always-firing Watchdog: such alerts open no
 * incident) or by POST /api/heartbeats/{id}/ping. One not refreshed within
 * interval + grace opens an incident that pages like any other; it resolves
 * itself when the heartbeat returns.
 */
export class HeartbeatService {
  readonly #db: Database;
  readonly #clock: Clock;
  readonly #metrics: Metrics;
  readonly #audit: AuditService;
  #cached: CachedMatchers | undefined;
  // A read that began before a change must not be cached after it.
  #generation = 0;

  constructor(deps: { db: Database; clock: Clock; metrics: Metrics; audit: AuditService }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#metrics = deps.metrics;
    this.#audit = deps.audit;
  }

  async list(): Promise<HeartbeatRow[]> {
    return listHeartbeats(this.#db);
  }

  async create(principal: Principal, input: HeartbeatInput, clientAddress: string): Promise<HeartbeatRow> {
    requireAdmin(principal, 'manage heartbeats');
    const name = input.name.trim();
    if (name === '' || name.length > 100) throw badRequest('field "name" must be 1 to 100 characters');
    const intervalMs = parseDuration(input.interval.trim());
    if (intervalMs === undefined || intervalMs < 30_000 || intervalMs > MAX_HEARTBEAT_DURATION_MS) {
      throw badRequest(
        `field "interval" must be a Go-style duration from 30s to 8760h (365 days), got "${input.interval.slice(0, 40)}"`,
      );
    }
    const graceText = input.grace ?? '1m';
    const graceMs = graceText.trim() === '0' ? 0 : parseDuration(graceText.trim());
    if (graceMs === undefined || graceMs > MAX_HEARTBEAT_DURATION_MS)
      throw badRequest(
        `field "grace" must be a Go-style duration up to 8760h (365 days), got "${graceText.slice(0, 40)}"`,
      );
    const matchers = input.matchers ?? [];
    matchers.forEach((text, index) => {
      try {
        parseMatcherToSave(text);
      } catch (error) {
        throw badRequest(`field "matchers.${index}": ${(error as Error).message}`);
      }
    });
    try {
      const created = await this.#db.transaction(async (tx) => {
        const heartbeat = await insertHeartbeat(
          tx,
          { name, interval_ms: intervalMs, grace_ms: graceMs, matchers },
          this.#clock.now(),
        );
        await this.#audit.record(tx, {
          actor: principal,
          action: 'heartbeat.created',
          target: `heartbeat:${heartbeat.id}`,
          detail: { name },
          clientAddress,
        });
        return heartbeat;
      });
      this.#forgetMatchers();
      return created;
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict(`a heartbeat named "${name}" exists; choose another name`);
      throw error;
    }
  }

  async delete(principal: Principal, id: number, clientAddress: string): Promise<void> {
    requireAdmin(principal, 'manage heartbeats');
    await this.#db.transaction(async (tx) => {
      const deleted = await deleteHeartbeat(tx, id);
      if (deleted === undefined) throw notFound(`heartbeat ${id}`);
      // Nothing can make a deleted heartbeat return: its missed-heartbeat
      // incident would stay open and escalate for good.
      await this.#resolveMissed(tx, deleted, {
        source: 'manual',
        userId: principal.userId,
        detail: `heartbeat ${deleted.name} was deleted`,
      });
      await this.#audit.record(tx, {
        actor: principal,
        action: 'heartbeat.deleted',
        target: `heartbeat:${id}`,
        detail: { name: deleted.name },
        clientAddress,
      });
    });
    this.#forgetMatchers();
  }

  /** A ping (cron jobs): the heartbeat is seen now; its missed-heartbeat incident resolves. */
  async ping(id: number): Promise<HeartbeatRow> {
    const [heartbeat] = await this.#refresh([id]);
    if (heartbeat === undefined) throw notFound(`heartbeat ${id}`);
    return heartbeat;
  }

  /**
   * Takes the alerts that match a heartbeat (with matchers) out of a
   * notification and refreshes those heartbeats; returns the other alerts.
   */
  async absorb(alerts: AlertState[]): Promise<AlertState[]> {
    const heartbeats = await this.#matchers();
    if (heartbeats.length === 0) return alerts;
    const seen = new Set<number>();
    const remaining = alerts.filter((alert) => {
      const matching = heartbeats.filter((heartbeat) => matchesAll(heartbeat.matchers, alert.labels));
      if (matching.length === 0) return true;
      // A resolved Watchdog is not a sign of life.
      if (alert.status === 'firing') for (const heartbeat of matching) seen.add(heartbeat.id);
      return false;
    });
    await this.#refresh([...seen]);
    return remaining;
  }

  /** Opens an incident for every overdue heartbeat that has none (the background sweep). */
  async sweep(): Promise<number> {
    let opened = 0;
    for (const heartbeat of await overdueHeartbeats(this.#db, this.#clock.now())) {
      const created = await this.#db.transaction(async (tx) => {
        const group = heartbeatGroup(heartbeat.id);
        await lockIncidentGroup(tx, group);
        if ((await lockOpenIncidentOfGroup(tx, group)) !== undefined) return false;
        // Resolved by hand during this silence: like an alert that keeps
        // firing through a manual resolve, it opens nothing until it returns.
        if (await hasIncidentSince(tx, group, heartbeat.last_seen_at)) return false;
        const now = this.#clock.now();
        const missedSince = new Date(heartbeat.last_seen_at.getTime() + Number(heartbeat.interval_ms));
        const labels = { alertname: 'HeartbeatMissed', heartbeat: heartbeat.name };
        const incident = await insertIncident(tx, {
          group_key: group,
          title: `Heartbeat ${heartbeat.name} missed since ${missedSince.toISOString()}`,
          group_labels: labels,
          triggered_at: now,
          triggered_detail: `no sign of life for ${formatDuration(now.getTime() - heartbeat.last_seen_at.getTime())} (interval ${formatDuration(Number(heartbeat.interval_ms))}, grace ${formatDuration(Number(heartbeat.grace_ms))})`,
        });
        await startPaging(tx, incident, labels, now);
        return true;
      });
      if (created) {
        opened += 1;
        this.#metrics.incidentsOpened.inc();
      }
    }
    return opened;
  }

  async #refresh(ids: number[]): Promise<HeartbeatRow[]> {
    if (ids.length === 0) return [];
    const refreshed = await this.#db.transaction((tx) => refreshHeartbeats(tx, ids, this.#clock.now()));
    for (const heartbeat of refreshed) {
      await this.#db.transaction((tx) =>
        this.#resolveMissed(tx, heartbeat, {
          source: 'alerts',
          detail: `heartbeat ${heartbeat.name} returned`,
        }),
      );
    }
    return refreshed;
  }

  /** Resolves the heartbeat's open missed-heartbeat incident, if any: it returned, or was deleted. */
  async #resolveMissed(
    tx: Queryable,
    heartbeat: HeartbeatRow,
    how: { source: 'alerts' | 'manual'; detail: string; userId?: number },
  ): Promise<void> {
    const group = heartbeatGroup(heartbeat.id);
    await lockIncidentGroup(tx, group);
    const open = await lockOpenIncidentOfGroup(tx, group);
    if (open === undefined) return;
    const now = this.#clock.now();
    await endPaging(tx, open.id, now);
    await updateIncident(tx, open.id, {
      status: 'resolved',
      resolved_at: now,
      resolution_source: how.source,
    });
    await insertEvents(
      tx,
      [
        {
          incident_id: open.id,
          type: 'resolved',
          detail: how.detail,
          ...(how.userId !== undefined ? { user_id: how.userId } : {}),
        },
      ],
      now,
    );
    this.#metrics.incidentsResolved.inc({ source: how.source });
  }

  /** The heartbeats that alerts can refresh (those with matchers), cached for HEARTBEAT_CACHE_MS. */
  async #matchers(): Promise<CachedMatchers['heartbeats']> {
    if (this.#cached !== undefined && this.#cached.until > performance.now()) return this.#cached.heartbeats;
    const generation = this.#generation;
    const heartbeats = (await listHeartbeats(this.#db))
      .filter((heartbeat) => heartbeat.matchers.length > 0)
      .map((heartbeat) => ({ id: heartbeat.id, matchers: heartbeat.matchers.map(parseMatcher) }));
    if (generation === this.#generation) {
      this.#cached = { heartbeats, until: performance.now() + HEARTBEAT_CACHE_MS };
    }
    return heartbeats;
  }

  #forgetMatchers(): void {
    this.#generation += 1;
    this.#cached = undefined;
  }
}
