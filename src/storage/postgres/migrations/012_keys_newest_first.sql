-- The keys list is newest first, keyset-paged on (created_at, id COLLATE "C") (issue 32; "C" for
-- SQLite's byte order whatever the database's collation). 001's index on (created_at, id) has the
-- database's collation, which the planner cannot use for that order: this one matches it.
CREATE INDEX api_keys_created_at_id_c ON api_keys (created_at, id COLLATE "C");
