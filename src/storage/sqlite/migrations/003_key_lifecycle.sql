-- Key lifecycle (issue 10): expiry, rotation, metadata, last use, and an audit log.
-- quota_id: the limiter identity is k:<quota_id>; a rotated key's successor inherits it. Existing
-- keys are their own quota, so their persisted limiter state (k:<id>) stays theirs.
ALTER TABLE api_keys ADD COLUMN quota_id TEXT NOT NULL DEFAULT '';
UPDATE api_keys SET quota_id = id;
ALTER TABLE api_keys ADD COLUMN expires_at INTEGER;
ALTER TABLE api_keys ADD COLUMN updated_at INTEGER NOT NULL DEFAULT 0;
UPDATE api_keys SET updated_at = created_at;
ALTER TABLE api_keys ADD COLUMN metadata TEXT; -- a JSON object, or NULL
ALTER TABLE api_keys ADD COLUMN rotated_to TEXT;
ALTER TABLE api_keys ADD COLUMN rotated_from TEXT;
ALTER TABLE api_keys ADD COLUMN last_used_at INTEGER;
-- Plan and limit changes apply to every key of a quota.
CREATE INDEX api_keys_quota_id ON api_keys (quota_id);

-- The revocation log becomes the log of every change to a key (update, rotation, revocation):
-- instances poll it and drop the changed keys from their caches, which then reload them.
ALTER TABLE key_revocations RENAME TO key_changes;
ALTER TABLE key_changes RENAME COLUMN revoked_at TO changed_at;

-- Who changed what, when; never a secret. Append-only.
CREATE TABLE audit_log (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  at         INTEGER NOT NULL,
  actor_type TEXT    NOT NULL,
  actor_id   TEXT    NOT NULL,
  action     TEXT    NOT NULL,
  key_id     TEXT,
  details    TEXT    NOT NULL, -- a JSON object
  request_id TEXT
);
CREATE INDEX audit_log_key_id_seq ON audit_log (key_id, seq);
