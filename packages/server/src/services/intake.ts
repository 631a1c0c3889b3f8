import type { Database, Queryable } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Metrics } from '../metrics.ts';
import { isUniqueViolation } from '../db/unique-violation.ts';
import type { AlertGroupNotification, AlertState } from '../domain/alerts.ts';
import {
  insertAlerts,
  lockAlertsByFingerprint,
  touchAlerts,
  updateAlertState,
  type AlertRow,
  type OccurrenceUpdate,
} from '../repositories/alerts.ts';
import {
  insertIncident,
  lockIncidentGroup,
  lockOpenIncidentOfGroup,
  updateIncident,
  type IncidentRow,
  markAlertsLeftOut,
} from '../repositories/incidents.ts';
import {
  linkAlerts,
  currentOccurrenceLinks,
  type IncidentAlertLink,
} from '../repositories/incident-alerts.ts';
import {
  lockGroupForNotification,
  openIfNewGroups,
  touchIfRepeat,
  type LockedGroup,
  type NewGroupCall,
  type NewGroupOutcome,
} from '../repositories/alert-groups.ts';
import { GatheredCalls } from '../gathered-calls.ts';
import { GroupHints } from './group-hints.ts';
import { RoutingCache } from './paging/policy-routing.ts';
import { insertEvents, type NewIncidentEvent } from '../repositories/incident-events.ts';
import { raisesSeverity, severityRank } from './severity.ts';
import { expireStaleAlertsOfGroup } from './alert-expiry.ts';
import { incidentTitle } from './incident-title.ts';
import { resolveIfAllAlertsResolved } from './incident-resolution.ts';
import { batchRowsFor, inBatches } from '../db/batches.ts';
import { noteUpdateForAcknowledger, startPaging } from './paging/escalation-hooks.ts';

/**
 * How one alert of a notification relates to what is stored:
 * - `new`: a fingerprint never seen; `new_occurrence`: it fired again (later startsAt);
 * - `revived`: the server had expired it, yet Alertmanager says it still fires;
 * - `resolved`: it stopped firing; `changed`: same state, other annotations;
 * - `unchanged`: a repeat or a duplicate (only "last seen" moves);
 * - `outdated`: an older occurrence or a late duplicate of a resolved one: ignored.
 */
type AlertChange = 'new' | 'new_occurrence' | 'revived' | 'resolved' | 'changed' | 'unchanged' | 'outdated';

interface ReceivedAlert {
  row: AlertRow;
  change: AlertChange;
}

/** What a notification did, for the metrics and the caller. */
export interface IntakeResult {
  /** The group's open incident after the notification, if any. */
  incident_id?: number;
  opened: boolean;
  resolved: boolean;
}

// Retry a notification that lost the race for the one open incident of a
// group (a unique violation); the advisory lock makes this practically unreachable.
const MAX_ATTEMPTS = 3;

/**
 * New groups of up to this many alerts are gathered: while two statements
 * of new groups are in flight (one on PGlite, a single connection), the
 * next ones wait and go together in one (gathered-calls.ts). An alert storm
 * is many small new groups at once, and each cost a statement and a commit
 * of its own; larger groups gain nothing and go alone.
 */
const GATHERED_GROUP_ALERTS = 10;
const GATHERED_GROUPS_PER_STATEMENT = 16;

/**
 * Receives Alertmanager notifications. Each carries the group's whole current
 * state: alerts are upserted by fingerprint and correlated into the group's
 * open incident in ONE transaction, serialized per group across replicas.
 */
export class IntakeService {
  readonly #db: Database;
  readonly #clock: Clock;
  readonly #metrics: Metrics;
  readonly #staleAfterMs: number;
  readonly #batchRows: number;
  readonly #onIncidentOpened: () => void;
  readonly #absorbHeartbeats: (alerts: AlertState[]) => Promise<AlertState[]>;
  readonly #hints = new GroupHints();
  readonly #routing = new RoutingCache();
  readonly #newGroups: GatheredCalls<NewGroupCall, NewGroupOutcome>;

