-- Every connection of the server plans each statement for the arguments and
-- table sizes of its call (plan_cache_mode = force_custom_plan, set when the
-- pool connects; db/database.ts): a generic plan kept from a connection's
-- first calls, made while the tables were small, scanned whole tables for
-- good once they had grown (bench/README.md, "Resolves and kept plans").
--
-- The setting travels into the database functions with their caller. Three
-- of them keep their plans on purpose, and go on doing so: every statement
-- in them finds its rows by index at any size, since scans of whole tables
-- are priced out inside them (migrations 0980 and 1000), and planning the
-- intake calls on every call cost about a fifth of the database's time of a
-- new group (migration 1000). The other functions (statistics, routing and
-- credentials triggers; a statement or two each) are planned per call like
-- every other statement. terdut_intake_begin did so already (0900).

ALTER FUNCTION terdut_intake_open(text, text[], jsonb, text, jsonb, text, integer, bigint, bigint, jsonb, jsonb,
                                  timestamptz, timestamptz)
  SET plan_cache_mode = auto;
ALTER FUNCTION terdut_intake_repeat(text, text[], timestamptz[], timestamptz[], text[], timestamptz, timestamptz)
  SET plan_cache_mode = auto;
ALTER FUNCTION stats_count_links() SET plan_cache_mode = auto;
