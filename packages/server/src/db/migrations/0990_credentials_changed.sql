-- Every replica keeps the owners of API keys it has just looked up for a few
-- seconds (services/api-key-cache.ts, issue 15), so a request with a key
-- usually costs no database round trip. A revoked key, a deleted person or a
-- changed role must still take effect on every replica at once: any change
-- to what that lookup reads announces itself on one channel, and every
-- replica that hears it forgets every key it remembers. The payload is
-- empty: which key changed does not matter when forgetting all of them is
-- this cheap, and it leaves nothing to parse or trust.
--
-- NOTIFY is transactional: listeners hear it only once the change is
-- committed, so a replica that re-reads on hearing it reads the new state.
-- A replica that misses it (its listening connection was reconnecting)
-- still forgets each key within the cache's own bound of 5 s.
CREATE FUNCTION terdut_credentials_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('terdut_credentials', '');
  RETURN NULL;
END;
$$;

-- Once per statement, not per row: deleting a person's ten keys is one
-- notification. Inserts are left out: a new key was never remembered (only
-- keys found are), so it works at once anyway. An UPDATE only of the
-- columns the lookup reads: authentication moves last_used_at at most once
-- a minute per key, and a statement trigger fires even when its WHERE
-- matches nothing, so a trigger on every UPDATE would make every replica
-- forget everything whenever any key was used. A column the lookup starts
-- reading belongs in this list.
CREATE TRIGGER api_keys_credentials_changed
  AFTER UPDATE OF id, user_id, key_hash OR DELETE OR TRUNCATE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION terdut_credentials_changed();

-- Any update of a user: role, kind and deleted_at decide what a key may do,
-- and the rest (email, password, ntfy topic) changes rarely enough that
-- telling them apart is not worth a list to keep in step with the table.
CREATE TRIGGER users_credentials_changed
  AFTER UPDATE OR DELETE OR TRUNCATE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION terdut_credentials_changed();