  constructor(deps: {
    db: Database;
    clock: Clock;
    metrics: Metrics;
    config: { alertStaleAfterMs: number };
    /** Called after a commit that opened an incident (paging runs at once rather than at its next poll). */
    onIncidentOpened?: () => void;
    /** Takes heartbeat alerts (Watchdog) out of a notification, refreshing their heartbeats. */
    absorbHeartbeats?: (alerts: AlertState[]) => Promise<AlertState[]>;
  }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#metrics = deps.metrics;
    this.#staleAfterMs = deps.config.alertStaleAfterMs;
    this.#batchRows = batchRowsFor(deps.db);
    this.#onIncidentOpened = deps.onIncidentOpened ?? (() => {});
    this.#absorbHeartbeats = deps.absorbHeartbeats ?? ((alerts) => Promise.resolve(alerts));
    this.#newGroups = new GatheredCalls({
      run: (calls) => openIfNewGroups(this.#db, calls),
      limit: deps.db.kind === 'pglite' ? 1 : 2,
      maxBatch: GATHERED_GROUPS_PER_STATEMENT,
    });
  }

  /**
   * Applies one notification (parsed by an adapter such as
   * `alertmanager/parse.ts`). Resolves only after the transaction committed;
   * throws only for server faults, which Alertmanager retries.
   */
  async receive(notification: AlertGroupNotification): Promise<IntakeResult> {
    let result: IntakeResult;
    try {
      const carried = notification.alerts.length;
      notification.alerts = await this.#absorbHeartbeats(notification.alerts);
      // Only heartbeat alerts (a Watchdog group): a sign of life, never an incident.
      result =
        carried > 0 && notification.alerts.length === 0
          ? { opened: false, resolved: false }
          : await this.#applyWithRetry(notification);
    } catch (error) {
      this.#metrics.webhookNotifications.inc({ outcome: 'failed' });
      throw error;
    }
    // Counted after commit, so a rolled-back notification counts once, as failed.
    this.#metrics.webhookNotifications.inc({ outcome: 'accepted' });
    for (const status of ['firing', 'resolved'] as const) {
      const count = notification.alerts.filter((alert) => alert.status === status).length;
      if (count > 0) this.#metrics.alertsReceived.inc({ status }, count);
    }
    if (result.opened) {
      this.#metrics.incidentsOpened.inc();
      this.#onIncidentOpened();
    }
    if (result.resolved) this.#metrics.incidentsResolved.inc({ source: 'alerts' });
    return result;
  }

  async #applyWithRetry(notification: AlertGroupNotification): Promise<IntakeResult> {
    const { groupKey, alerts } = notification;
    // The two commonest notifications in one call each, when the database
    // can prove that is what they are; otherwise (nothing changed) the full intake.
    if (alerts.length <= this.#batchRows) {
      if (this.#hints.isRepeat(groupKey, alerts)) {
        // The steady state: the same firing group again.
        const now = this.#clock.now();
        const incidentId = await touchIfRepeat(this.#db, groupKey, alerts, now, this.#staleBefore(now));
        if (incidentId !== undefined) return { incident_id: incidentId, opened: false, resolved: false };
      } else if (this.#hints.isUnseen(groupKey) && isNewGroupShaped(alerts)) {
        // A group's first notification: it opens an incident.
        const incidentId = await this.#openNewGroup(notification);
        if (incidentId !== undefined) {
          this.#hints.remember(groupKey, alerts, true);
          return { incident_id: incidentId, opened: true, resolved: false };
        }
      }
    }
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await this.#db.transaction((tx) => this.#apply(tx, notification));
        this.#hints.remember(groupKey, alerts, result.incident_id !== undefined);
        return result;
      } catch (error) {
        if (!isUniqueViolation(error) || attempt >= MAX_ATTEMPTS) throw error;
      }
    }
  }

  /**
   * Opens the incident of a group the database proves new, in one call
   * (openIfNewGroups, gathered with other new groups), routed with the
   * cached policies; undefined when the group is not new, and nothing changed.
   */
  async #openNewGroup(notification: AlertGroupNotification): Promise<number | undefined> {
    const { groupKey, alerts } = notification;
    const labels = routingLabelsOf(notification);
    const title = incidentTitle(notification);
    const severity = severityAfter({ severity: null, severity_rank: 0 }, alerts);
    // Twice at most: a policy edit between reading the policies and the call makes the call refuse.
    for (let attempt = 1; attempt <= 2; attempt++) {
      const routing = await this.#routing.route(this.#db, labels);
      const now = this.#clock.now();
      let outcome;
      try {
        const call: NewGroupCall = {
          groupKey,
          alerts,
          incident: {
            title,
            group_labels: notification.groupLabels,
            ...severity,
            routing: { ...routing, labels },
          },
          now,
          staleBefore: this.#staleBefore(now),
        };
        outcome =
          alerts.length <= GATHERED_GROUP_ALERTS
            ? await this.#newGroups.call(call)
            : (await openIfNewGroups(this.#db, [call]))[0]!;
      } catch (error) {
        // Another group's notification stored one of these alerts first; the full intake handles that.
        if (isUniqueViolation(error)) return undefined;
        throw error;
      }
      if (outcome === 'not new') return undefined;
      if (outcome === 'routing changed') {
        this.#routing.forget();
        continue;
      }
      return outcome.opened;
    }
    return undefined;
  }

  /** A firing alert last seen before this is presumed resolved (TERDUT_ALERT_STALE_AFTER). */
  #staleBefore(now: Date): Date {
    return new Date(now.getTime() - this.#staleAfterMs);
  }

  /**
   * One notification, in order: lock the group, store the alerts, open an
   * incident for a new occurrence, join the open incident, note resolves on
   * closed incidents, expire what nothing refreshed, resolve when all is quiet.
   */
  async #apply(tx: Queryable, notification: AlertGroupNotification): Promise<IntakeResult> {
    const { groupKey } = notification;
    // Set-at-a-time writes go in slices (db/batches.ts): the largest
    // notification must not hold PGlite's thread, and so /healthz, for long.
    const batch = this.#batchRows;
    // Every writer of this group waits here, on every replica, until we commit.
    const staleBefore = this.#staleBefore(this.#clock.now());
    const locked = await lockGroup(tx, groupKey, notification.alerts, staleBefore, batch);
    // The clock is read after the wait: people may have acted on the incident
    // meanwhile, and what this notification does comes after that (else its
    // resolve is stamped before an acknowledgement it followed).
    const now = this.#clock.now();
    let incident = locked.incident;
    const live = (await upsertAlerts(tx, notification.alerts, locked.alerts, now, batch)).filter(
      (alert) => alert.change !== 'outdated',
    );
    const liveIds = new Set(live.map((alert) => alert.row.id));
    const links =
      locked.links?.filter((link) => liveIds.has(link.alert_id)) ??
      (await inBatches(
        live.map((alert) => alert.row),
        batch,
        (rows) => currentOccurrenceLinks(tx, groupKey, rows),
      ));

    let opened = false;
    if (incident === undefined) {
      incident = await openForNewOccurrence(tx, notification, live, links, now);
      opened = incident !== undefined;
    }
    const joined =
      incident === undefined ? undefined : await joinIncident(tx, incident, live, links, now, batch);
    if (joined !== undefined) incident = joined.incident;
    const afterClose = resolvedAfterClose(live, links, joined?.handled ?? new Set());
    await inBatches([...(joined?.events ?? []), ...afterClose], batch, (slice) =>
      insertEvents(tx, slice, now),
    );

    // The notification refreshed what it carried; whatever the group has
    // that nothing refreshed for too long is presumed resolved.
    await expireStaleAlertsOfGroup(
      tx,
      groupKey,
      now,
      this.#staleAfterMs,
      locked.stale?.filter((row) => !liveIds.has(row.id)),
    );

    let resolved = false;
    // A carried firing alert is a member of the open incident by now (it
    // joined, or was one), so the incident cannot be quiet: no need to count.
    const carriesFiring = live.some((alert) => alert.row.status === 'firing');
    if (incident !== undefined && !carriesFiring) {
      if (notification.alertsLeftOut === true) {
        // The sender left alerts out (max_alerts), and one of those may be
        // firing: nothing here says it is quiet. Noted, so that the
        // staleness sweep waits for the group too (migration 1080).
        if (incident.status !== 'resolved') await markAlertsLeftOut(tx, incident.id, now);
      } else {
        const closed = await resolveIfAllAlertsResolved(tx, incident, now);
        if (closed !== undefined) {
          resolved = true;
          incident = closed;
        }
      }
    }
    return {
      ...(incident !== undefined && incident.status !== 'resolved' ? { incident_id: incident.id } : {}),
      opened,
      resolved,
    };
  }
}

