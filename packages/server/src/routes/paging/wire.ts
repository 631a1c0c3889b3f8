import { Type } from 'typebox';

export { ErrorSchema } from '@terdut/contract';

export const CapabilityAcknowledgeSchema = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 2000, description: 'the capability from the page' }) },
  { title: 'CapabilityAcknowledgeInput' },
);

export const CapabilityAcknowledgeResultSchema = Type.Object(
  {
    result: Type.Union([Type.Literal('acknowledged'), Type.Literal('already acknowledged')]),
    incident_id: Type.Integer(),
  },
  { title: 'CapabilityAcknowledgeResult' },
);

export const PagingReadinessSchema = Type.Object(
  {
    on_call_now: Type.Boolean(),
    working_contact_methods: Type.Integer({
      description: "enabled methods terdut can use, the contract's ntfy_topic included",
    }),
    warning: Type.Optional(Type.String({ description: 'present when the caller cannot be paged; show it' })),
  },
  { title: 'PagingReadiness' },
);
