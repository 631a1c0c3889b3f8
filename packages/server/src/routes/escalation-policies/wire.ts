import { Type } from 'typebox';
import { Id } from '@terdut/contract';
import type { EscalationPolicyRow } from '../../repositories/escalation-policies.ts';
import { formatDuration } from '../../services/format-duration.ts';

export { ErrorSchema } from '@terdut/contract';

const Duration = (description: string) =>
  Type.String({ description: `Go-style duration (30s, 5m, 1h30m). ${description}`, examples: ['5m'] });

export const PolicyTargetSchema = Type.Union(
  [
    Type.Object(
      {
        type: Type.Literal('on_call'),
        schedule_id: Type.Optional(
          Type.Integer({
            description: 'the schedule whose on-call person is paged; absent: the default schedule',
          }),
        ),
      },
      { description: 'whoever is on call in a schedule when the step fires' },
    ),
    Type.Object({ type: Type.Literal('user'), user_id: Id }, { description: 'one named person' }),
    Type.Object({ type: Type.Literal('admins') }, { description: 'every admin' }),
  ],
  { title: 'PolicyTarget' },
);

const StepInput = Type.Object({
  delay: Type.Optional(
    Duration('Wait after the previous step; at least 30s. The first step may be 0s (default).'),
  ),
  targets: Type.Array(PolicyTargetSchema, { maxItems: 50 }),
});

/** `EscalationPolicyInput` (api-contract.md). */
export const PolicyInputSchema = Type.Object(
  {
    name: Type.String({ maxLength: 200 }),
    position: Type.Optional(
      Type.Integer({ description: 'routing order, lowest first; default: after the last policy' }),
    ),
    default: Type.Optional(
      Type.Boolean({ description: 'the policy for incidents no other policy matches; at most one' }),
    ),
    matchers: Type.Optional(
      Type.Array(Type.String({ maxLength: 1000 }), {
        maxItems: 50,
        description: 'Alertmanager matchers (=, !=, =~, !~) on the group and common labels; all must match',
        examples: [['severity=~"critical|high"', 'team!=db']],
      }),
    ),
    steps: Type.Array(StepInput, { maxItems: 100 }),
    repeat: Type.Optional(
      Type.Integer({ description: 'how often the whole policy repeats after its last step' }),
    ),
    repeat_delay: Type.Optional(Duration('Wait after the last step before a repeat; default 10m.')),
    notify_on_resolve: Type.Optional(
      Type.Boolean({ description: 'send a "resolved" message to everyone paged; default true' }),
    ),
  },
  { title: 'EscalationPolicyInput' },
);

/** `EscalationPolicy` (api-contract.md). */
export const PolicySchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    position: Type.Integer(),
    default: Type.Boolean(),
    matchers: Type.Array(Type.String()),
    steps: Type.Array(Type.Object({ delay: Type.String(), targets: Type.Array(PolicyTargetSchema) })),
    repeat: Type.Integer(),
    repeat_delay: Type.String(),
    notify_on_resolve: Type.Boolean(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { title: 'EscalationPolicy', additionalProperties: false },
);

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
