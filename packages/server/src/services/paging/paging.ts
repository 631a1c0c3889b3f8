/**
 * The paging worker and the capability acknowledgement. Every replica runs
 * `runOnce` on a short interval (background-jobs.ts); all coordination is in
 * the database:
 *  - an escalation step fires under the incident's row lock (taken with SKIP
 *    LOCKED, so replicas spread the work), and the messages it decides are
 *    rows whose unique key makes a second decision of the same page a no-op;
 *  - a message is claimed with a lease (FOR UPDATE SKIP LOCKED), renewed
 *    while the provider takes its time, sent outside any transaction, then
 *    recorded. A replica that dies between the
 *    provider's acceptance and the record leaves the row to be sent again
 *    after the lease: the one duplicate no design can rule out without the
 *    provider's help (README, "Delivery guarantees"). Webhook receivers get
 *    X-Terdut-Delivery to drop it.
 */
import { randomUUID } from 'node:crypto';
import type { Database, Queryable } from '../../db/database.ts';
import type { Clock } from '../../clock.ts';
import { ApiError, forbidden } from '../../errors.ts';
import { findIncidentById, type IncidentRow } from '../../repositories/incidents.ts';
import { listAlertsOfIncident } from '../../repositories/alerts.ts';
import { insertEvents, type NewIncidentEvent } from '../../repositories/incident-events.ts';
import {
  lockEscalation,
  lockIncidentsAndEscalationsUnlessHeld,
  moveEscalationsWithEvents,
  updateEscalation,
  dueEscalations,
  escalationRound,
  notifiesOnResolve,
  type EscalationMove,
  type EscalationPosition,
  type EscalationRow,
} from '../../repositories/escalations.ts';
import type { PolicyDefinition, PolicyTarget } from '../../repositories/escalation-policies.ts';
import {
  claimDueDeliveries,
  insertDeliveries,
  cancelPendingPages,
  countRecentPagedIncidents,
  foldedIncidents,
  lockPersonForPaging,
  markCancelled,
  markFailed,
  markSent,
  renewLease,
  scheduleRetry,
  stepHasLiveDelivery,
  type NewDelivery,
  type PageDeliveryRow,
} from '../../repositories/page-deliveries.ts';
import {
  findContactMethodById,
  listContactMethods,
  type ContactMethodRow,
} from '../../repositories/contact-methods.ts';
import { findPageablePeople, listAdminIds, type PageablePerson } from '../../repositories/paging-people.ts';
import {
  claimHandoffNotice,
  findHandoffNotice,
  type NewHandoffNotice,
} from '../../repositories/handoff-notices.ts';
import { keptInstanceSecret } from '../../repositories/instance-secrets.ts';
import { listSchedules } from '../../repositories/schedules.ts';
import { findHeartbeat } from '../../repositories/heartbeats.ts';
import type { IncidentService } from '../incidents.ts';
import type { PagingConfig } from './config.ts';
import type { OnCallLookupFor } from './on-call.ts';
import type { PagingMetrics } from './metrics.ts';
import {
  DeliveryError,
  type ContactTarget,
  type PageMessage,
  type ProviderAnswer,
  type Providers,
} from './providers.ts';
import { composeMessage } from './messages.ts';
import { heartbeatOfGroup } from './heartbeats.ts';
import { issueCapability, readCapability, type Capability } from './capability.ts';
import { formatDuration } from '../format-duration.ts';
import { activeWindows, type MaintenanceWindowRow } from '../../repositories/maintenance-windows.ts';
import { matchesAll, parseMatcher } from './matchers.ts';
import { OnePassAtATime } from '../../one-pass-at-a-time.ts';

/**
 * How long a claimed message belongs to the replica sending it. The sender
 * renews it every LEASE_RENEWAL_MS for as long as the provider takes (a
 * trickling SMTP server is not bound by the 10 s timeouts, which are
 * between bytes), so only a replica that died gives its messages away.
 */
const LEASE_MS = 60_000;
const LEASE_RENEWAL_MS = LEASE_MS / 3;
const BATCH = 25;
/** Transactions of escalations one pass runs at once (PostgreSQL; each holds a pooled connection meanwhile). */
const PARALLEL_ESCALATIONS = 3;
/** Due escalations advanced in one transaction (its incidents stay locked until it commits). */
const ESCALATIONS_PER_TRANSACTION = 8;
/** Steps one escalation may fire in one transaction (each reached nobody, so the next was due at once). */
const MAX_STEPS_PER_PASS = 20;
const BACKOFF_BASE_MS = 5_000;
const BACKOFF_CAP_MS = 5 * 60_000;
const MINUTE_MS = 60_000;

/** A contact a step can use: a stored method, or the contract's users.ntfy_topic. */
interface Contact {
  key: string;
  methodId: number | null;
  kind: ContactMethodRow['kind'];
  target: string;
}

export interface PagingPass {
  steps: number;
  messages: number;
}

export class PagingService {
  readonly #db: Database;
  readonly #clock: Clock;
  readonly #config: PagingConfig;
  readonly #publicUrl: string | undefined;
  readonly #metrics: PagingMetrics;
  readonly #incidents: IncidentService;
  readonly #providers: Providers;
  readonly #onCall: OnCallLookupFor;
  readonly #parallelEscalations: number;
  readonly #leaseRenewalMs: number;
  /** The key the Acknowledge buttons' capabilities are signed with. */
  readonly #key: () => Promise<string>;
  /**
   * The right-hand side of the incident threads' msg-ids: this installation's
   * own (migration 1060, which calendar UIDs use for the same reason), so
   * incident 12 of staging and incident 12 of production, mailed to one
   * inbox, never share a thread.
   */
  readonly #emailThreadDomain: () => Promise<string>;
  /**
   * The poll's escalation passes and the wakes' take turns: side by side in
   * an alert storm, both walked the same due escalations in the same order,
   * and half the transactions found the incident locked by the other pass
   * (SKIP LOCKED) and did nothing (bench/README.md).
   */
  readonly #escalations = new OnePassAtATime(() => this.#escalateDue());
  readonly #wakes = new OnePassAtATime(() => this.runOnce());

