-- People and service accounts, their API keys, the explicit bootstrap record
-- and the audit log. See bootstrap-protocol.md.

CREATE TABLE users (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  username text NOT NULL,
  email text NOT NULL DEFAULT '',
  role text NOT NULL DEFAULT 'member' CHECK (role IN ('admin', 'member')),
  -- 'service' rows back service accounts: they act through API keys only and
  -- are not listed among people.
  kind text NOT NULL DEFAULT 'person' CHECK (kind IN ('person', 'service')),
  ntfy_topic text,
  password_hash text,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- Soft delete: incidents and timelines keep naming who acted; the username
  -- becomes free again.
  deleted_at timestamptz
);
CREATE UNIQUE INDEX users_username_live ON users (username) WHERE deleted_at IS NULL;

CREATE TABLE api_keys (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name text NOT NULL,
  -- SHA-256 of the 32-byte random key, hex. The key itself is shown once.
  key_hash text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz
);
CREATE INDEX api_keys_user ON api_keys (user_id);

CREATE TABLE service_accounts (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id bigint NOT NULL UNIQUE REFERENCES users (id),
  name text NOT NULL UNIQUE,
  scope text NOT NULL CHECK (scope IN ('instance')),
  created_at timestamptz NOT NULL DEFAULT now()
);

-- One row at most: whether, when and by whom the instance was bootstrapped.
-- A database with people but no row here predates the protocol and counts as
-- bootstrapped (see isBootstrapped in services/bootstrap.ts).
CREATE TABLE bootstrap_state (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  bootstrapped_at timestamptz NOT NULL DEFAULT now(),
  user_id bigint REFERENCES users (id)
);

CREATE TABLE audit_log (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  created_at timestamptz NOT NULL DEFAULT now(),
  actor_user_id bigint REFERENCES users (id),
  actor text,
  action text NOT NULL,
  target text,
  detail jsonb NOT NULL DEFAULT '{}'::jsonb,
  client_address text
);
CREATE INDEX audit_log_created ON audit_log (created_at DESC, id DESC);
