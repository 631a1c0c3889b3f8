-- The full intake's first call (terdut_intake_begin, migration 0900) keeps
-- its statements' plans per connection, as the new-group and repeat calls
-- do since migration 1000: with whole-table scans priced out inside it,
-- every plan it can keep finds its rows by index at any size (the group's
-- open incident by group key, alerts by fingerprint and by the group's
-- firing alerts, links by alert id), so a plan made while a fresh
-- install's tables were small stays right as they grow. Planned on every
-- call, it took 0.78 ms per call, most of it planning its four statements;
-- kept, every notification that takes the full intake (an alert joining,
-- a resolve) costs PostgreSQL 0.2-1.0 ms less CPU (bench/README.md, "The
-- full intake's first call, planned once").
ALTER FUNCTION terdut_intake_begin(text, text[], timestamptz) SET plan_cache_mode = auto;
ALTER FUNCTION terdut_intake_begin(text, text[], timestamptz) SET enable_seqscan = off;
