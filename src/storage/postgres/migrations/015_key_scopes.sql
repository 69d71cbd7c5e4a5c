-- Scoped keys (issue 31): what a key may do, from the closed list of src/shared/scopes.ts, as
-- space-separated text (OAuth's form of a scope list: src/shared/scopes.ts says why). Every key
-- that exists, and every key created without scopes, has all four: nothing changes for them.
ALTER TABLE api_keys ADD COLUMN scopes TEXT NOT NULL DEFAULT 'pets:read pets:write orders:read orders:write';
