-- The keys list is newest first, keyset-paged on (created_at, id) (issue 32): one index serves the
-- order and the cursor, read backwards.
CREATE INDEX api_keys_created_at_id ON api_keys (created_at, id);
