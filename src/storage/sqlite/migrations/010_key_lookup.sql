-- Finding a leaked key by its display prefix (POST /admin/v1/keys/lookup with a prefix): keys with
-- that prefix in id order, from an index rather than a scan of every key.
CREATE INDEX api_keys_prefix_id ON api_keys (prefix, id);

-- A lookup of a whole key is a read (key.lookup): it joins the read actions of AUDIT_KIND_SQL
-- (src/storage/audit-query.ts), so the two indexes on an entry's kind are recreated with the new
-- list, word for word, or the planner would no longer use them.
DROP INDEX audit_log_kind_seq;
DROP INDEX audit_log_key_id_kind_seq;
CREATE INDEX audit_log_kind_seq ON audit_log (
  (CASE WHEN action IN ('key.list', 'key.read', 'key.usage', 'audit_log.list', 'key.usage_history', 'usage.top', 'order.list', 'order.read', 'key.lookup') THEN 'read' ELSE 'change' END),
  seq
);
CREATE INDEX audit_log_key_id_kind_seq ON audit_log (
  (key_id || ':' || (CASE WHEN action IN ('key.list', 'key.read', 'key.usage', 'audit_log.list', 'key.usage_history', 'usage.top', 'order.list', 'order.read', 'key.lookup') THEN 'read' ELSE 'change' END)),
  seq
);