/**
 * Step: takes the group's lock and locks what the notification works on.
 * Up to one slice of alerts, in one round trip (repositories/alert-groups.ts);
 * larger notifications lock step by step, in slices, and leave the stale
 * alerts and the links to be read later (undefined).
 */
async function lockGroup(
  tx: Queryable,
  groupKey: string,
  alerts: AlertState[],
  staleBefore: Date,
  batch: number,
): Promise<Omit<LockedGroup, 'stale' | 'links'> & Partial<Pick<LockedGroup, 'stale' | 'links'>>> {
  // Sorted before slicing: concurrent writers lock the same slices in the same order (no deadlock).
  const fingerprints = [...new Set(alerts.map((alert) => alert.fingerprint))].sort();
  if (fingerprints.length <= batch) return lockGroupForNotification(tx, groupKey, fingerprints, staleBefore);
  await lockIncidentGroup(tx, groupKey);
  const incident = await lockOpenIncidentOfGroup(tx, groupKey);
  return {
    incident,
    alerts: await inBatches(fingerprints, batch, (slice) => lockAlertsByFingerprint(tx, slice)),
  };
}

/** The link of this alert's current occurrence to an incident of the group, if it has one. */
function occurrenceLink(links: IncidentAlertLink[], row: AlertRow): IncidentAlertLink | undefined {
  return links.find((link) => link.alert_id === row.id && sameTime(link.occurrence_starts_at, row.starts_at));
}

