-- Who made each admin token: the admin token whose call to POST /admin/v1/admin-tokens made it, or
-- NULL for one made by the CLI (an operator with the database). A token lives no longer than the
-- token that made it: a revocation revokes, in the same transaction, every token under the one
-- named (src/admin-tokens/admin-token-repository.ts), so a token minted with a stolen one goes with
-- it. Written once, at the insert, to a token that existed then: the tokens form a tree.
ALTER TABLE admin_tokens ADD COLUMN created_by TEXT REFERENCES admin_tokens (id);
CREATE INDEX admin_tokens_created_by ON admin_tokens (created_by) WHERE created_by IS NOT NULL;

-- The tokens made through the admin API before now: their maker is the actor of their
-- admin_token.create entry (written with every creation there since the API could make tokens).
-- A token without one stays a root, as made by the CLI.
UPDATE admin_tokens SET created_by = (
  SELECT a.actor_id FROM audit_log a
   WHERE a.action = 'admin_token.create' AND a.actor_type = 'admin_token'
     AND json_extract(a.details, '$.tokenId') = admin_tokens.id
     AND a.actor_id IN (SELECT id FROM admin_tokens) AND a.actor_id <> admin_tokens.id
   ORDER BY a.seq LIMIT 1
);

-- And what the rule would have done: a token still active under a revoked one (minted with a token
-- an operator then revoked, which the revocation left working) is revoked now, audited as the
-- service's own change (actor system/migration-016) and in the change log, so that every running
-- server drops it.
WITH RECURSIVE doomed (id) AS (
  SELECT child.id FROM admin_tokens child JOIN admin_tokens maker ON maker.id = child.created_by WHERE maker.revoked_at IS NOT NULL
  UNION
  SELECT child.id FROM admin_tokens child JOIN doomed ON child.created_by = doomed.id
)
INSERT INTO audit_log (at, actor_type, actor_id, action, key_id, details, request_id)
SELECT CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), 'system', 'migration-016', 'admin_token.revoke', NULL,
       json_object('tokenId', t.id, 'name', t.name, 'prefix', t.prefix, 'createdBy', t.created_by, 'revokedWith', t.created_by), NULL
  FROM admin_tokens t WHERE t.revoked_at IS NULL AND t.id IN (SELECT id FROM doomed)
 ORDER BY t.created_at, t.id;

WITH RECURSIVE doomed (id) AS (
  SELECT child.id FROM admin_tokens child JOIN admin_tokens maker ON maker.id = child.created_by WHERE maker.revoked_at IS NOT NULL
  UNION
  SELECT child.id FROM admin_tokens child JOIN doomed ON child.created_by = doomed.id
)
INSERT INTO key_changes (key_hash, changed_at)
SELECT t.hash, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
  FROM admin_tokens t WHERE t.revoked_at IS NULL AND t.id IN (SELECT id FROM doomed);

WITH RECURSIVE doomed (id) AS (
  SELECT child.id FROM admin_tokens child JOIN admin_tokens maker ON maker.id = child.created_by WHERE maker.revoked_at IS NOT NULL
  UNION
  SELECT child.id FROM admin_tokens child JOIN doomed ON child.created_by = doomed.id
)
UPDATE admin_tokens SET revoked_at = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
 WHERE revoked_at IS NULL AND id IN (SELECT id FROM doomed);
