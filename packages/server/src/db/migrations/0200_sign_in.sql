-- Browser sign-in: sessions, OIDC identities, failed-login counters and the
-- key that signs sign-in cookies. All in the database, so replicas share them.

CREATE TABLE sessions (
  -- SHA-256 (hex) of the random cookie value: a database leak yields no
  -- usable cookie.
  id text PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  method text NOT NULL CHECK (method IN ('password', 'oidc')),
  created_at timestamptz NOT NULL,
  -- Sliding expiry: a session lives while last_seen_at is within the
  -- session TTL. Updated at most once a minute, not on every request.
  last_seen_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX sessions_user_live ON sessions (user_id) WHERE revoked_at IS NULL;

-- An OIDC identity (issuer + subject, stable at the provider; email is not)
-- linked to the terdut user it signs in as.
CREATE TABLE user_identities (
  issuer text NOT NULL,
  subject text NOT NULL,
  user_id bigint NOT NULL REFERENCES users (id),
  created_at timestamptz NOT NULL,
  last_sign_in_at timestamptz NOT NULL,
  PRIMARY KEY (issuer, subject)
);
CREATE INDEX user_identities_user ON user_identities (user_id);

-- Recent failed sign-ins, one row each, counted per bucket ('username:x',
-- 'address:y') over a sliding window. Old rows are pruned as new ones come.
CREATE TABLE sign_in_failures (
  bucket text NOT NULL,
  failed_at timestamptz NOT NULL
);
CREATE INDEX sign_in_failures_bucket ON sign_in_failures (bucket, failed_at);

-- Keys generated once per installation (not configuration a person must
-- provide). gen_random_uuid() draws from the server's strong random source;
-- two of them give 244 random bits.
CREATE TABLE instance_secrets (
  name text PRIMARY KEY,
  secret text NOT NULL
);
INSERT INTO instance_secrets (name, secret)
VALUES ('cookie_signing', gen_random_uuid()::text || gen_random_uuid()::text);