  constructor(deps: {
    db: Database;
    clock: Clock;
    config: { paging: PagingConfig; publicUrl: string | undefined };
    metrics: PagingMetrics;
    incidents: IncidentService;
    providers: Providers;
    /** Who is on call in a schedule (`scheduleOnCallLookup(schedules, ref)`). */
    onCall: OnCallLookupFor;
    /** How often a send in progress renews its lease (default LEASE_RENEWAL_MS; tests shorten it). */
    leaseRenewalMs?: number;
  }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#config = deps.config.paging;
    this.#publicUrl = deps.config.publicUrl?.replace(/\/+$/, '');
    this.#metrics = deps.metrics;
    this.#incidents = deps.incidents;
    this.#providers = deps.providers;
    this.#onCall = deps.onCall;
    // PGlite is one connection: its transactions take turns anyway.
    this.#parallelEscalations = deps.db.kind === 'pglite' ? 1 : PARALLEL_ESCALATIONS;
    this.#leaseRenewalMs = deps.leaseRenewalMs ?? LEASE_RENEWAL_MS;
    this.#key = keptInstanceSecret(deps.db, 'paging_capability');
    this.#emailThreadDomain = keptInstanceSecret(deps.db, 'calendar_uid_domain', (id) => `${id}.terdut`);
  }

  /**
   * Runs a pass now instead of at the next poll (a new incident was just
   * committed here): only a shortcut for latency; the database stays the
   * record, and the poll finds anything this misses. Wakes never overlap
   * one another: a wake during one runs one more after it. Their
   * escalation passes and the poll's take turns too (escalate).
   */
  wake(): void {
    // The next poll retries, and logs its failure.
    this.#wakes.run().catch(() => {});
  }

  /** Waits for the passes started by wake(), if any (shutdown, tests). */
  async settle(): Promise<void> {
    await this.#wakes.idle();
  }

  /** One pass: fire due escalation steps, then send due messages. Safe on every replica at once. */
  async runOnce(): Promise<PagingPass> {
    // An escalation that cannot advance fails the pass (the poll logs it),
    // but never keeps the pages already decided from going out.
    let steps = 0;
    let failure: { error: unknown } | undefined;
    try {
      steps = await this.escalate();
    } catch (error) {
      failure = { error };
    }
    const messages = await this.deliver();
    if (failure !== undefined) throw failure.error;
    return { steps, messages };
  }

  /**
   * Fires every escalation step that is due; returns how many escalations it
   * advanced. Sends are not serialised like this: a slow provider must not
   * hold back the next escalation, and a message's lease keeps two sends
   * of it apart.
   */
  escalate(): Promise<number> {
    return this.#escalations.run();
  }

  async #escalateDue(): Promise<number> {
    let advanced = 0;
    const seen = new Set<number>();
    for (;;) {
      // Those seen are skipped in SQL, so rows another replica holds never hide the ones behind them.
      const due = await dueEscalations(this.#db, this.#clock.now(), [...seen], BATCH);
      if (due.length === 0) return advanced;
      for (const incidentId of due) seen.add(incidentId);
      // Several batches at once on PostgreSQL, each one transaction: one at
      // a time they fell behind an alert storm's new incidents, and one
      // transaction per escalation spent four round trips on each (BEGIN,
      // lock, write, COMMIT). Each batch locks its own incidents (and the
      // people it pages, one at a time), as passes on several replicas always have.
      const reads = new SharedReads();
      const results = await eachAtMost(
        this.#parallelEscalations,
        batchesOf(due, ESCALATIONS_PER_TRANSACTION),
        (batch) => this.#escalateBatch(batch, reads),
      );
      advanced += results.reduce((sum, count) => sum + count, 0);
      // Nothing was behind these; what fell due meanwhile is the next pass's (a wake or the poll).
      if (due.length < BATCH) return advanced;
    }
  }

