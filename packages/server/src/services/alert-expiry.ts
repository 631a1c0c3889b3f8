import type { Database, Queryable } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Metrics } from '../metrics.ts';
import {
  expireAlerts,
  groupsWithStaleAlerts,
  lockStaleAlertsOfGroup,
  type AlertRow,
} from '../repositories/alerts.ts';
import { currentOccurrenceLinks } from '../repositories/incident-alerts.ts';
import { insertEvents, type NewIncidentEvent } from '../repositories/incident-events.ts';
import {
  groupsOfOpenIncidentsWithoutFiringAlerts,
  lockOpenIncidentOfGroup,
  tryLockIncidentGroup,
  type IncidentRow,
} from '../repositories/incidents.ts';
import { resolveIfAllAlertsResolved } from './incident-resolution.ts';
import { formatDuration } from './format-duration.ts';

/**
 * Marks the group's firing alerts that no notification carried for
 * `staleAfterMs` as resolved (`resolution_source: expiry`): a resolved
 * notification can be lost (max_alerts truncation, failed flushes). Each
 * expiry is an `alert_resolved` event on the incident the occurrence belongs
 * to. Call with the group locked; the caller decides whether incidents resolve.
 */
export async function expireStaleAlertsOfGroup(
  tx: Queryable,
  groupKey: string,
  now: Date,
  staleAfterMs: number,
  /** The stale alerts, when the caller has locked them already (intake, repositories/alert-groups.ts). */
  locked?: AlertRow[],
): Promise<AlertRow[]> {
  const cutoff = new Date(now.getTime() - staleAfterMs);
  const stale = locked ?? (await lockStaleAlertsOfGroup(tx, groupKey, cutoff));
  if (stale.length === 0) return [];
  const expired = await expireAlerts(
    tx,
    stale.map((alert) => alert.id),
    staleAfterMs,
  );
  const links = await currentOccurrenceLinks(tx, groupKey, expired);
  const events: NewIncidentEvent[] = [];
  for (const alert of expired) {
    // Newest first: the incident this occurrence last joined.
    const link = links.find(
      (candidate) =>
        candidate.alert_id === alert.id &&
        candidate.occurrence_starts_at.getTime() === alert.starts_at.getTime(),
    );
    if (link === undefined) continue;
    events.push({
      incident_id: link.incident_id,
      type: 'alert_resolved',
      alert_id: alert.id,
      detail: `${alert.name || alert.fingerprint} was not refreshed for ${formatDuration(staleAfterMs)}; presumed resolved`,
    });
  }
  await insertEvents(tx, events, now);
  return expired;
}

/** What one staleness sweep did. */
export interface ExpirySweepResult {
  expiredAlerts: number;
  resolvedIncidents: number;
}

/**
 * The background staleness sweep. Safe with several replicas: each group is
 * handled under the same advisory lock the intake takes, and a group another
 * replica (or a notification) holds is skipped until the next sweep.
 */
export class AlertExpiryService {
  readonly #db: Database;
  readonly #clock: Clock;
  readonly #metrics: Metrics;
  readonly #staleAfterMs: number;

  constructor(deps: { db: Database; clock: Clock; metrics: Metrics; config: { alertStaleAfterMs: number } }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#metrics = deps.metrics;
    this.#staleAfterMs = deps.config.alertStaleAfterMs;
  }

  /** Expires every stale alert now, resolving incidents left without firing alerts. */
  async sweep(): Promise<ExpirySweepResult> {
    const result: ExpirySweepResult = { expiredAlerts: 0, resolvedIncidents: 0 };
    const visited = new Set<string>();
    for (;;) {
      const groups = await groupsWithStaleAlerts(
        this.#db,
        this.#staleBefore(this.#clock.now()),
        [...visited],
        100,
      );
      if (groups.length === 0) break;
      for (const groupKey of groups) {
        visited.add(groupKey);
        const outcome = await this.#db.transaction(async (tx) => {
          if (!(await tryLockIncidentGroup(tx, groupKey))) return { expired: 0, resolved: undefined };
          const open: IncidentRow | undefined = await lockOpenIncidentOfGroup(tx, groupKey);
          // Read after the wait for the incident (and the groups before it): what people did meanwhile comes first.
          const now = this.#clock.now();
          const expired = await expireStaleAlertsOfGroup(tx, groupKey, now, this.#staleAfterMs);
          const resolved =
            open !== undefined && expired.length > 0
              ? await resolveIfAllAlertsResolved(tx, open, now, this.#staleBefore(now))
              : undefined;
          return { expired: expired.length, resolved };
        });
        result.expiredAlerts += outcome.expired;
        if (outcome.resolved) {
          result.resolvedIncidents += 1;
          this.#metrics.incidentsResolved.inc({ source: 'alerts' });
        }
      }
    }
    result.resolvedIncidents += await this.#resolveLeftOpen();
    return result;
  }

  /** A firing alert last seen before this is stale (TERDUT_ALERT_STALE_AFTER). */
  #staleBefore(now: Date): Date {
    return new Date(now.getTime() - this.#staleAfterMs);
  }

  /**
   * Resolves the open incidents none of whose alerts fires any more. An
   * alert Alertmanager routes into two groups is one alert here, stored with
   * the group that notified it last; when its resolve (or its expiry) came
   * through that group, the other group's incident was left open for good,
   * with nothing firing. Each under its group's lock, as the intake takes it.
   */
  async #resolveLeftOpen(): Promise<number> {
    let resolved = 0;
    const visited = new Set<string>();
    for (;;) {
      const groups = await groupsOfOpenIncidentsWithoutFiringAlerts(
        this.#db,
        [...visited],
        100,
        this.#staleBefore(this.#clock.now()),
      );
      if (groups.length === 0) return resolved;
      for (const groupKey of groups) {
        visited.add(groupKey);
        const done = await this.#db.transaction(async (tx) => {
          if (!(await tryLockIncidentGroup(tx, groupKey))) return undefined;
          const open = await lockOpenIncidentOfGroup(tx, groupKey);
          if (open === undefined) return undefined;
          const now = this.#clock.now();
          return resolveIfAllAlertsResolved(tx, open, now, this.#staleBefore(now));
        });
        if (done !== undefined) {
          resolved += 1;
          this.#metrics.incidentsResolved.inc({ source: 'alerts' });
        }
      }
    }
  }
}