/**
 * Step: with no open incident, opens one when a firing alert is a new
 * occurrence. Manual resolve is terminal: an occurrence already part of an
 * incident of this group (it kept firing through the resolve) opens nothing;
 * a fingerprint new to the group, an alert that fired again, or one we had
 * wrongly presumed resolved does.
 */
async function openForNewOccurrence(
  tx: Queryable,
  notification: AlertGroupNotification,
  live: ReceivedAlert[],
  links: IncidentAlertLink[],
  now: Date,
): Promise<IncidentRow | undefined> {
  const openers = live.filter(
    (alert) =>
      alert.row.status === 'firing' &&
      (alert.change === 'revived' || occurrenceLink(links, alert.row) === undefined),
  );
  if (openers.length === 0) return undefined;
  const title = incidentTitle(notification);
  const incident = await insertIncident(tx, {
    group_key: notification.groupKey,
    title,
    group_labels: notification.groupLabels,
    triggered_at: now,
    triggered_detail: title,
  });
  // The decision to page commits with the incident.
  await startPaging(tx, incident, routingLabelsOf(notification), now);
  return incident;
}

/**
 * Step: while a group has an open incident, its firing alerts join it (an
 * occurrence that began and ended between two notifications joins too), and
 * members that stopped firing get `alert_resolved`. Returns the incident with
 * its severity raised, the events, and the alerts it accounted for.
 */
async function joinIncident(
  tx: Queryable,
  incident: IncidentRow,
  live: ReceivedAlert[],
  links: IncidentAlertLink[],
  now: Date,
  batch: number,
): Promise<{ incident: IncidentRow; events: NewIncidentEvent[]; handled: Set<number> }> {
  const events: NewIncidentEvent[] = [];
  const handled = new Set<number>();
  const joining: AlertRow[] = [];
  for (const { row, change } of live) {
    const link = links.find(
      (candidate) => candidate.alert_id === row.id && candidate.incident_id === incident.id,
    );
    const fresh = change === 'new' || change === 'new_occurrence' || change === 'revived';
    const member =
      link !== undefined && sameTime(link.occurrence_starts_at, row.starts_at) && change !== 'revived';
    if (!member && (row.status === 'firing' || fresh)) {
      joining.push(row);
      handled.add(row.id);
      events.push({
        incident_id: incident.id,
        type: 'alert_added',
        alert_id: row.id,
        detail: alertLabel(row),
      });
      if (row.status === 'resolved') events.push(alertResolvedEvent(incident.id, row));
    } else if (member && change === 'resolved') {
      handled.add(row.id);
      events.push(alertResolvedEvent(incident.id, row));
    }
  }
  if (joining.length === 0) return { incident, events, handled };
  await inBatches(
    joining.map((row) => ({ alert_id: row.id, occurrence_starts_at: row.starts_at })),
    batch,
    (slice) => linkAlerts(tx, incident.id, slice, now),
  );
  const raised = await raiseSeverity(tx, incident, joining);
  // An acknowledged incident's acknowledger hears once of what joined it (paging/escalation-hooks.ts).
  if (joining.some((row) => row.status === 'firing')) await noteUpdateForAcknowledger(tx, raised, now);
  return { incident: raised, events, handled };
}

/**
 * Step: an alert that resolves after its incident was closed by hand still
 * leaves its mark on that incident's timeline.
 */
