-- Paging: who is paged (escalation policies), how (contact methods), and the
-- durable state that makes every page go out exactly once across replicas:
-- one escalation row per incident (its timer is `due_at`, never a timer in
-- one process's memory) and one delivery row per message (the outbox).

-- Routing order: the first policy (lowest position) whose matchers all match
-- the incident's labels wins; else the one marked default; else the built-in
-- default (README, "Paging"). Steps and matchers are small documents that
-- are always read and written whole, so they are jsonb, validated by the service.
CREATE TABLE escalation_policies (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name text NOT NULL UNIQUE,
  position integer NOT NULL,
  is_default boolean NOT NULL DEFAULT false,
  -- Alertmanager matcher strings as given, e.g. ["severity=~\"critical|high\"", "team!=db"].
  matchers jsonb NOT NULL DEFAULT '[]',
  -- [{ "delay_ms": 0, "targets": [{ "type": "on_call" } | { "type": "user", "user_id": 7 } | { "type": "admins" }] }]
  steps jsonb NOT NULL,
  repeat integer NOT NULL DEFAULT 0 CHECK (repeat >= 0),
  repeat_delay_ms bigint NOT NULL,
  notify_on_resolve boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX escalation_policies_one_default ON escalation_policies (is_default) WHERE is_default;

-- Ways to reach a person. The contract's users.ntfy_topic stays where it is
-- and is paged as one more ntfy method (contact key 'ntfy_topic').
CREATE TABLE contact_methods (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('ntfy', 'webhook', 'email')),
  name text NOT NULL DEFAULT '',
  -- ntfy: the topic; webhook: the URL; email: the address.
  target text NOT NULL,
  -- webhook: the HMAC key receivers verify X-Terdut-Signature with. Stored
  -- in clear because we must compute the HMAC; never returned after creation.
  secret text,
  enabled boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL
);
CREATE INDEX contact_methods_user ON contact_methods (user_id);

-- The escalation of one incident. `due_at` is when a worker (any replica)
-- must look at it next; NULL means nothing is scheduled (stopped, finished).
-- `round` grows each time paging restarts at step 1 (unacknowledge, snooze
-- ran out), so a restart pages again instead of colliding with old pages.
CREATE TABLE escalations (
  incident_id bigint PRIMARY KEY REFERENCES incidents (id) ON DELETE CASCADE,
  policy_id bigint,
  -- The policy as it was when paging started: editing or deleting a policy
  -- does not change escalations already running.
  policy jsonb NOT NULL,
  state text NOT NULL CHECK (state IN ('active', 'paused', 'stopped', 'finished')),
  round integer NOT NULL DEFAULT 0,
  -- The next step to fire (0-based) and the repeat pass it belongs to.
  step integer NOT NULL DEFAULT 0,
  repeat integer NOT NULL DEFAULT 0,
  due_at timestamptz,
  -- Grows when a new alert joins, or the severity rises, while the incident
  -- is acknowledged; the worker tells the acknowledger once per value.
  updates integer NOT NULL DEFAULT 0,
  -- The group and common labels the incident was routed on (maintenance windows match them too).
  labels jsonb NOT NULL DEFAULT '{}',
  updated_at timestamptz NOT NULL
);
CREATE INDEX escalations_due ON escalations (due_at) WHERE due_at IS NOT NULL;

-- The outbox: one row per message to send. The unique key is the
-- exactly-once claim: whichever replica inserts it first owns the page;
-- everyone else's insert does nothing.
CREATE TABLE page_deliveries (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  incident_id bigint NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
  -- page: a step's page; resolved: the resolved notice; update: news for the
  -- acknowledger; summary: the pages folded in one minute of a storm.
  purpose text NOT NULL CHECK (purpose IN ('page', 'resolved', 'update', 'summary')),
  round integer NOT NULL,
  step integer NOT NULL,
  repeat integer NOT NULL,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- 'method:<id>' or 'ntfy_topic'.
  contact_key text NOT NULL,
  method_id bigint,
  kind text NOT NULL,
  target text NOT NULL,
  -- folded: not sent on its own; a summary (purpose 'summary') lists it.
  state text NOT NULL CHECK (state IN ('pending', 'sent', 'failed', 'cancelled', 'folded')),
  attempts integer NOT NULL DEFAULT 0,
  -- When a worker may (re)try. A claim pushes it one lease ahead, so a
  -- replica that dies mid-send leaves the row to be retried after the lease.
  next_attempt_at timestamptz NOT NULL,
  last_error text,
  provider_message_id text,
  created_at timestamptz NOT NULL,
  sent_at timestamptz,
  UNIQUE (incident_id, purpose, round, step, repeat, user_id, contact_key)
);
CREATE INDEX page_deliveries_due ON page_deliveries (next_attempt_at) WHERE state = 'pending';
-- One summary per person, contact and minute of a storm (`round` holds the minute).
CREATE UNIQUE INDEX page_deliveries_one_summary ON page_deliveries (user_id, contact_key, round)
  WHERE purpose = 'summary';
-- Counting a person's recent pages (storm folding).
CREATE INDEX page_deliveries_recent_by_person ON page_deliveries (user_id, created_at) WHERE purpose = 'page';

-- Maintenance windows: incidents whose labels match during [starts_at,
-- ends_at) are recorded but page nobody; their escalations wait for the end.
CREATE TABLE maintenance_windows (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  starts_at timestamptz NOT NULL,
  ends_at timestamptz NOT NULL,
  matchers jsonb NOT NULL DEFAULT '[]',
  reason text NOT NULL,
  created_by bigint REFERENCES users (id),
  created_at timestamptz NOT NULL,
  CHECK (ends_at > starts_at)
);
CREATE INDEX maintenance_windows_ends ON maintenance_windows (ends_at);

-- Heartbeats (dead man's switches): refreshed by a matching alert (the
-- always-firing Watchdog) or POST /api/heartbeats/{id}/ping; one not
-- refreshed within interval + grace opens an incident (group
-- 'heartbeat:<id>') that pages like any other and resolves when it returns.
CREATE TABLE heartbeats (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name text NOT NULL UNIQUE,
  interval_ms bigint NOT NULL CHECK (interval_ms > 0),
  grace_ms bigint NOT NULL CHECK (grace_ms >= 0),
  matchers jsonb NOT NULL DEFAULT '[]',
  last_seen_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL
);

-- Signs the capabilities in notifications' Acknowledge buttons and links.
INSERT INTO instance_secrets (name, secret)
VALUES ('paging_capability', gen_random_uuid()::text || gen_random_uuid()::text);
