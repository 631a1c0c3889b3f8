import type { Queryable } from '../../db/database.ts';
import {
  listPolicies,
  readRoutingVersion,
  type EscalationPolicyRow,
  type PolicyDefinition,
} from '../../repositories/escalation-policies.ts';
import { matchesAll, parseMatcher } from './matchers.ts';

/** Minutes nobody may leave a page of the built-in default unanswered before every admin is paged. */
const BUILT_IN_ADMIN_DELAY_MS = 10 * 60_000;

/**
 * The policy that applies when none is configured (README, "Paging"): the
 * person on call today at once; every admin 10 minutes later, or at once when
 * nobody is on call (a step that reaches nobody moves on immediately).
 */
export const BUILT_IN_DEFAULT_POLICY: PolicyDefinition = {
  name: 'built-in default',
  steps: [
    { delay_ms: 0, targets: [{ type: 'on_call' }] },
    { delay_ms: BUILT_IN_ADMIN_DELAY_MS, targets: [{ type: 'admins' }] },
  ],
  repeat: 0,
  repeat_delay_ms: BUILT_IN_ADMIN_DELAY_MS,
  notify_on_resolve: true,
};

/** The policy an escalation runs: the routed policy's id (null: the built-in default) and its definition. */
export interface RoutedPolicy {
  policyId: number | null;
  policy: PolicyDefinition;
}

/**
 * The policy for an incident with these labels: the first policy in routing
 * order whose matchers all match, else the default policy, else the
 * built-in default. The result is copied into the escalation, so later edits
 * to the policy do not change a running escalation.
 */
export async function choosePolicy(db: Queryable, labels: Record<string, string>): Promise<RoutedPolicy> {
  return routeAmong(await listPolicies(db), labels);
}

/** choosePolicy among `policies` (every policy, in routing order). */
export function routeAmong(policies: EscalationPolicyRow[], labels: Record<string, string>): RoutedPolicy {
  const definition = (row: EscalationPolicyRow): PolicyDefinition => ({
    name: row.name,
    steps: row.steps,
    repeat: row.repeat,
    repeat_delay_ms: Number(row.repeat_delay_ms),
    notify_on_resolve: row.notify_on_resolve,
  });
  for (const row of policies) {
    // Policies with no matchers only apply as the default: an empty list
    // would otherwise swallow everything after it.
    if (row.matchers.length === 0) continue;
    if (matchesAll(row.matchers.map(parseMatcher), labels))
      return { policyId: row.id, policy: definition(row) };
  }
  const fallback = policies.find((row) => row.is_default);
  if (fallback !== undefined) return { policyId: fallback.id, policy: definition(fallback) };
  return { policyId: null, policy: BUILT_IN_DEFAULT_POLICY };
}

/**
 * The policies as this replica last read them, with the routing version
 * they were read at (migration 0960, paging_routing). Whoever routes with
 * them hands the version to the database, which refuses a version that is
 * no longer current; then `forget` and read again. Never trusted alone, so
 * it needs no expiry.
 */
export class RoutingCache {
  #current: Promise<{ version: number; policies: EscalationPolicyRow[] }> | undefined;

  /** Routes `labels` with the remembered policies (reading them first if need be). */
  async route(db: Queryable, labels: Record<string, string>): Promise<RoutedPolicy & { version: number }> {
    this.#current ??= readRouting(db);
    let current;
    try {
      current = await this.#current;
    } catch (error) {
      this.#current = undefined;
      throw error;
    }
    return { ...routeAmong(current.policies, labels), version: current.version };
  }

  forget(): void {
    this.#current = undefined;
  }
}

async function readRouting(db: Queryable): Promise<{ version: number; policies: EscalationPolicyRow[] }> {
  // The version first: policies changed after it was read carry a later
  // version, so they can only make the database refuse, never be routed past.
  const version = await readRoutingVersion(db);
  return { version, policies: await listPolicies(db) };
}
