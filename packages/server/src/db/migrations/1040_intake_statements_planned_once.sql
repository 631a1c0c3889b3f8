-- The two commonest notifications' statements planned once per connection,
-- not on every call (bench/README.md, "Two intake statements, planned
-- once"). Every connection plans each statement for its call
-- (db/database.ts, plan_cache_mode = force_custom_plan); these two plans
-- do not depend on the call's arguments or the tables' sizes, and were
-- planned again on every call all the same.

-- New groups' first notifications, gathered (repositories/alert-groups.ts,
-- openIfNewGroups): the statement that unpacks the calls and runs
-- terdut_intake_open for each, in the order of the groups' lock keys, as
-- it was sent before. Sent as it was, its plan took 0.09 ms per call to
-- make, a tenth of a 1-alert new group's PostgreSQL time; in a function
-- that keeps its plans it is made once per connection. It reads no table.
CREATE FUNCTION terdut_intake_open_gathered(p_calls jsonb)
RETURNS TABLE (n bigint, incident_id bigint, routing_current boolean)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = auto
AS $$
BEGIN
  -- The sorted subquery is not flattened (it has an ORDER BY), so the calls
  -- run, and take their group locks, in the order of the locks' keys.
  RETURN QUERY
  SELECT g.n, o.incident_id, o.routing_current
    FROM (SELECT c.call, c.n
            FROM jsonb_array_elements(p_calls) WITH ORDINALITY AS c(call, n)
           ORDER BY hashtextextended(c.call->>'group_key', 0), c.n) g
   CROSS JOIN LATERAL terdut_intake_open(
          g.call->>'group_key',
          ARRAY(SELECT jsonb_array_elements_text(g.call->'fingerprints')),
          g.call->'alerts',
          g.call->>'title',
          g.call->'group_labels',
          g.call->>'severity',
          (g.call->>'severity_rank')::integer,
          (g.call->>'routing_version')::bigint,
          (g.call->>'policy_id')::bigint,
          g.call->'policy',
          g.call->'routing_labels',
          (g.call->>'now')::timestamptz,
          (g.call->>'stale_before')::timestamptz) o;
END;
$$;

-- An unchanged repeat's one write (terdut_intake_repeat, migrations 0950,
-- 1000): `UPDATE alerts SET last_seen_at … WHERE id = ANY(v_ids)`. Left to
-- choose, PostgreSQL planned it anew for every call (a custom plan for a
-- known array looks cheaper than the generic one), 0.04 ms each, more than
-- running it. With whole-table scans priced out in the function (migration
-- 1000) its generic plan finds the alerts by primary key at any size; the
-- function's other statements already ran on generic plans.
ALTER FUNCTION terdut_intake_repeat(text, text[], timestamptz[], timestamptz[], text[], timestamptz, timestamptz)
  SET plan_cache_mode = force_generic_plan;
