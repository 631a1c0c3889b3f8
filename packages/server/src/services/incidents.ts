import { MAX_NOTE_LENGTH, MAX_SNOOZE_SECONDS } from '@terdut/contract';
import type { Database, Queryable } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Metrics } from '../metrics.ts';
import type { Principal } from '../auth/principal.ts';
import { badRequest, conflict, forbidden, notFound } from '../errors.ts';
import { parseDuration } from '../duration.ts';
import {
  countAlertsOfIncident,
  findIncidentById,
  listIncidents,
  lockIncidentById,
  updateIncident,
  type CountedIncidentRow,
  type IncidentRow,
  type IncidentStatus,
} from '../repositories/incidents.ts';
import { alertsOfIncidentJsonParts, setAlertsArchivedForIncident } from '../repositories/alerts.ts';
import {
  deleteEvent,
  findEventById,
  insertEvents,
  listEventsOfIncident,
  type IncidentEventRow,
  type NewIncidentEvent,
} from '../repositories/incident-events.ts';
import { findUserById } from '../repositories/users.ts';
import { formatDuration } from './format-duration.ts';
import {
  endPaging,
  pausePaging,
  restartPaging,
  resumePaging,
  stopPaging,
} from './paging/escalation-hooks.ts';

export interface IncidentListQuery {
  status?: IncidentStatus;
  archived?: boolean;
  snoozed?: boolean;
  limit?: number;
}

export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1000;
/** Longer than anyone should hide an open incident; beyond it the request is probably a mistake. */
const MAX_SNOOZE_MS = MAX_SNOOZE_SECONDS * 1000;

/**
 * The work on incidents: reading them and every action people take
 * (acknowledge, assign, snooze, resolve, archive, notes), each recorded as a
 * timeline event in the same transaction. Any authenticated caller may act.
 */
export class IncidentService {
  readonly #db: Database;
  readonly #clock: Clock;
  readonly #metrics: Metrics;

  constructor(deps: { db: Database; clock: Clock; metrics: Metrics }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#metrics = deps.metrics;
  }

