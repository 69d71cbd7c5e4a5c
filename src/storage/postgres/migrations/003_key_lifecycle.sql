-- Key lifecycle (issue 10): expiry, rotation, metadata, last use, and an audit log. Times are epoch ms.
-- quota_id: the limiter identity is k:<quota_id>; a rotated key's successor inherits it. Existing
-- keys are their own quota, so their limiter state in Redis (as:rl:{k:<id>}) stays theirs.
ALTER TABLE api_keys ADD COLUMN quota_id TEXT;
UPDATE api_keys SET quota_id = id;
ALTER TABLE api_keys ALTER COLUMN quota_id SET NOT NULL;
ALTER TABLE api_keys ADD COLUMN expires_at BIGINT;
ALTER TABLE api_keys ADD COLUMN updated_at BIGINT;
UPDATE api_keys SET updated_at = created_at;
ALTER TABLE api_keys ALTER COLUMN updated_at SET NOT NULL;
ALTER TABLE api_keys ADD COLUMN metadata JSONB CHECK (metadata IS NULL OR jsonb_typeof(metadata) = 'object');
ALTER TABLE api_keys ADD COLUMN rotated_to TEXT;
ALTER TABLE api_keys ADD COLUMN rotated_from TEXT;
ALTER TABLE api_keys ADD COLUMN last_used_at BIGINT;
-- Plan and limit changes apply to every key of a quota.
CREATE INDEX api_keys_quota_id ON api_keys (quota_id);

-- The revocation log becomes the log of every change to a key (update, rotation, revocation):
-- instances poll it (and hear NOTIFY) and drop the changed keys from their caches, which then
-- reload them. Writers still serialise their inserts so that seq order is commit order.
ALTER TABLE key_revocations RENAME TO key_changes;
ALTER TABLE key_changes RENAME COLUMN revoked_at TO changed_at;

-- Who changed what, when; never a secret. Append-only.
CREATE TABLE audit_log (
  seq        BIGSERIAL PRIMARY KEY,
  at         BIGINT NOT NULL,
  actor_type TEXT   NOT NULL,
  actor_id   TEXT   NOT NULL,
  action     TEXT   NOT NULL,
  key_id     TEXT,
  details    JSONB  NOT NULL,
  request_id TEXT
);
CREATE INDEX audit_log_key_id_seq ON audit_log (key_id, seq);