  /** Sends the messages that are due (first attempts and retries); returns how many it tried. */
  async deliver(): Promise<number> {
    let tried = 0;
    for (;;) {
      const now = this.#clock.now();
      // One statement, atomic on its own: no transaction around it.
      const claimed = await claimDueDeliveries(this.#db, now, LEASE_MS, BATCH);
      if (claimed.length === 0) return tried;
      tried += claimed.length;
      await Promise.all(claimed.map((delivery) => this.#send(delivery)));
      if (claimed.length < BATCH) return tried;
    }
  }

  /**
   * Acknowledges with a page's capability (the ntfy button, the webhook's
   * `acknowledge` request). Repeating it is harmless: `already acknowledged`.
   */
  async acknowledgeWithCapability(
    token: string,
  ): Promise<{ result: 'acknowledged' | 'already acknowledged'; incident_id: number }> {
    const read = readCapability(token, await this.#key(), this.#clock.now());
    if ('problem' in read) {
      throw read.problem === 'expired'
        ? forbidden('this acknowledge action has expired; open the incident in terdut to acknowledge it')
        : forbidden('this acknowledge action is not valid (altered, or from another terdut installation)');
    }
    const { incidentId, userId } = read.capability;
    const [person] = await findPageablePeople(this.#db, [userId]);
    if (person === undefined)
      throw forbidden('the person this acknowledge action was issued to no longer exists');
    await this.#requireCurrentRound(read.capability, 'action');
    const { changed } = await this.#incidents.acknowledgeAs(userId, incidentId);
    return { result: changed ? 'acknowledged' : 'already acknowledged', incident_id: incidentId };
  }

  /**
   * What a capability would do, without doing it (the email confirmation
   * page): the incident and the person, or 403 as acknowledgeWithCapability.
   */
  async describeCapability(token: string): Promise<{ incident: IncidentRow; person: PageablePerson }> {
    const read = readCapability(token, await this.#key(), this.#clock.now());
    if ('problem' in read) {
      throw read.problem === 'expired'
        ? forbidden('this acknowledge link has expired; open the incident in terdut to acknowledge it')
        : forbidden('this acknowledge link is not valid (altered, or from another terdut installation)');
    }
    const [person] = await findPageablePeople(this.#db, [read.capability.userId]);
    const incident = await findIncidentById(this.#db, read.capability.incidentId);
    if (person === undefined || incident === undefined) {
      throw forbidden('the person or incident this acknowledge link was issued for no longer exists');
    }
    await this.#requireCurrentRound(read.capability, 'link');
    return { incident, person };
  }

  /**
   * The web app's page of the incident a capability names, for the
   * confirmation page to link: only when its signature is good (expired
   * or not), the incident still exists and the public URL is known.
   */
  async incidentUrlOfCapability(token: string): Promise<string | undefined> {
    if (this.#publicUrl === undefined) return undefined;
    const read = readCapability(token, await this.#key(), this.#clock.now());
    const incidentId =
      'capability' in read
        ? read.capability.incidentId
        : read.problem === 'expired'
          ? read.incidentId
          : undefined;
    if (incidentId === undefined || (await findIncidentById(this.#db, incidentId)) === undefined)
      return undefined;
    return `${this.#publicUrl}/incidents/${incidentId}`;
  }

  /**
   * An Acknowledge button from an earlier round of paging (the
   * acknowledgement was taken back, or a snooze ended, and paging started
   * again) does not stop the paging that followed: whoever still holds the
   * old message is not who is being paged now. Pressing it while the
   * incident is acknowledged or resolved stays harmless, as any second press.
   */
  async #requireCurrentRound(capability: Capability, what: 'action' | 'link'): Promise<void> {
    if (capability.round === undefined) return;
    const round = await escalationRound(this.#db, capability.incidentId);
    if (round === undefined || round === capability.round) return;
    const incident = await findIncidentById(this.#db, capability.incidentId);
    if (incident?.status !== 'triggered') return;
    throw forbidden(
      `this acknowledge ${what} is from an earlier page of incident ${capability.incidentId}, ` +
        'which has been paged again since; use the newest page, or open the incident in terdut',
    );
  }

  /**
   * Whether the caller can be paged: on call now (in any schedule), and how many working
   * contact methods they have, with a warning when they are on call (or
   * named in a policy) and unreachable.
   */
  async readiness(
    userId: number,
  ): Promise<{ on_call_now: boolean; working_contact_methods: number; warning?: string }> {
    const [person] = await findPageablePeople(this.#db, [userId]);
    if (person === undefined) return { on_call_now: false, working_contact_methods: 0 };
    // Any schedule a step can page (the Databases team's as well as the default one).
    const now = this.#clock.now();
    let onCallNow = false;
    for (const schedule of await listSchedules(this.#db)) {
      onCallNow = (await this.#onCallIn(this.#db, schedule.id, now))?.includes(userId) ?? false;
      if (onCallNow) break;
    }
    const working = (await this.#contactsOf(this.#db, person)).length;
    const fix = `add one with POST /api/users/${userId}/contact-methods`;
    const warning =
      working > 0
        ? undefined
        : onCallNow
          ? `you are on call now but have no working contact method: nobody can page you; ${fix}`
          : `you have no working contact method: if you are paged, you will be skipped; ${fix}`;
    return { on_call_now: onCallNow, working_contact_methods: working, ...(warning ? { warning } : {}) };
  }

  /** Sends a test message to one contact now (one attempt) and reports the provider's answer. */
  async sendTest(
    person: { id: number; username: string },
    method: ContactMethodRow,
  ): Promise<{ delivered: boolean; answer: string; message_id?: string }> {
    const message = composeMessage({ purpose: 'test', person, publicUrl: this.#publicUrl });
    try {
      const answer = await this.#providers.send(
        {
          kind: method.kind,
          target: method.target,
          secret: method.secret,
          // Each test is a message of its own: receivers drop a repeated X-Terdut-Delivery.
          deliveryId: `test-${method.id}-${randomUUID()}`,
        },
        message,
      );
      return {
        delivered: true,
        answer: answer.answer,
        ...(answer.messageId ? { message_id: answer.messageId } : {}),
      };
    } catch (error) {
      if (error instanceof DeliveryError) return { delivered: false, answer: error.message };
      throw error;
    }
  }

  // ---- escalation ------------------------------------------------------

  /**
   * Advances a batch of due escalations in one transaction; answers how many
   * it advanced. When the transaction fails (one escalation's step threw,
   * or two passes deadlocked over the people they page), each escalation of
   * the batch is tried again in a transaction of its own, so one that fails
   * holds back nobody else's pages.
   */
  async #escalateBatch(incidentIds: number[], reads: SharedReads): Promise<number> {
    try {
      return await this.#db.transaction((tx) => this.#escalateHeld(tx, incidentIds, reads));
    } catch (error) {
      if (incidentIds.length === 1) throw error;
      let advanced = 0;
      let failure: { error: unknown } | undefined;
      for (const incidentId of incidentIds) {
        try {
          advanced += await this.#db.transaction((tx) => this.#escalateHeld(tx, [incidentId], reads));
        } catch (alone) {
          failure ??= { error: alone };
        }
      }
      // The pass fails as it did before batches (the poll logs it); the others went on.
      if (failure !== undefined) throw failure.error;
      return advanced;
    }
  }

  /**
   * Locks what it can of these incidents and their escalations (another
   * replica holding one skips it), fires each one's due step, and writes
   * every escalation's new position and timeline in one statement at the end.
   */
  async #escalateHeld(tx: Queryable, incidentIds: number[], reads: SharedReads): Promise<number> {
    // The incidents first (the hooks' lock order); one another replica holds is skipped.
    const locked = await lockIncidentsAndEscalationsUnlessHeld(tx, incidentIds);
    const now = this.#clock.now();
    const moves: EscalationMove[] = [];
    const events: NewIncidentEvent[] = [];
    for (const { incident, escalation } of locked) {
      if (escalation.due_at === null || escalation.due_at > now) continue;
      const next = await this.#advance(tx, incident, escalation, now, events, reads);
      moves.push({ incident_id: escalation.incident_id, ...next });
    }
    await moveEscalationsWithEvents(tx, moves, events, now);
    return moves.length;
  }

  /**
   * Reconciles a due escalation with its incident's current state: where it
   * goes next, with its timeline entries added to `events`; the pages and
   * notices it decides are stored at once.
   */
  async #advance(
    tx: Queryable,
    incident: IncidentRow,
    escalation: EscalationRow,
    now: Date,
    events: NewIncidentEvent[],
    reads: SharedReads,
  ): Promise<EscalationPosition> {
    const incidentId = incident.id;
    if (incident.status !== 'triggered') {
      if (incident.status === 'acknowledged' && escalation.updates > 0 && incident.acknowledged_by !== null) {
        await this.#tellAcknowledger(tx, incident, incident.acknowledged_by, escalation.updates, now);
      }
      return { ...escalation, state: 'stopped', due_at: null };
    }
    if (incident.snoozed_until !== null && incident.snoozed_until > now) {
      return { ...escalation, state: 'paused', due_at: incident.snoozed_until };
    }
    const window = await this.#maintenanceWindowFor(tx, escalation.labels, now, reads);
    if (window !== undefined) {
      events.push({
        incident_id: incidentId,
        type: 'paging_held',
        detail: `maintenance window ${window.id} until ${window.ends_at.toISOString()}: ${window.reason}`,
      });
      await cancelPendingPages(tx, incidentId);
      return { ...escalation, state: 'paused', due_at: window.ends_at };
    }
    let { round, step, repeat } = escalation;
    if (escalation.state !== 'active') {
      // A snooze ran out (or was ended) with nobody acknowledging: from step 1.
      round += 1;
      step = 0;
      repeat = 0;
    }
    // A step that reached nobody makes the next one due at once: it fires in
    // the same transaction rather than in the next pass. Bounded, so one
    // escalation cannot hold its incident for long; the rest is due anyway.
    let current: EscalationRow = { ...escalation, state: 'active', round, step, repeat };
    for (let fired = 1; ; fired++) {
      const next = await this.#fireStep(tx, incident, current, now, events, reads);
      if (next.state !== 'active' || next.due_at! > now || fired >= MAX_STEPS_PER_PASS) return next;
      current = { ...current, ...next };
    }
  }

  /**
   * Fires one step (its pages are stored at once) and says where the
   * escalation goes next; its timeline entries are added to `events`.
   */
  async #fireStep(
    tx: Queryable,
    incident: IncidentRow,
    escalation: EscalationRow,
    now: Date,
    events: NewIncidentEvent[],
    reads: SharedReads,
  ): Promise<EscalationPosition> {
    const { policy, round, step, repeat } = escalation;
    const current = policy.steps[step];
    const deliveries: NewDelivery[] = [];
    const reached: string[] = [];
    const skipped: string[] = [];
    const folded: string[] = [];
    if (current !== undefined) {
      const { ids, deletedSchedules } = await this.#targets(tx, current.targets, now, reads);
      const people = await reads.once(`people:${ids.join(',')}`, () => findPageablePeople(tx, ids));
      for (const person of people) {
        const contacts = await reads.once(`contacts:${person.id}`, () => this.#contactsOf(tx, person));
        if (contacts.length === 0) {
          skipped.push(person.username);
          continue;
        }
        const rows: NewDelivery[] = [];
        for (const contact of contacts) {
          rows.push({
            incident_id: incident.id,
            purpose: 'page',
            round,
            step,
            repeat,
            user_id: person.id,
            contact_key: contact.key,
            method_id: contact.methodId,
            kind: contact.kind,
            target: contact.target,
          });
        }
        if (await this.#inStorm(tx, person.id, now)) {
          // Never dropped: stored as folded, listed by the summary page.
          folded.push(person.username);
          await insertDeliveries(tx, rows, now, { state: 'folded' });
          await this.#ensureSummary(tx, incident.id, person.id, contacts, now);
        } else {
          reached.push(person.username);
          deliveries.push(...rows);
        }
      }
      await insertDeliveries(tx, deliveries, now);
      const pass = repeat > 0 ? ` (repeat ${repeat} of ${policy.repeat})` : '';
      const paging =
        reached.length > 0
          ? `paging ${reached.join(', ')}`
          : folded.length > 0
            ? 'no page of its own'
            : 'nobody to page';
      // A user or schedule the step names that was deleted since the policy was saved pages nobody: say so.
      const gone = [
        ...current.targets.flatMap((target) =>
          target.type === 'user' && !people.some((person) => person.id === target.user_id)
            ? [`user ${target.user_id}`]
            : [],
        ),
        ...deletedSchedules.map((id) => `schedule ${id}`),
      ];
      const skipNote =
        (skipped.length > 0 ? `; skipped ${skipped.join(', ')} (no working contact method)` : '') +
        (gone.length > 0 ? `; skipped ${gone.join(', ')} (deleted)` : '') +
        (folded.length > 0
          ? `; folded for ${folded.join(', ')} into one summary page (more than ${this.#config.stormLimitPerMinute} pages a minute)`
          : '');
      events.push({
        incident_id: incident.id,
        type: 'escalated',
        detail: `step ${step + 1} of "${policy.name}"${pass}: ${paging}${skipNote}`,
      });
    }

    // What comes next. A step that reached nobody moves on at once.
    const next = positionAfter(policy, step, repeat);
    if (next === undefined) {
      events.push({
        incident_id: incident.id,
        type: 'escalation_finished',
        detail: `every step of "${policy.name}" has fired${policy.repeat > 0 ? ` ${policy.repeat + 1} times` : ''}; paging stops (it starts again at step 1 when a snooze of the incident ends, or an acknowledgement is taken back)`,
      });
      return { state: 'finished', round, step: step + 1, repeat, due_at: null };
    }
    // Only the next step of this pass comes at once: a repeat keeps its
    // repeat_delay, or a policy that reaches nobody now (a gap in the
    // schedule, no working contact method) ran every repeat in one instant
    // and paged nobody when someone could be reached minutes later.
    const reachedNobody = deliveries.length === 0 && folded.length === 0;
    const delayMs = reachedNobody && next.repeat === repeat ? 0 : next.delayMs;
    return {
      state: 'active',
      round,
      step: next.step,
      repeat: next.repeat,
      due_at: new Date(now.getTime() + delayMs),
    };
  }

  /** The maintenance window in force now whose matchers match these labels (the one ending last). */
  async #maintenanceWindowFor(
    tx: Queryable,
    labels: Record<string, string>,
    now: Date,
    reads: SharedReads,
  ): Promise<MaintenanceWindowRow | undefined> {
    const active = await reads.once('maintenance windows', () => activeWindows(tx, now));
    const matching = active.filter((window) => matchesAll(window.matchers.map(parseMatcher), labels));
    return matching.at(-1);
  }

  /** Whether this person already had the storm limit of incidents paged in the last minute. */
  async #inStorm(tx: Queryable, userId: number, now: Date): Promise<boolean> {
    await lockPersonForPaging(tx, userId);
    const recent = await countRecentPagedIncidents(tx, userId, new Date(now.getTime() - MINUTE_MS));
    return recent >= this.#config.stormLimitPerMinute;
  }

  /** The summary of this minute for each contact, sent when the minute ends (one per person, contact and minute). */
  async #ensureSummary(
    tx: Queryable,
    incidentId: number,
    userId: number,
    contacts: Contact[],
    now: Date,
  ): Promise<void> {
    const minute = Math.floor(now.getTime() / MINUTE_MS);
    await insertDeliveries(
      tx,
      contacts.map((contact) => ({
        incident_id: incidentId,
        purpose: 'summary' as const,
        round: minute,
        step: 0,
        repeat: 0,
        user_id: userId,
        contact_key: contact.key,
        method_id: contact.methodId,
        kind: contact.kind,
        target: contact.target,
      })),
      now,
      { dueAt: new Date((minute + 1) * MINUTE_MS) },
    );
  }

  /** One message per contact of the acknowledger for update number `update` (the unique key makes it once). */
  async #tellAcknowledger(
    tx: Queryable,
    incident: IncidentRow,
    userId: number,
    update: number,
    now: Date,
  ): Promise<void> {
    const [person] = await findPageablePeople(tx, [userId]);
    if (person === undefined) return;
    const contacts = await this.#contactsOf(tx, person);
    await insertDeliveries(
      tx,
      contacts.map((contact) => ({
        incident_id: incident.id,
        purpose: 'update' as const,
        round: 0,
        step: update,
        repeat: 0,
        user_id: person.id,
        contact_key: contact.key,
        method_id: contact.methodId,
        kind: contact.kind,
        target: contact.target,
      })),
      now,
    );
  }

  /**
   * The people a step's targets name, in order, without repeats, and the
   * schedules it names that no longer exist (`deletedSchedules`).
   */
  async #targets(
    tx: Queryable,
    targets: readonly PolicyTarget[],
    now: Date,
    reads: SharedReads,
  ): Promise<{ ids: number[]; deletedSchedules: number[] }> {
    const ids: number[] = [];
    const deletedSchedules: number[] = [];
    for (const target of targets) {
      if (target.type === 'on_call') {
        const schedule = target.schedule_id;
        const onCall = await reads.once(`on call:${schedule ?? 'default'}`, () =>
          this.#onCallIn(tx, schedule, now),
        );
        if (onCall === undefined) deletedSchedules.push(schedule!);
        else ids.push(...onCall);
      } else if (target.type === 'admins') ids.push(...(await reads.once('admins', () => listAdminIds(tx))));
      else ids.push(target.user_id);
    }
    return { ids: [...new Set(ids)], deletedSchedules: [...new Set(deletedSchedules)] };
  }

  /**
   * Who is on call in a step's schedule; undefined for a schedule deleted
   * after the policy was saved (an escalation keeps the version it started
   * with, and policies saved before deleting a schedule was refused may name
   * one): the step says so and moves on, rather than failing the pass for
   * every incident behind it.
   */
  async #onCallIn(tx: Queryable, scheduleId: number | undefined, now: Date): Promise<number[] | undefined> {
    try {
      return await this.#onCall(scheduleId ?? 'default')(tx, now);
    } catch (error) {
      if (scheduleId !== undefined && error instanceof ApiError && error.status === 404) return undefined;
      throw error;
    }
  }

  /** A person's working contacts: enabled methods, plus users.ntfy_topic unless a method has that topic. */
  async #contactsOf(tx: Queryable, person: PageablePerson): Promise<Contact[]> {
    const methods = (await listContactMethods(tx, person.id)).filter(
      (method) => method.enabled && (method.kind !== 'email' || this.#config.smtp !== undefined),
    );
    const contacts: Contact[] = methods.map((method) => ({
      key: `method:${method.id}`,
      methodId: method.id,
      kind: method.kind,
      target: method.target,
    }));
    const topic = person.ntfy_topic;
    if (topic !== null && !methods.some((method) => method.kind === 'ntfy' && method.target === topic)) {
      contacts.push({ key: 'ntfy_topic', methodId: null, kind: 'ntfy', target: topic });
    }
    return contacts;
  }

  // ---- delivery --------------------------------------------------------

  async #send(delivery: PageDeliveryRow): Promise<void> {
    if (delivery.handoff_notice_id !== null) return this.#sendHandoff(delivery, delivery.handoff_notice_id);
    const incident =
      delivery.incident_id === null ? undefined : await findIncidentById(this.#db, delivery.incident_id);
    const [person] = await findPageablePeople(this.#db, [delivery.user_id]);
    let problem: string | undefined;
    if (incident === undefined) problem = 'the incident no longer exists';
    else if (person === undefined) problem = 'the person no longer exists';
    const contact = person === undefined ? undefined : await this.#contactNow(delivery, person);
    problem ??= contact?.problem;
    if (problem !== undefined || incident === undefined || person === undefined || contact === undefined) {
      await this.#recordFailure(delivery, new DeliveryError(problem ?? 'unknown', true));
      return;
    }
    let message: PageMessage;
    if (delivery.purpose === 'summary') {
      const from = new Date(delivery.round * MINUTE_MS);
      const to = new Date((delivery.round + 1) * MINUTE_MS);
      const folded = await foldedIncidents(this.#db, delivery.user_id, delivery.contact_key, from, to);
      if (folded.length === 0) {
        await this.#db.transaction((tx) =>
          markCancelled(tx, delivery.id, 'every folded incident was acknowledged or resolved'),
        );
        return;
      }
      message = composeMessage({ purpose: 'summary', person, folded, publicUrl: this.#publicUrl });
    } else {
      message = await this.#compose(delivery, incident, person);
    }
    const to: ContactTarget = {
      kind: delivery.kind as ContactTarget['kind'],
      target: contact.target,
      secret: contact.secret,
      deliveryId: String(delivery.id),
    };
    let answer: ProviderAnswer;
    try {
      answer = await this.#sendHoldingLease(delivery, to, message);
    } catch (error) {
      const failure =
        error instanceof DeliveryError ? error : new DeliveryError((error as Error).message, false);
      await this.#recordFailure(delivery, failure);
      return;
    }
    await this.#recordSuccess(delivery, incident, answer);
  }

  /**
   * Hands `message` to the provider, renewing the delivery's lease while it
   * takes: the claim must outlast the send, or another replica (or this
   * one's next pass) would claim the message and send it a second time.
   */
  async #sendHoldingLease(
    delivery: PageDeliveryRow,
    to: ContactTarget,
    message: PageMessage,
  ): Promise<ProviderAnswer> {
    const renewal = setInterval(() => {
      const until = new Date(this.#clock.now().getTime() + LEASE_MS);
      // A renewal that fails leaves the lease as it was; the next one tries again.
      renewLease(this.#db, delivery.id, delivery.attempts, until).catch(() => {});
    }, this.#leaseRenewalMs);
    try {
      return await this.#providers.send(to, message);
    } finally {
      clearInterval(renewal);
    }
  }

  /**
   * Where the delivery goes now (and the method's secret), or why it can no
   * longer go anywhere. A message is sent when it is due, which may be minutes
   * after it was decided (a retry, a resolved notice): by then its contact
   * may be gone. The contract's ntfy_topic is a contact of its own
   * (`ntfy_topic`), and its owner changes or clears it in place, often
   * because the old topic leaked: a page carries an Acknowledge that works
   * for whoever reads the topic, so it goes to the topic the person has now,
   * and to none once it is cleared.
   */
  async #contactNow(
    delivery: PageDeliveryRow,
    person: PageablePerson,
  ): Promise<{ target: string; secret: string | null; problem?: string }> {
    const gone = (problem: string) => ({ target: delivery.target, secret: null, problem });
    if (delivery.contact_key === 'ntfy_topic') {
      if (person.ntfy_topic === null) return gone(`${person.username} has cleared their ntfy_topic`);
      // The topic may now be one of their ntfy methods', paged on its own (contactsOf): never twice.
      const working = await this.#contactsOf(this.#db, person);
      if (!working.some((contact) => contact.key === 'ntfy_topic'))
        return gone(`${person.username}'s ntfy_topic is now the topic of one of their contact methods`);
      return { target: person.ntfy_topic, secret: null };
    }
    if (delivery.method_id === null) return { target: delivery.target, secret: null };
    const method = await findContactMethodById(this.#db, delivery.method_id);
    if (method === undefined) return gone('the contact method was deleted');
    if (!method.enabled) return gone('the contact method was switched off');
    return { target: delivery.target, secret: method.secret };
  }

  /** A handoff notice: its message was composed when the handoff was claimed. */
  async #sendHandoff(delivery: PageDeliveryRow, noticeId: number): Promise<void> {
    const notice = await findHandoffNotice(this.#db, noticeId);
    const [person] = await findPageablePeople(this.#db, [delivery.user_id]);
    const contact = person === undefined ? undefined : await this.#contactNow(delivery, person);
    const problem =
      notice === undefined
        ? 'the schedule no longer exists'
        : person === undefined
          ? 'the person no longer exists'
          : contact?.problem;
    if (problem !== undefined || notice === undefined || contact === undefined) {
      await this.#recordFailure(delivery, new DeliveryError(problem ?? 'unknown', true));
      return;
    }
    const message: PageMessage = {
      title: notice.title,
      text: notice.body,
      priority: 3,
      tags: ['calendar'],
      webhookBody: { ...notice.webhook_body, title: notice.title, text: notice.body },
    };
    const to: ContactTarget = {
      kind: delivery.kind as ContactTarget['kind'],
      target: contact.target,
      secret: contact.secret,
      deliveryId: String(delivery.id),
    };
    try {
      const answer = await this.#sendHoldingLease(delivery, to, message);
      await this.#recordSuccess(delivery, undefined, answer);
    } catch (error) {
      await this.#recordFailure(
        delivery,
        error instanceof DeliveryError ? error : new DeliveryError((error as Error).message, false),
      );
    }
  }

  /**
   * Claims a handoff notice (the unique key makes it once across replicas and
   * passes) and queues its message to each of the person's working contacts,
   * in one transaction: `within` when given (a schedule change that tells
   * the notice as it commits), else its own. False when it was claimed before.
   */
  async queueHandoffNotice(notice: NewHandoffNotice, within?: Queryable): Promise<boolean> {
    const now = this.#clock.now();
    const claim = async (tx: Queryable) => {
      const id = await claimHandoffNotice(tx, notice, now);
      if (id === undefined) return false;
      const [person] = await findPageablePeople(tx, [notice.user_id]);
      if (person === undefined) return true;
      const contacts = await this.#contactsOf(tx, person);
      await insertDeliveries(
        tx,
        contacts.map((contact) => ({
          incident_id: null,
          handoff_notice_id: id,
          purpose: 'handoff' as const,
          round: 0,
          step: 0,
          repeat: 0,
          user_id: person.id,
          contact_key: contact.key,
          method_id: contact.methodId,
          kind: contact.kind,
          target: contact.target,
        })),
        now,
      );
      return true;
    };
    return within ? claim(within) : this.#db.transaction(claim);
  }

  async #compose(
    delivery: PageDeliveryRow,
    incident: IncidentRow,
    person: PageablePerson,
  ): Promise<PageMessage> {
    const alerts = await listAlertsOfIncident(this.#db, incident.id);
    const heartbeatId = delivery.purpose === 'page' ? heartbeatOfGroup(incident.group_key) : undefined;
    const heartbeat = heartbeatId === undefined ? undefined : await findHeartbeat(this.#db, heartbeatId);
    let acknowledgeToken: string | undefined;
    if (delivery.purpose === 'page' && this.#publicUrl !== undefined) {
      acknowledgeToken = issueCapability(
        {
          action: 'acknowledge',
          incidentId: incident.id,
          userId: person.id,
          round: delivery.round,
          expiresAt: new Date(this.#clock.now().getTime() + this.#config.capabilityTtlMs),
        },
        await this.#key(),
      );
    }
    const message = composeMessage({
      purpose: delivery.purpose as Exclude<PageDeliveryRow['purpose'], 'handoff'>,
      incident,
      alerts,
      person,
      // Only a page is a step of the escalation; a resolved notice or an update is not.
      ...(delivery.purpose === 'page' ? { step: delivery.step + 1, repeat: delivery.repeat } : {}),
      publicUrl: this.#publicUrl,
      ...(acknowledgeToken !== undefined ? { acknowledgeToken } : {}),
      ...(heartbeat !== undefined ? { heartbeat } : {}),
    });
    if (delivery.kind !== 'email') return message;
    return { ...message, emailThread: `<incident-${incident.id}@${await this.#emailThreadDomain()}>` };
  }

  async #recordSuccess(
    delivery: PageDeliveryRow,
    incident: IncidentRow | undefined,
    answer: ProviderAnswer,
  ): Promise<void> {
    const now = this.#clock.now();
    await this.#db.transaction(async (tx) => {
      await markSent(tx, delivery.id, answer.messageId, now);
      if (delivery.incident_id === null) return;
      await insertEvents(
        tx,
        [
          {
            incident_id: delivery.incident_id,
            type: 'notified',
            user_id: delivery.user_id,
            detail: `${describeDelivery(delivery)}${answer.messageId ? `; message id ${answer.messageId}` : ''}${
              delivery.attempts > 1 ? `; delivered on attempt ${delivery.attempts}` : ''
            }`,
          },
        ],
        now,
      );
      if (delivery.purpose === 'page') {
        await this.#followResolution(tx, { ...delivery, incident_id: delivery.incident_id }, now);
      }
    });
    this.#metrics.pagesSent.inc({ method: delivery.kind, purpose: delivery.purpose });
    if (delivery.purpose === 'page' && incident !== undefined) {
      const firstPage = delivery.round === 0 && delivery.step === 0 && delivery.repeat === 0;
      const from = firstPage ? incident.triggered_at : delivery.created_at;
      this.#metrics.deliveryLatency.observe(
        { method: delivery.kind },
        Math.max(0, now.getTime() - from.getTime()) / 1000,
      );
    }
  }

  /**
   * A page that was on its way when its incident resolved: the resolve
   * queued "resolved" notices only for the pages recorded as sent by then
   * (endPaging), so this one's notice is queued here. Runs after markSent in
   * the same transaction: a resolve that cancelled this row first has
   * committed when markSent gets the row, and one that comes after sees
   * this page as sent. The unique key keeps the notice one.
   */
  async #followResolution(
    tx: Queryable,
    delivery: PageDeliveryRow & { incident_id: number },
    now: Date,
  ): Promise<void> {
    const incident = await findIncidentById(tx, delivery.incident_id);
    if (incident?.status !== 'resolved' || !(await notifiesOnResolve(tx, delivery.incident_id))) return;
    await insertDeliveries(
      tx,
      [
        {
          incident_id: delivery.incident_id,
          purpose: 'resolved',
          round: 0,
          step: 0,
          repeat: 0,
          user_id: delivery.user_id,
          contact_key: delivery.contact_key,
          method_id: delivery.method_id,
          kind: delivery.kind,
          target: delivery.target,
        },
      ],
      now,
    );
  }

  /**
   * A transient failure is retried with exponential back-off and jitter (or
   * after the provider's Retry-After) until the retry budget is spent; the
   * last attempt lands at the budget's end. A permanent one, or the spent
   * budget, fails the message: `notification_failed`, and when nothing else
   * of its step got through, the escalation moves on at once.
   */
  async #recordFailure(delivery: PageDeliveryRow, error: DeliveryError): Promise<void> {
    const now = this.#clock.now();
    const deadline = delivery.created_at.getTime() + this.#config.retryBudgetMs;
    if (!error.permanent && now.getTime() < deadline) {
      const backoff = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, delivery.attempts - 1));
      const jittered = backoff / 2 + Math.random() * (backoff / 2);
      const wait = error.retryAfterMs ?? jittered;
      const at = new Date(Math.min(now.getTime() + wait, deadline));
      await this.#db.transaction((tx) => scheduleRetry(tx, delivery.id, at, error.message));
      return;
    }
    const why = error.permanent
      ? error.message
      : `${error.message}; gave up after ${delivery.attempts} attempts in ${formatDuration(this.#config.retryBudgetMs)}`;
    const failed = await this.#db.transaction(async (tx) => {
      // A message cancelled while it was on its way (its incident was
      // acknowledged or resolved meanwhile) stays cancelled: its failure
      // changes nothing for an incident already handled.
      if (!(await markFailed(tx, delivery.id, why))) return false;
      if (delivery.incident_id === null) return true;
      await insertEvents(
        tx,
        [
          {
            incident_id: delivery.incident_id,
            type: 'notification_failed',
            user_id: delivery.user_id,
            detail: `${describeDelivery(delivery)}: ${why}`,
          },
        ],
        now,
      );
      if (delivery.purpose === 'page') {
        await this.#moveOnAfterFailure(tx, { ...delivery, incident_id: delivery.incident_id }, now);
      }
      return true;
    });
    if (failed) this.#metrics.pagesFailed.inc({ method: delivery.kind, purpose: delivery.purpose });
  }

  async #moveOnAfterFailure(
    tx: Queryable,
    delivery: PageDeliveryRow & { incident_id: number },
    now: Date,
  ): Promise<void> {
    await tx.query(`SELECT id FROM incidents WHERE id = $1 FOR NO KEY UPDATE`, [delivery.incident_id]);
    const escalation = await lockEscalation(tx, delivery.incident_id);
    if (escalation === undefined || escalation.state !== 'active' || escalation.round !== delivery.round)
      return;
    // Only the step that fired last moves on: a late failure of an earlier
    // step, whose escalation went on meanwhile, must not cut the delay of
    // the step now waiting.
    if (!waitsAfter(escalation, delivery)) return;
    // As after a step that reached nobody, only the next step of this pass
    // comes at once: the next pass keeps its repeat_delay.
    if (escalation.repeat !== delivery.repeat) return;
    if (escalation.due_at === null || escalation.due_at <= now) return;
    if (await stepHasLiveDelivery(tx, delivery)) return;
    await updateEscalation(tx, delivery.incident_id, { due_at: now }, now);
  }
}

/**
 * Where an escalation goes after firing `step` of pass `repeat`, and after
 * how long: the next step, else the next pass's first step; undefined once
 * every pass has fired.
 */
function positionAfter(
  policy: PolicyDefinition,
  step: number,
  repeat: number,
): { step: number; repeat: number; delayMs: number } | undefined {
  if (step + 1 < policy.steps.length) {
    return { step: step + 1, repeat, delayMs: policy.steps[step + 1]!.delay_ms };
  }
  if (repeat < policy.repeat) return { step: 0, repeat: repeat + 1, delayMs: policy.repeat_delay_ms };
  return undefined;
}

/** Whether the escalation waits at the position `fired`'s step led to. */
function waitsAfter(escalation: EscalationRow, fired: { step: number; repeat: number }): boolean {
  const next = positionAfter(escalation.policy, fired.step, fired.repeat);
  return next !== undefined && escalation.step === next.step && escalation.repeat === next.repeat;
}

/**
 * `ntfy (contact method 4), step 2` / `webhook (contact method 7), resolved notice`: the timeline's
 * words for a message. Everyone signed in reads timelines, and whoever knows an ntfy topic reads its
 * pages and can press their Acknowledge, so the topic is never named here.
 */
function describeDelivery(delivery: PageDeliveryRow): string {
  // Every member reads timelines, and contact methods are their owner's and
  // the admins' only: the method's id, never its topic, URL or address.
  const via =
    delivery.kind === 'ntfy'
      ? `ntfy (${delivery.method_id === null ? 'ntfy_topic' : `contact method ${delivery.method_id}`})`
      : `${delivery.kind} (contact method ${delivery.method_id ?? '?'})`;
  if (delivery.purpose === 'resolved') return `${via}, resolved notice`;
  if (delivery.purpose === 'handoff') return `${via}, handoff notice`;
  if (delivery.purpose === 'update') return `${via}, update for the acknowledger`;
  if (delivery.purpose === 'summary') return `${via}, storm summary`;
  return `${via}, step ${delivery.step + 1}${delivery.repeat > 0 ? ` (repeat ${delivery.repeat})` : ''}`;
}

/**
 * What the escalations of one batch read that does not depend on their
 * incident (maintenance windows, who is on call, the admins, people and
 * their contact methods): read once, by the first transaction that needs
 * it, and shared, as one moment of the pass. None of it is what these
 * transactions write, so sharing a read never hides a write of one's own.
 * The next batch reads again.
 */
class SharedReads {
  readonly #reads = new Map<string, Promise<unknown>>();

  once<T>(key: string, read: () => Promise<T>): Promise<T> {
    let promise = this.#reads.get(key) as Promise<T> | undefined;
    if (promise === undefined) {
      promise = read();
      this.#reads.set(key, promise);
      // A failed read is not kept: the next escalation of the batch tries again.
      promise.catch(() => this.#reads.delete(key));
    }
    return promise;
  }
}

/** `items` in consecutive batches of at most `size`, as evenly filled as that allows. */
function batchesOf<T>(items: readonly T[], size: number): T[][] {
  const count = Math.ceil(items.length / size);
  const each = Math.ceil(items.length / count);
  return Array.from({ length: count }, (_, index) => items.slice(index * each, (index + 1) * each));
}

/** Runs `work` on every item, at most `limit` at a time; the results in the items' order. */
async function eachAtMost<T, R>(
  limit: number,
  items: readonly T[],
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
