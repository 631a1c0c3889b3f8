import type { EscalationPolicyRow } from '../../repositories/escalation-policies.ts';
import { formatDuration } from '../../services/format-duration.ts';

export { ErrorSchema } from '@terdut/contract';

const goDuration = (ms: number) => (ms === 0 ? '0s' : formatDuration(ms));

export function serialisePolicy(row: EscalationPolicyRow) {
  return {
    id: row.id,
    name: row.name,
    position: row.position,
    default: row.is_default,
    matchers: row.matchers,
    steps: row.steps.map((step) => ({
      delay: goDuration(step.delay_ms),
      targets: step.targets,
    })),
    repeat: row.repeat,
    repeat_delay: goDuration(Number(row.repeat_delay_ms)),
    notify_on_resolve: row.notify_on_resolve,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
