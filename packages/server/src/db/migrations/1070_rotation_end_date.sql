-- A rotation may end: its last shift ends on end_date at its handoff_time,
-- in the schedule's zone (a wall-clock date, as start_date, so the end moves
-- with the wall clock across a DST change). NULL: it goes on for ever.
ALTER TABLE schedule_rotations ADD COLUMN end_date date;
ALTER TABLE schedule_rotations ADD CONSTRAINT schedule_rotations_end_after_start
  CHECK (end_date IS NULL OR end_date > start_date);
