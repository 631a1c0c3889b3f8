/**
 * A new group's first notification as the intake hands it to
 * `openIfNewGroups` (migration 0960): the parsed alerts, the incident the
 * full intake would open, routed with the current escalation policies.
 *
 * @example
 *   const [outcome] = await openIfNewGroups(db, [await newGroupCall(db, 'disk', ['DiskFull'], now)]);
 */
import { parseNotification } from '../../packages/server/src/alertmanager/parse.ts';
import type { Queryable } from '../../packages/server/src/db/database.ts';
import type { NewGroupCall } from '../../packages/server/src/repositories/alert-groups.ts';
import { RoutingCache } from '../../packages/server/src/services/paging/policy-routing.ts';
import { firingAlert, notification } from './alertmanager-payloads.ts';

/** One firing alert per name, in group `groupKey`, received at `now` (stale an hour before). */
export async function newGroupCall(
  db: Queryable,
  groupKey: string,
  alertNames: string[],
  now: Date,
): Promise<NewGroupCall> {
  const parsed = parseNotification(
    notification({ groupKey, alerts: alertNames.map((name) => firingAlert({ name })) }),
    now,
  );
  const routing = await new RoutingCache().route(db, {});
  return {
    groupKey,
    alerts: parsed.alerts,
    incident: {
      title: groupKey,
      group_labels: {},
      severity: null,
      severity_rank: 0,
      routing: { ...routing, labels: {} },
    },
    now,
    staleBefore: new Date(now.getTime() - 3_600_000),
  };
}