function resolvedAfterClose(
  live: ReceivedAlert[],
  links: IncidentAlertLink[],
  handled: Set<number>,
): NewIncidentEvent[] {
  const events: NewIncidentEvent[] = [];
  for (const { row, change } of live) {
    if (change !== 'resolved' || handled.has(row.id)) continue;
    const link = occurrenceLink(links, row);
    if (link !== undefined) events.push(alertResolvedEvent(link.incident_id, row));
  }
  return events;
}

/**
 * Stores each alert's state and says how it changed; unchanged ones only get
 * "last seen". `stored`: the stored alerts with these fingerprints, locked.
 */
async function upsertAlerts(
  tx: Queryable,
  alerts: AlertState[],
  stored: AlertRow[],
  now: Date,
  batch: number,
): Promise<ReceivedAlert[]> {
  const byFingerprint = new Map(alerts.map((alert) => [alert.fingerprint, alert]));
  const existing = new Map(stored.map((row) => [row.fingerprint, row]));
  const received: ReceivedAlert[] = [];
  const missing = alerts.filter((alert) => !existing.has(alert.fingerprint));
  const inserted = await inBatches(missing, batch, (slice) => insertAlerts(tx, slice, now));
  for (const row of inserted) received.push({ row, change: 'new' });
  if (inserted.length < missing.length) {
    // Another group's notification inserted some of them first (the same
    // alert routed to two groups): lock those and treat them as existing.
    const insertedNow = new Set(inserted.map((row) => row.fingerprint));
    const raced = missing
      .filter((alert) => !insertedNow.has(alert.fingerprint))
      .map((alert) => alert.fingerprint);
    for (const row of await lockAlertsByFingerprint(tx, raced)) existing.set(row.fingerprint, row);
  }
  const touched: { id: number; state: AlertState }[] = [];
  for (const [fingerprint, row] of existing) {
    const incoming = asKnownOccurrence(row, byFingerprint.get(fingerprint)!, now);
    const change = classify(row, incoming, now);
    switch (change) {
      case 'outdated':
        received.push({ row, change });
        break;
      case 'unchanged':
        touched.push({ id: row.id, state: incoming });
        received.push({ row, change });
        break;
      default:
        received.push({
          row: await updateAlertState(tx, row, incoming, now, occurrenceUpdate(change)),
          change,
        });
    }
  }
  await inBatches(touched, batch, (rows) => touchAlerts(tx, rows, alerts[0]?.group_key ?? '', now));
  // Payload order, for a timeline that reads like the notification.
  const order = new Map(alerts.map((alert, index) => [alert.fingerprint, index]));
  return received.sort((a, b) => order.get(a.row.fingerprint)! - order.get(b.row.fingerprint)!);
}

/**
 * How long after Alertmanager's resolve of an occurrence a firing
 * notification of it counts as a late duplicate: a notification made before
 * the resolve and delivered after it, by an HA peer or by Alertmanager
 * retrying within its flush (bounded by `group_interval`, 5 minutes by
 * default). Later, the same occurrence firing again is real: Alertmanager
 * resolved it by timeout while Prometheus could not reach it (a partition,
 * slow rule evaluation) and Prometheus then sent it again with its old
 * startsAt; ignoring it would leave a firing alert unpaged for good.
 */
const LATE_DUPLICATE_WINDOW_MS = 10 * 60_000;

/**
 * Alertmanager keeps the earliest start it has heard of an alert, and each
 * Prometheus of an HA pair sends its own: the start of an occurrence moves
 * earlier when the replica that saw it first is heard from second. An
 * earlier start is still the stored occurrence, not an older one, when the
 * alert ended after the stored occurrence began (an older one ended before
 * the next began), or when it fires and the stored occurrence has been known
 * longer than a late duplicate is delayed. Such an alert is taken with the
 * start the server knows, so the occurrence stays one; it was ignored as
 * older, its resolve too, and the incident stayed open until the alert was
 * presumed resolved.
 */
function asKnownOccurrence(stored: AlertRow, incoming: AlertState, now: Date): AlertState {
  const knownStart = stored.starts_at.getTime();
  if (incoming.starts_at.getTime() >= knownStart) return incoming;
  const endedSinceKnownStart =
    incoming.status === 'resolved' && incoming.ends_at !== null && incoming.ends_at.getTime() > knownStart;
  // A notification of an older occurrence was made before the known one
  // began, so it arrives within the window of the known one's first receipt.
  // Whatever the stored state, classify then rules as for the same start (a
  // firing after Alertmanager's resolve is a late duplicate within the window).
  const firesLongKnown =
    incoming.status === 'firing' && now.getTime() - stored.received_at.getTime() > LATE_DUPLICATE_WINDOW_MS;
  return endedSinceKnownStart || firesLongKnown ? { ...incoming, starts_at: stored.starts_at } : incoming;
}

