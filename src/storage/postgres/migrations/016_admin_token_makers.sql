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
     AND a.details ->> 'tokenId' = admin_tokens.id
     AND a.actor_id IN (SELECT id FROM admin_tokens) AND a.actor_id <> admin_tokens.id
   ORDER BY a.seq LIMIT 1
);

-- And what the rule would have done: a token still active under a revoked one (minted with a token
-- an operator then revoked, which the revocation left working) is revoked now, audited as the
-- service's own change (actor system/migration-016) and in the change log, so that every running
-- server drops it. The change log's lock as src/storage/postgres/key-change-log.ts takes it.
LOCK TABLE key_changes IN SHARE ROW EXCLUSIVE MODE;
CREATE TEMPORARY TABLE doomed ON COMMIT DROP AS
  WITH RECURSIVE under_revoked (id) AS (
    SELECT child.id FROM admin_tokens child JOIN admin_tokens maker ON maker.id = child.created_by WHERE maker.revoked_at IS NOT NULL
    UNION
    SELECT child.id FROM admin_tokens child JOIN under_revoked u ON child.created_by = u.id
  )
  SELECT t.id, t.name, t.prefix, t.hash, t.created_by, t.created_at
    FROM admin_tokens t WHERE t.revoked_at IS NULL AND t.id IN (SELECT id FROM under_revoked);

INSERT INTO audit_log (at, actor_type, actor_id, action, key_id, details, request_id)
SELECT (extract(epoch FROM now()) * 1000)::bigint, 'system', 'migration-016', 'admin_token.revoke', NULL,
       jsonb_build_object('tokenId', id, 'name', name, 'prefix', prefix, 'createdBy', created_by, 'revokedWith', created_by), NULL
  FROM doomed ORDER BY created_at, id;
INSERT INTO key_changes (key_hash, changed_at) SELECT hash, (extract(epoch FROM now()) * 1000)::bigint FROM doomed;
UPDATE admin_tokens SET revoked_at = (extract(epoch FROM now()) * 1000)::bigint WHERE id IN (SELECT id FROM doomed);
