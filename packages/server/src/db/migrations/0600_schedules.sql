-- Several schedules, each with rotations (layers) and overrides (README
-- "On-call schedules"). The contract's day entries become whole-day
-- overrides of the default schedule: same ids, so entries a client shows
-- keep their id.

CREATE TABLE schedules (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name text NOT NULL,
  -- An IANA zone. NULL only on the default schedule this migration makes: it
  -- follows TERDUT_TIMEZONE, so "today" in the contract's day endpoints keeps
  -- its meaning until an admin gives the schedule a zone of its own.
  time_zone text,
  is_default boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX schedules_name ON schedules (lower(name));
-- At most one default; the service keeps exactly one by moving the flag in a transaction.
CREATE UNIQUE INDEX schedules_one_default ON schedules (is_default) WHERE is_default;
INSERT INTO schedules (name, time_zone, is_default) VALUES ('Default', NULL, true);

CREATE TABLE schedule_rotations (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  schedule_id bigint NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
  name text NOT NULL,
  -- Higher layers win where they have someone.
  layer integer NOT NULL,
  shift_length integer NOT NULL CHECK (shift_length > 0),
  shift_unit text NOT NULL CHECK (shift_unit IN ('hours', 'days', 'weeks')),
  -- Wall-clock date and time in the schedule's zone, not instants: a zone
  -- change (or a DST rule change) moves the handoffs with the wall clock.
  start_date date NOT NULL,
  handoff_time text NOT NULL,
  restrict_weekdays integer[],
  restrict_from text,
  restrict_to text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX schedule_rotations_schedule ON schedule_rotations (schedule_id);

CREATE TABLE schedule_rotation_participants (
  rotation_id bigint NOT NULL REFERENCES schedule_rotations (id) ON DELETE CASCADE,
  position integer NOT NULL,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  PRIMARY KEY (rotation_id, position)
);
CREATE INDEX schedule_rotation_participants_user ON schedule_rotation_participants (user_id);

CREATE TABLE schedule_overrides (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  schedule_id bigint NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- Either a whole local day (the contract's day entries; its instants follow
  -- the schedule's zone) or a span between two instants.
  day date,
  starts_at timestamptz,
  ends_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK (
    (day IS NOT NULL AND starts_at IS NULL AND ends_at IS NULL)
    OR (day IS NULL AND starts_at IS NOT NULL AND ends_at IS NOT NULL AND starts_at < ends_at)
  )
);
-- One person per day, as before; also serves range reads by day.
CREATE UNIQUE INDEX schedule_overrides_day ON schedule_overrides (schedule_id, day) WHERE day IS NOT NULL;
CREATE INDEX schedule_overrides_span ON schedule_overrides (schedule_id, starts_at) WHERE day IS NULL;
CREATE INDEX schedule_overrides_user ON schedule_overrides (user_id);

INSERT INTO schedule_overrides (id, schedule_id, user_id, day, created_at) OVERRIDING SYSTEM VALUE
  SELECT e.id, s.id, e.user_id, e.date, e.created_at
    FROM schedule_entries e CROSS JOIN schedules s
   WHERE s.is_default;
SELECT setval(
  pg_get_serial_sequence('schedule_overrides', 'id'),
  (SELECT coalesce(max(id), 0) + 1 FROM schedule_overrides),
  false
);
DROP TABLE schedule_entries;

-- iCalendar feeds: one per schedule and one per person. Only a SHA-256 hash
-- of the secret is kept; the URL carries the id and the secret.
CREATE TABLE schedule_feeds (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  schedule_id bigint UNIQUE REFERENCES schedules (id) ON DELETE CASCADE,
  user_id bigint UNIQUE REFERENCES users (id) ON DELETE CASCADE,
  secret_hash text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((schedule_id IS NULL) <> (user_id IS NULL))
);