function classify(stored: AlertRow, incoming: AlertState, now: Date): AlertChange {
  const storedStart = stored.starts_at.getTime();
  const incomingStart = incoming.starts_at.getTime();
  if (incomingStart > storedStart) return 'new_occurrence';
  if (incomingStart < storedStart) return 'outdated';
  if (stored.status === 'firing') {
    if (incoming.status === 'resolved') return 'resolved';
    return sameContent(stored, incoming) ? 'unchanged' : 'changed';
  }
  if (incoming.status === 'firing') {
    // One the server only presumed resolved is in fact still firing. For an
    // occurrence Alertmanager itself resolved, a firing notification soon
    // after is a late duplicate; one later (last_seen_at: the resolve or a
    // repeat of it, as ignored duplicates move nothing) fires again.
    if (stored.resolution_source === 'expiry') return 'revived';
    return now.getTime() - stored.last_seen_at.getTime() > LATE_DUPLICATE_WINDOW_MS ? 'revived' : 'outdated';
  }
  // Resolved twice: Alertmanager's word replaces a presumed expiry.
  if (stored.resolution_source === 'expiry') return 'changed';
  return sameContent(stored, incoming) ? 'unchanged' : 'changed';
}

/**
 * What an alert's change does to its stored occurrence: one that fires
 * again, with a new start or revived, leaves the incidents the stored one
 * belongs to, which keep it as it was there (updateAlertState).
 */
function occurrenceUpdate(change: AlertChange): OccurrenceUpdate {
  return change === 'new_occurrence' ? 'new' : change === 'revived' ? 'revived' : 'same';
}

function sameContent(stored: AlertRow, incoming: AlertState): boolean {
  return (
    stored.group_key === incoming.group_key &&
    stored.generator_url === incoming.generator_url &&
    sameTimeOrNull(stored.ends_at, incoming.ends_at) &&
    sameMap(stored.labels, incoming.labels) &&
    sameMap(stored.annotations, incoming.annotations)
  );
}

function sameMap(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}

function sameTime(a: Date, b: Date): boolean {
  return a.getTime() === b.getTime();
}

function sameTimeOrNull(a: Date | null, b: Date | null): boolean {
  return a === null || b === null ? a === b : sameTime(a, b);
}

async function raiseSeverity(
  tx: Queryable,
  incident: IncidentRow,
  joining: AlertRow[],
): Promise<IncidentRow> {
  const best = severityAfter(incident, joining);
  if (best === incident || best.severity === null) return incident;
  return updateIncident(tx, incident.id, { severity: best.severity, severity_rank: best.severity_rank });
}

interface Severity {
  severity: string | null;
  severity_rank: number;
}

/** An incident's severity after these alerts joined it, in order (`current` itself when none raises it). */
function severityAfter(current: Severity, joining: Pick<AlertState, 'labels'>[]): Severity {
  let best = current;
  for (const alert of joining) {
    const severity = alert.labels.severity;
    if (severity !== undefined && severity !== '' && raisesSeverity(best, severity)) {
      best = { severity, severity_rank: severityRank(severity) };
    }
  }
  return best;
}

/** What a group's incident is routed on, as Alertmanager routes: its common and its group labels. */
function routingLabelsOf(notification: AlertGroupNotification): Record<string, string> {
  return { ...notification.commonLabels, ...notification.groupLabels };
}

/**
 * Whether a notification can be a new group's first, as openIfNewGroups
 * takes it: alerts, all firing, each fingerprint once (a resolved new alert
 * or a repeated fingerprint takes the full intake's rules).
 */
function isNewGroupShaped(alerts: AlertState[]): boolean {
  return (
    alerts.length > 0 &&
    alerts.every((alert) => alert.status === 'firing') &&
    new Set(alerts.map((alert) => alert.fingerprint)).size === alerts.length
  );
}

function alertLabel(row: AlertRow): string {
  return row.name || row.fingerprint;
}

function alertResolvedEvent(incidentId: number, row: AlertRow): NewIncidentEvent {
  return { incident_id: incidentId, type: 'alert_resolved', alert_id: row.id, detail: alertLabel(row) };
}
