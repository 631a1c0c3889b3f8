-- The on-call schedule: one person per calendar day (api-contract.md).
-- `date` is a calendar date with no zone; "today" is computed in
-- TERDUT_TIMEZONE by the server, so changing the zone never rewrites rows.

CREATE TABLE schedule_entries (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- Users are soft-deleted, so this rarely fires; the cascade only keeps a
  -- hard delete (retention, manual clean-up) from being blocked.
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- One person per day. The unique index also serves range reads by date.
  date date NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX schedule_entries_user ON schedule_entries (user_id);
