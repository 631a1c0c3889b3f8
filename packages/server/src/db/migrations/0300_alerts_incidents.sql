-- Alerts (one row per Alertmanager fingerprint, reused across occurrences),
-- incidents (correlated by Alertmanager's groupKey), which alerts belong to
-- which incident, and every incident's timeline. See api-contract.md
-- "Alerts", "Incidents" and IntakeService for the rules.

CREATE TABLE incidents (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  group_key text NOT NULL,
  title text NOT NULL,
  group_labels jsonb NOT NULL DEFAULT '{}'::jsonb,
  status text NOT NULL DEFAULT 'triggered' CHECK (status IN ('triggered', 'acknowledged', 'resolved')),
  -- High-water mark of the alerts' `severity` label; severity_rank orders it
  -- (services/severity.ts) so that it is never lowered.
  severity text,
  severity_rank integer NOT NULL DEFAULT 0,
  triggered_at timestamptz NOT NULL,
  acknowledged_by bigint REFERENCES users (id),
  acknowledged_at timestamptz,
  assigned_to bigint REFERENCES users (id),
  -- Snoozes expire by falling into the past; nothing sweeps them.
  snoozed_until timestamptz,
  resolved_at timestamptz,
  resolution_source text CHECK (resolution_source IN ('alerts', 'manual')),
  archived_at timestamptz,
  CHECK ((status = 'resolved') = (resolved_at IS NOT NULL))
);
-- At most one open incident per group, whatever the number of replicas: the
-- intake also serialises per group with an advisory lock, this is the backstop.
CREATE UNIQUE INDEX incidents_one_open_per_group ON incidents (group_key) WHERE status <> 'resolved';
CREATE INDEX incidents_newest ON incidents (triggered_at DESC, id DESC);
CREATE INDEX incidents_group ON incidents (group_key, id DESC);
CREATE INDEX incidents_resolved_at ON incidents (resolved_at) WHERE status = 'resolved';

CREATE TABLE alerts (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  fingerprint text NOT NULL UNIQUE,
  -- The group the alert was last notified in (the staleness sweep works per group).
  group_key text NOT NULL,
  name text NOT NULL,
  status text NOT NULL CHECK (status IN ('firing', 'resolved')),
  labels jsonb NOT NULL,
  annotations jsonb NOT NULL,
  starts_at timestamptz NOT NULL,
  ends_at timestamptz,
  generator_url text NOT NULL DEFAULT '',
  -- When the server first received the current occurrence.
  received_at timestamptz NOT NULL,
  -- When a notification last carried this alert (staleness is measured from here).
  last_seen_at timestamptz NOT NULL,
  resolution_source text CHECK (resolution_source IN ('alertmanager', 'expiry')),
  -- The newest incident this alert belongs to.
  incident_id bigint REFERENCES incidents (id) ON DELETE SET NULL,
  archived_at timestamptz
);
CREATE INDEX alerts_newest ON alerts (received_at DESC, id DESC);
CREATE INDEX alerts_stale_candidates ON alerts (last_seen_at) WHERE status = 'firing';
CREATE INDEX alerts_incident ON alerts (incident_id);

-- Which alerts belong to which incident, so an incident's `alerts` are its
-- own even after the alert row moved on to a newer incident.
CREATE TABLE incident_alerts (
  incident_id bigint NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
  alert_id bigint NOT NULL REFERENCES alerts (id) ON DELETE CASCADE,
  -- starts_at of the occurrence that joined: an occurrence already part of an
  -- incident of the group opens no new one (manual resolve is terminal).
  occurrence_starts_at timestamptz NOT NULL,
  added_at timestamptz NOT NULL,
  PRIMARY KEY (incident_id, alert_id)
);
CREATE INDEX incident_alerts_alert ON incident_alerts (alert_id);

CREATE TABLE incident_events (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  incident_id bigint NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
  type text NOT NULL,
  -- The person who acted (on `assigned`: the assignee); NULL when the server acted.
  user_id bigint REFERENCES users (id),
  alert_id bigint REFERENCES alerts (id) ON DELETE SET NULL,
  detail text,
  created_at timestamptz NOT NULL
);
CREATE INDEX incident_events_timeline ON incident_events (incident_id, created_at, id);
