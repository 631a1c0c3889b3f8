import type { Database, Queryable } from '../../db/database.ts';
import type { Clock } from '../../clock.ts';
import { requireAdmin, type Principal } from '../../auth/principal.ts';
import { badRequest, conflict, notFound } from '../../errors.ts';
import { parseDuration } from '../../duration.ts';
import { isUniqueViolation } from '../../db/unique-violation.ts';
import {
  deletePolicy,
  findPolicyById,
  insertPolicy,
  listPolicies,
  nextPolicyPosition,
  updatePolicy,
  type EscalationPolicyFields,
  type EscalationPolicyRow,
  type PolicyStep,
  type PolicyTarget,
} from '../../repositories/escalation-policies.ts';
import { findPageablePeople } from '../../repositories/paging-people.ts';
import { holdScheduleAsTarget } from '../../repositories/schedules.ts';
import type { AuditService } from '../audit.ts';
import { parseMatcherToSave } from './matchers.ts';

/** The shortest wait between steps (and before a repeat): shorter ones page people faster than they can answer. */
export const MIN_STEP_DELAY_MS = 30_000;
const MAX_STEP_DELAY_MS = 24 * 3_600_000;
const MAX_STEPS = 20;
const MAX_REPEAT = 20;
const DEFAULT_REPEAT_DELAY = '10m';

/** A policy as a client writes it (api-contract.md, EscalationPolicyInput). */
export interface PolicyInput {
  name: string;
  position?: number;
  default?: boolean;
  matchers?: string[];
  steps: { delay?: string; targets: PolicyTarget[] }[];
  repeat?: number;
  repeat_delay?: string;
  notify_on_resolve?: boolean;
}

/** Admins manage escalation policies; everyone signed in may read them. Changes are audited. */
export class EscalationPolicyService {
  readonly #db: Database;
  readonly #clock: Clock;
  readonly #audit: AuditService;

  constructor(deps: { db: Database; clock: Clock; audit: AuditService }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#audit = deps.audit;
  }

  /** Every policy in routing order. */
  async list(): Promise<EscalationPolicyRow[]> {
    return listPolicies(this.#db);
  }

  async get(id: number): Promise<EscalationPolicyRow> {
    const policy = await findPolicyById(this.#db, id);
    if (policy === undefined) throw notFound(`escalation policy ${id}`);
    return policy;
  }

  /** Creates a policy (admins); 409 for a taken name or a second default. */
  async create(
    principal: Principal,
    input: PolicyInput,
    clientAddress: string,
  ): Promise<EscalationPolicyRow> {
    requireAdmin(principal, 'manage escalation policies');
    return this.#write(input, async (tx, now) => {
      const fields = await validPolicy(tx, input, input.position ?? (await nextPolicyPosition(tx)));
      const policy = await insertPolicy(tx, fields, now);
      await this.#audit.record(tx, {
        actor: principal,
        action: 'escalation_policy.created',
        target: `escalation_policy:${policy.id}`,
        detail: { name: policy.name },
        clientAddress,
      });
      return policy;
    });
  }

  /** Replaces a policy (admins). Escalations already running keep the version they started with. */
  async replace(
    principal: Principal,
    id: number,
    input: PolicyInput,
    clientAddress: string,
  ): Promise<EscalationPolicyRow> {
    requireAdmin(principal, 'manage escalation policies');
    return this.#write(input, async (tx, now) => {
      const existing = await findPolicyById(tx, id);
      if (existing === undefined) throw notFound(`escalation policy ${id}`);
      const fields = await validPolicy(tx, input, input.position ?? existing.position);
      const policy = (await updatePolicy(tx, id, fields, now))!;
      await this.#audit.record(tx, {
        actor: principal,
        action: 'escalation_policy.updated',
        target: `escalation_policy:${id}`,
        detail: { name: policy.name },
        clientAddress,
      });
      return policy;
    });
  }

  /** Deletes a policy (admins); running escalations go on with their copy. */
  async delete(principal: Principal, id: number, clientAddress: string): Promise<void> {
    requireAdmin(principal, 'manage escalation policies');
    await this.#db.transaction(async (tx) => {
      const deleted = await deletePolicy(tx, id);
      if (deleted === undefined) throw notFound(`escalation policy ${id}`);
      await this.#audit.record(tx, {
        actor: principal,
        action: 'escalation_policy.deleted',
        target: `escalation_policy:${id}`,
        detail: { name: deleted.name },
        clientAddress,
      });
    });
  }

  async #write(
    input: PolicyInput,
    work: (tx: Queryable, now: Date) => Promise<EscalationPolicyRow>,
  ): Promise<EscalationPolicyRow> {
    try {
      return await this.#db.transaction((tx) => work(tx, this.#clock.now()));
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      throw input.default === true
        ? conflict('another policy is already the default; clear its "default" first, or change this one')
        : conflict(`an escalation policy named "${input.name.trim()}" exists; choose another name`);
    }
  }
}

