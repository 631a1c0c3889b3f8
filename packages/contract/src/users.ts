/** People, their keys and service accounts, sign-in and the bootstrap endpoints. */
import { Type, type Static } from 'typebox';
import { Timestamp } from './common.ts';

/**
 * A username: letters, digits and `. _ @ -` (so an email-like OIDC username
 * fits), starting with a letter or digit. No `:`: service-account users are
 * named `service:<name>`, so no person can take or shadow one.
 */
export const USERNAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$';
export const MIN_PASSWORD_LENGTH = 12;
/** Bounds the scrypt input (and the cost of a request). */
export const MAX_PASSWORD_LENGTH = 1024;

export const Username = Type.String({
  pattern: USERNAME_PATTERN,
  errorMessage:
    'must be 1-64 characters: letters, digits, ".", "_", "@" or "-", starting with a letter or digit',
});
/** A name of a key; surrounding spaces are trimmed, what remains must not be empty. */
export const KeyName = Type.String({
  minLength: 1,
  maxLength: 100,
  errorMessage: 'must be 1-100 characters',
});

export const RoleSchema = Type.Union([Type.Literal('admin'), Type.Literal('member')]);
export type Role = Static<typeof RoleSchema>;

/** `User` of api-contract.md, plus `role`. `ntfy_topic` is omitted when there is none. */
export const UserSchema = Type.Object(
  {
    id: Type.Integer(),
    username: Type.String(),
    email: Type.String(),
    role: RoleSchema,
    created_at: Timestamp,
    ntfy_topic: Type.Optional(Type.String()),
  },
  { title: 'User', description: 'A person (or, on /api/me, a service account)' },
);
export type User = Static<typeof UserSchema>;

/** `GET /api/me` and a password sign-in: the caller and whether it has a password. */
export const MeSchema = Type.Object({
  user: UserSchema,
  has_password: Type.Boolean(),
  calendar_feed_created_at: Type.Optional({
    ...Timestamp,
    description: "when the caller's own calendar feed URL in use was made; absent while the feed is off",
  }),
});
export type Me = Static<typeof MeSchema>;

export const CreateUserBody = Type.Object({
  username: Username,
  email: Type.String({ maxLength: 320 }),
  role: Type.Optional(RoleSchema),
});
export type CreateUserBody = Static<typeof CreateUserBody>;

export const NotifyTopicBody = Type.Object({
  ntfy_topic: Type.String({
    maxLength: 128,
    description: 'letters, digits, "_" or "-" (1-64 after trimming); "" clears it',
  }),
});
export type NotifyTopicBody = Static<typeof NotifyTopicBody>;

export const RoleBody = Type.Object({ role: RoleSchema });
export type RoleBody = Static<typeof RoleBody>;

export const PasswordBody = Type.Object({
  password: Type.String({
    minLength: MIN_PASSWORD_LENGTH,
    maxLength: MAX_PASSWORD_LENGTH,
    errorMessage: `must be at least ${MIN_PASSWORD_LENGTH} characters long (and at most ${MAX_PASSWORD_LENGTH})`,
  }),
  current_password: Type.Optional(Type.String({ maxLength: MAX_PASSWORD_LENGTH })),
});
export type PasswordBody = Static<typeof PasswordBody>;

export const LoginBody = Type.Object({
  username: Type.String({ minLength: 1, maxLength: 256 }),
  password: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH }),
});
export type LoginBody = Static<typeof LoginBody>;

const apiKeyFields = {
  id: Type.Integer(),
  user_id: Type.Integer(),
  name: Type.String(),
  created_at: Timestamp,
  last_used_at: Type.Union([Timestamp, Type.Null()], {
    description: 'null until the key is first used; updated at most once a minute',
  }),
};

/** `APIKey` of api-contract.md as listed: never the key itself. */
export const ApiKeySchema = Type.Object(apiKeyFields, { title: 'ApiKey' });
export type ApiKey = Static<typeof ApiKeySchema>;

/** `APIKey` in a create response: with `key`, shown this once. */
export const NewApiKeySchema = Type.Object(
  { ...apiKeyFields, key: Type.String({ description: '64 hex characters; shown only in this response' }) },
  { title: 'NewApiKey' },
);
export type NewApiKey = Static<typeof NewApiKeySchema>;

export const CreateKeyBody = Type.Object({ name: KeyName });
export type CreateKeyBody = Static<typeof CreateKeyBody>;

/** `ServiceAccount` of api-contract.md. */
export const ServiceAccountSchema = Type.Object(
  { id: Type.Integer(), name: Type.String(), scope: Type.Literal('instance'), created_at: Timestamp },
  { title: 'ServiceAccount' },
);
export type ServiceAccount = Static<typeof ServiceAccountSchema>;

export const CreateServiceAccountBody = Type.Object({
  name: Type.String({
    minLength: 1,
    maxLength: 100,
    description: 'letters, digits, ".", "_" or "-", starting with a letter or digit (after trimming)',
  }),
  scope: Type.Literal('instance'),
});
export type CreateServiceAccountBody = Static<typeof CreateServiceAccountBody>;

export const NewServiceAccountSchema = Type.Object({
  service_account: ServiceAccountSchema,
  key: NewApiKeySchema,
});
export type NewServiceAccount = Static<typeof NewServiceAccountSchema>;

export const ServiceAccountQuery = Type.Object({ name: Type.Optional(Type.String()) });
export type ServiceAccountQuery = Static<typeof ServiceAccountQuery>;

/** `GET /api/bootstrap` (public). */
export const BootstrapStatusSchema = Type.Object({ bootstrapped: Type.Boolean() });
export type BootstrapStatus = Static<typeof BootstrapStatusSchema>;

export const BootstrapBody = Type.Object({ username: Username, email: Type.String({ maxLength: 320 }) });
export type BootstrapBody = Static<typeof BootstrapBody>;

export const RecoverBody = Type.Object({
  username: Username,
  email: Type.Optional(Type.String({ maxLength: 320 })),
});
export type RecoverBody = Static<typeof RecoverBody>;

/** The answer of bootstrap and recover: the admin and its fresh key (shown once). */
export const CredentialSchema = Type.Object({ user: UserSchema, api_key: NewApiKeySchema });
export type Credential = Static<typeof CredentialSchema>;

/** One audit log entry; absent actor, target and address are omitted. */
export const AuditEntrySchema = Type.Object(
  {
    id: Type.Integer(),
    created_at: Timestamp,
    action: Type.String({ description: 'e.g. bootstrap, bootstrap.recover, user.created, api_key.deleted' }),
    actor: Type.Optional(Type.String({ description: 'username, or a non-user actor such as "cli"' })),
    actor_user_id: Type.Optional(Type.Integer()),
    target: Type.Optional(Type.String({ description: 'e.g. user:7, api_key:12' })),
    detail: Type.Record(Type.String(), Type.Unknown()),
    client_address: Type.Optional(Type.String()),
  },
  { title: 'AuditEntry' },
);
export type AuditEntry = Static<typeof AuditEntrySchema>;

export const DEFAULT_AUDIT_LIMIT = 100;
export const AuditQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: DEFAULT_AUDIT_LIMIT })),
  before: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      description:
        'The id of an entry: only the entries older than it (the next page: the last id of the page before). 400 when no entry has this id.',
    }),
  ),
});
export type AuditQuery = Static<typeof AuditQuery>;
