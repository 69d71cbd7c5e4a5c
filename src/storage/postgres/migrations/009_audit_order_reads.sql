-- The admin API's orders resource records its reads (order.list, order.read): they join the read
-- actions of AUDIT_KIND_SQL (src/storage/audit-query.ts), so the two indexes on an entry's kind
-- are recreated with the new list, word for word, or the planner would no longer use them.
DROP INDEX audit_log_kind_seq;
DROP INDEX audit_log_key_id_kind_seq;
CREATE INDEX audit_log_kind_seq ON audit_log (
  (CASE WHEN action IN ('key.list', 'key.read', 'key.usage', 'audit_log.list', 'key.usage_history', 'usage.top', 'order.list', 'order.read') THEN 'read' ELSE 'change' END),
  seq
);
CREATE INDEX audit_log_key_id_kind_seq ON audit_log (
  (key_id || ':' || (CASE WHEN action IN ('key.list', 'key.read', 'key.usage', 'audit_log.list', 'key.usage_history', 'usage.top', 'order.list', 'order.read') THEN 'read' ELSE 'change' END)),
  seq
);