/** Checks everything the schema cannot; 400 naming the field. */
async function validPolicy(
  tx: Queryable,
  input: PolicyInput,
  position: number,
): Promise<EscalationPolicyFields> {
  const name = input.name.trim();
  if (name === '' || name.length > 100) throw badRequest('field "name" must be 1 to 100 characters');
  const matchers = input.matchers ?? [];
  matchers.forEach((text, index) => {
    try {
      parseMatcherToSave(text);
    } catch (error) {
      throw badRequest(`field "matchers.${index}": ${(error as Error).message}`);
    }
  });
  if (input.steps.length === 0 || input.steps.length > MAX_STEPS) {
    throw badRequest(`field "steps" must list 1 to ${MAX_STEPS} steps`);
  }
  const steps: PolicyStep[] = [];
  for (const [index, step] of input.steps.entries()) {
    const delayMs = stepDelay(step.delay, index);
    if (step.targets.length === 0)
      throw badRequest(`field "steps.${index}.targets" must name at least one target`);
    const userIds = step.targets.flatMap((target) => (target.type === 'user' ? [target.user_id] : []));
    const found = new Set((await findPageablePeople(tx, userIds)).map((person) => person.id));
    const missing = userIds.find((id) => !found.has(id));
    if (missing !== undefined) {
      throw badRequest(`field "steps.${index}.targets": user ${missing} is not a person who can be paged`);
    }
    for (const [targetIndex, target] of step.targets.entries()) {
      if (target.type !== 'on_call' || target.schedule_id === undefined) continue;
      // Held until the commit, as a foreign key would be: the schedule cannot be deleted meanwhile.
      if (!(await holdScheduleAsTarget(tx, target.schedule_id))) {
        throw badRequest(
          `field "steps.${index}.targets.${targetIndex}.schedule_id": schedule ${target.schedule_id} does not exist; list them with GET /api/schedules, or leave it out for the default schedule`,
        );
      }
    }
    steps.push({ delay_ms: delayMs, targets: step.targets.map(normaliseTarget) });
  }
  const repeat = input.repeat ?? 0;
  if (!Number.isInteger(repeat) || repeat < 0 || repeat > MAX_REPEAT) {
    throw badRequest(`field "repeat" must be a whole number from 0 to ${MAX_REPEAT}`);
  }
  const repeatDelay = input.repeat_delay ?? DEFAULT_REPEAT_DELAY;
  const repeatDelayMs = parseDuration(repeatDelay.trim());
  if (repeatDelayMs === undefined || repeatDelayMs < MIN_STEP_DELAY_MS || repeatDelayMs > MAX_STEP_DELAY_MS) {
    throw badRequest(
      `field "repeat_delay" must be a Go-style duration from 30s to 24h, got "${repeatDelay.slice(0, 40)}"`,
    );
  }
  return {
    name,
    position,
    is_default: input.default ?? false,
    matchers,
    steps,
    repeat,
    repeat_delay_ms: repeatDelayMs,
    notify_on_resolve: input.notify_on_resolve ?? true,
  };
}

/**
 * A step's delay: Go-style, at least 30s; the first step may also be `0s`
 * (page as soon as the incident opens, the default).
 */
function stepDelay(text: string | undefined, index: number): number {
  const raw = (text ?? (index === 0 ? '0s' : '')).trim();
  const ms = raw === '0' ? 0 : parseDuration(raw);
  const field = `steps.${index}.delay`;
  if (ms === undefined) {
    throw badRequest(
      `field "${field}" must be a Go-style duration such as 30s, 5m or 1h, got "${raw.slice(0, 40)}"`,
    );
  }
  if (ms === 0 && index === 0) return 0;
  if (ms < MIN_STEP_DELAY_MS || ms > MAX_STEP_DELAY_MS) {
    throw badRequest(
      `field "${field}" must be from 30s to 24h${index === 0 ? ' (or 0s: at once)' : ''}, got "${raw.slice(0, 40)}"`,
    );
  }
  return ms;
}

function normaliseTarget(target: PolicyTarget): PolicyTarget {
  if (target.type === 'user') return { type: 'user', user_id: target.user_id };
  if (target.type === 'on_call' && target.schedule_id !== undefined) {
    return { type: 'on_call', schedule_id: target.schedule_id };
  }
  return { type: target.type };
}