  /** Default: open, not archived, not currently snoozed; `archived`/`snoozed` switch to that set. */
  async list(query: IncidentListQuery): Promise<CountedIncidentRow[]> {
    return listIncidents(this.#db, {
      ...(query.status !== undefined ? { status: query.status } : {}),
      archived: query.archived === true,
      snoozed: query.snoozed === true,
      now: this.#clock.now(),
      limit: Math.min(query.limit ?? DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT),
    });
  }

  /** One incident with its own alerts (newest first). */
  async get(id: number): Promise<{ incident: CountedIncidentRow; alertsJsonParts: string[] }> {
    // Both at once (two pool connections on PostgreSQL): one round trip of
    // waiting instead of two. Reading alerts of an id that does not exist
    // costs an index probe.
    const [incident, alerts] = await Promise.all([
      findIncidentById(this.#db, id),
      alertsOfIncidentJsonParts(this.#db, id),
    ]);
    if (incident === undefined) throw notFound(`incident ${id}`);
    // Counted with the alerts it lists, so the two always agree.
    return { incident: { ...incident, alert_count: alerts.count }, alertsJsonParts: alerts.parts };
  }

  /** The incident's timeline, oldest first. */
  async timeline(id: number): Promise<IncidentEventRow[]> {
    if ((await findIncidentById(this.#db, id)) === undefined) throw notFound(`incident ${id}`);
    return listEventsOfIncident(this.#db, id);
  }

  /** Acknowledges an open incident; acknowledging an acknowledged one changes nothing. */
  async acknowledge(principal: Principal, id: number): Promise<CountedIncidentRow> {
    return (await this.acknowledgeAs(principal.userId, id)).incident;
  }

  /**
   * Acknowledges as `userId` (an authenticated caller, or the person a page's
   * Acknowledge button was issued to); `changed` is false when it already was.
   */
  async acknowledgeAs(
    userId: number,
    id: number,
  ): Promise<{ incident: CountedIncidentRow; changed: boolean }> {
    let changed = false;
    const incident = await this.#act(id, async (tx, incident, now) => {
      requireOpen(incident);
      if (incident.status === 'acknowledged') return { incident };
      changed = true;
      await stopPaging(tx, id, now);
      return {
        incident: await updateIncident(tx, id, {
          status: 'acknowledged',
          acknowledged_by: userId,
          acknowledged_at: now,
        }),
        events: [{ incident_id: id, type: 'acknowledged', user_id: userId }],
      };
    });
    return { incident, changed };
  }

  /** Takes the acknowledgement back; on an unacknowledged incident it changes nothing. */
  async unacknowledge(principal: Principal, id: number): Promise<void> {
    await this.#act(id, async (tx, incident, now) => {
      requireOpen(incident);
      if (incident.status !== 'acknowledged') return { incident };
      await restartPaging(tx, incident, now);
      return {
        incident: await updateIncident(tx, id, {
          status: 'triggered',
          acknowledged_by: null,
          acknowledged_at: null,
        }),
        events: [{ incident_id: id, type: 'unacknowledged', user_id: principal.userId }],
      };
    });
  }

  /** Assigns an open incident to a person; 404 if there is no such (live) user. */
  async assign(principal: Principal, id: number, userId: number): Promise<CountedIncidentRow> {
    return this.#act(id, async (tx, incident) => {
      const assignee = await findUserById(tx, userId);
      if (assignee === undefined) throw notFound(`user ${userId}`);
      if (assignee.kind !== 'person')
        throw badRequest(`field "user_id": user ${userId} is a service account`);
      requireOpen(incident);
      if (incident.assigned_to === userId) return { incident };
      return {
        incident: await updateIncident(tx, id, { assigned_to: userId }),
        // The contract: on `assigned` the event's user is the assignee.
        events: [
          { incident_id: id, type: 'assigned', user_id: userId, detail: `assigned by ${principal.username}` },
        ],
      };
    });
  }

  /** Snoozes an open incident for a Go-style duration (`30m`, `2h`, `1h30m`). */
  async snooze(principal: Principal, id: number, duration: string): Promise<CountedIncidentRow> {
    const ms = parseDuration(duration.trim());
    if (ms === undefined) {
      throw badRequest(
        `field "duration" must be a Go-style duration such as 30m, 2h or 1h30m, got "${duration.slice(0, 40)}"`,
      );
    }
    if (ms <= 0) throw badRequest(`field "duration" must be longer than 0s, got "${duration.slice(0, 40)}"`);
    if (ms > MAX_SNOOZE_MS)
      throw badRequest(`field "duration" must be at most ${formatDuration(MAX_SNOOZE_MS)}`);
    return this.#act(id, async (tx, incident, now) => {
      requireOpen(incident);
      const until = new Date(now.getTime() + ms);
      await pausePaging(tx, id, until, now);
      return {
        incident: await updateIncident(tx, id, { snoozed_until: until }),
        events: [
          {
            incident_id: id,
            type: 'snoozed',
            user_id: principal.userId,
            // Clients print "Snoozed until <detail>": the end time, RFC 3339, nothing else.
            detail: until.toISOString(),
          },
        ],
      };
    });
  }

  /** Ends a snooze; on an incident that is not snoozed it changes nothing. */
  async unsnooze(principal: Principal, id: number): Promise<void> {
    await this.#act(id, async (tx, incident, now) => {
      requireOpen(incident);
      // A snooze in the past has already ended by itself.
      if (incident.snoozed_until === null || incident.snoozed_until <= now) return { incident };
      await resumePaging(tx, id, now);
      return {
        incident: await updateIncident(tx, id, { snoozed_until: null }),
        events: [{ incident_id: id, type: 'unsnoozed', user_id: principal.userId }],
      };
    });
  }

  /** Closes an incident by hand. Terminal: new occurrences open a new incident. */
  async resolve(principal: Principal, id: number): Promise<CountedIncidentRow> {
    const resolved = await this.#act(id, async (tx, incident, now) => {
      requireOpen(incident);
      await endPaging(tx, id, now);
      return {
        incident: await updateIncident(tx, id, {
          status: 'resolved',
          resolved_at: now,
          resolution_source: 'manual',
        }),
        events: [
          { incident_id: id, type: 'resolved', user_id: principal.userId, detail: 'resolved manually' },
        ],
      };
    });
    this.#metrics.incidentsResolved.inc({ source: 'manual' });
    return resolved;
  }

  /** Archives a resolved incident and its alerts (those whose newest incident it is). */
  async archive(_principal: Principal, id: number): Promise<CountedIncidentRow> {
    return this.#act(id, async (tx, incident, now) => {
      if (incident.status !== 'resolved') throw conflict('only resolved incidents can be archived');
      if (incident.archived_at !== null) return { incident };
      await setAlertsArchivedForIncident(tx, id, now);
      return { incident: await updateIncident(tx, id, { archived_at: now }) };
    });
  }

  /** Takes an incident (and its alerts) out of the archive; a no-op when it is not archived. */
  async unarchive(_principal: Principal, id: number): Promise<void> {
    await this.#act(id, async (tx, incident) => {
      if (incident.archived_at === null) return { incident };
      await setAlertsArchivedForIncident(tx, id, null);
      return { incident: await updateIncident(tx, id, { archived_at: null }) };
    });
  }

  /** Adds a note (also to resolved incidents: post-mortems). Returns the new event. */
  async addNote(principal: Principal, id: number, content: string): Promise<IncidentEventRow> {
    if (content.trim() === '') throw badRequest('field "content" must not be empty');
    // Characters as the contract's maxLength counts them (code points, not UTF-16 units: an emoji is one).
    if (content.length > MAX_NOTE_LENGTH && [...content].length > MAX_NOTE_LENGTH) {
      throw badRequest(`field "content" must be at most ${MAX_NOTE_LENGTH} characters`);
    }
    return this.#db.transaction(async (tx) => {
      const incident = await lockIncidentById(tx, id);
      if (incident === undefined) throw notFound(`incident ${id}`);
      const [eventId] = await insertEvents(
        tx,
        [{ incident_id: id, type: 'note', user_id: principal.userId, detail: content }],
        this.#clock.now(),
      );
      return (await findEventById(tx, eventId!))!;
    });
  }

  /** Deletes one of the caller's own notes: 403 for someone else's, 409 for events that are not notes. */
  async deleteNote(principal: Principal, id: number, eventId: number): Promise<void> {
    await this.#db.transaction(async (tx) => {
      if ((await lockIncidentById(tx, id)) === undefined) throw notFound(`incident ${id}`);
      const event = await findEventById(tx, eventId);
      if (event === undefined || event.incident_id !== id)
        throw notFound(`event ${eventId} of incident ${id}`);
      if (event.type !== 'note')
        throw conflict(`event ${eventId} is a ${event.type} event; only notes can be deleted`);
      if (event.user_id !== principal.userId) throw forbidden('you can delete only your own notes');
      await deleteEvent(tx, eventId);
    });
  }

  /** Runs one action on a locked incident in a transaction, with its events; answers it with its alert count. */
  async #act(
    id: number,
    action: (
      tx: Queryable,
      incident: IncidentRow,
      now: Date,
    ) => Promise<{ incident: IncidentRow; events?: NewIncidentEvent[] }>,
  ): Promise<CountedIncidentRow> {
    return this.#db.transaction(async (tx) => {
      const incident = await lockIncidentById(tx, id);
      if (incident === undefined) throw notFound(`incident ${id}`);
      const now = this.#clock.now();
      const outcome = await action(tx, incident, now);
      await insertEvents(tx, outcome.events ?? [], now);
      return { ...outcome.incident, alert_count: await countAlertsOfIncident(tx, id) };
    });
  }
}

/** People act on open incidents only; a resolved one is closed for good. */
function requireOpen(incident: IncidentRow): void {
  if (incident.status === 'resolved') throw conflict('incident is resolved');
}
