/** Escalation policies: who is paged for which incidents, step by step (api-contract.md, Paging). */
import { Type, type Static } from 'typebox';
import { Id, Timestamp } from './common.ts';

const Duration = (description: string) =>
  Type.String({ description: `Go-style duration (30s, 5m, 1h30m). ${description}`, examples: ['5m'] });

export const EscalationPolicyTargetSchema = Type.Union(
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
export type EscalationPolicyTarget = Static<typeof EscalationPolicyTargetSchema>;

const StepInput = Type.Object({
  delay: Type.Optional(
    Duration('Wait after the previous step; at least 30s. The first step may be 0s (default).'),
  ),
  targets: Type.Array(EscalationPolicyTargetSchema, { maxItems: 50 }),
});

/** `EscalationPolicyInput` (api-contract.md). */
export const EscalationPolicyInputSchema = Type.Object(
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
export type EscalationPolicyInput = Static<typeof EscalationPolicyInputSchema>;

/** `EscalationPolicy` (api-contract.md). */
export const EscalationPolicySchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    position: Type.Integer(),
    default: Type.Boolean(),
    matchers: Type.Array(Type.String()),
    steps: Type.Array(
      Type.Object({ delay: Type.String(), targets: Type.Array(EscalationPolicyTargetSchema) }),
    ),
    repeat: Type.Integer(),
    repeat_delay: Type.String(),
    notify_on_resolve: Type.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'EscalationPolicy', additionalProperties: false },
);
export type EscalationPolicy = Static<typeof EscalationPolicySchema>;
