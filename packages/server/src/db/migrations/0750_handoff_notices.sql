-- Handoff notices (issue 13): "on call for <schedule> until Mon 09:00" to
-- the person whose shift starts, "your shift ended" to the one before.
-- A row claims one notice: its unique key (schedule, handoff instant,
-- person, kind) makes every replica's pass after the first a no-op, so each
-- notice is decided once. Its messages go through the paging outbox
-- (page_deliveries, purpose 'handoff'): the same lease, retries and providers
-- as pages.
CREATE TABLE handoff_notices (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  schedule_id bigint NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
  handoff_at timestamptz NOT NULL,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('started', 'ended')),
  -- The message as composed when the handoff was claimed (names and times as they were then).
  title text NOT NULL,
  body text NOT NULL,
  webhook_body jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  UNIQUE (schedule_id, handoff_at, user_id, kind)
);

ALTER TABLE page_deliveries ALTER COLUMN incident_id DROP NOT NULL;
ALTER TABLE page_deliveries ADD COLUMN handoff_notice_id bigint REFERENCES handoff_notices (id) ON DELETE CASCADE;
ALTER TABLE page_deliveries DROP CONSTRAINT page_deliveries_purpose_check;
ALTER TABLE page_deliveries ADD CONSTRAINT page_deliveries_purpose_check
  CHECK (purpose IN ('page', 'resolved', 'update', 'summary', 'handoff'));
-- A message is about an incident or about a handoff, never both or neither.
ALTER TABLE page_deliveries ADD CONSTRAINT page_deliveries_subject_check
  CHECK ((purpose = 'handoff') = (incident_id IS NULL) AND (purpose = 'handoff') = (handoff_notice_id IS NOT NULL));
-- One message per notice and contact.
CREATE UNIQUE INDEX page_deliveries_one_handoff ON page_deliveries (handoff_notice_id, contact_key)
  WHERE handoff_notice_id IS NOT NULL;
