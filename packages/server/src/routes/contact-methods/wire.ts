import { Type } from 'typebox';
import type { ContactMethodRow } from '../../repositories/contact-methods.ts';

export { ErrorSchema } from '@terdut/contract';

const Kind = Type.Union([Type.Literal('ntfy'), Type.Literal('webhook'), Type.Literal('email')]);

/** `ContactMethodInput` (api-contract.md). */
export const ContactMethodInputSchema = Type.Object(
  {
    kind: Kind,
    name: Type.Optional(Type.String({ maxLength: 200 })),
    target: Type.String({
      maxLength: 2000,
      description: 'ntfy: the topic; webhook: the http(s) URL; email: the address',
    }),
    secret: Type.Optional(
      Type.String({
        maxLength: 200,
        description:
          'webhook: the HMAC key for X-Terdut-Signature (at least 16 characters); generated when absent',
      }),
    ),
    enabled: Type.Optional(Type.Boolean()),
  },
  { title: 'ContactMethodInput' },
);

/** `ContactMethod` (api-contract.md). The webhook secret appears only in the answer to its creation. */
export const ContactMethodSchema = Type.Object(
  {
    id: Type.Integer(),
    user_id: Type.Integer(),
    kind: Kind,
    name: Type.String(),
    target: Type.String(),
    enabled: Type.Boolean(),
    created_at: Type.String({ format: 'date-time' }),
    secret: Type.Optional(Type.String({ description: 'only in the answer to POST, for webhook methods' })),
  },
  { title: 'ContactMethod', additionalProperties: false },
);

export const ContactMethodTestSchema = Type.Object(
  {
    delivered: Type.Boolean(),
    answer: Type.String({ description: "the provider's answer, or why it could not be reached" }),
    message_id: Type.Optional(Type.String()),
  },
  { title: 'ContactMethodTest' },
);

export function serialiseContactMethod(row: ContactMethodRow, options: { withSecret?: boolean } = {}) {
  return {
    id: row.id,
    user_id: row.user_id,
    kind: row.kind,
    name: row.name,
    target: row.target,
    enabled: row.enabled,
    created_at: row.created_at.toISOString(),
    ...(options.withSecret === true && row.secret !== null ? { secret: row.secret } : {}),
  };
}
