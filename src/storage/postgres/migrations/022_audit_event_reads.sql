-- The event log's operator listing records its reads (event.list): it joins the read actions of
-- AUDIT_KIND_SQL (src/storage/audit-query.ts), so the two indexes on an entry's kind are recreated
-- with the new list, word for word. A migration of its own after 021 (not in 020 with the events
-- table): on a new database 020 runs before 021, whose indexes would replace these.
DROP INDEX audit_log_kind_seq;
DROP INDEX audit_log_key_id_kind_seq;
CREATE INDEX audit_log_kind_seq ON audit_log (
  (CASE WHEN action IN ('key.list', 'key.read', 'key.usage', 'audit_log.list', 'key.usage_history', 'usage.top', 'order.list', 'order.read', 'key.lookup', 'customer.list', 'customer.read', 'customer.usage_history', 'webhook_endpoint.list', 'webhook_endpoint.read', 'event.list') THEN 'read' ELSE 'change' END),
  seq
);
CREATE INDEX audit_log_key_id_kind_seq ON audit_log (
  (key_id || ':' || (CASE WHEN action IN ('key.list', 'key.read', 'key.usage', 'audit_log.list', 'key.usage_history', 'usage.top', 'order.list', 'order.read', 'key.lookup', 'customer.list', 'customer.read', 'customer.usage_history', 'webhook_endpoint.list', 'webhook_endpoint.read', 'event.list') THEN 'read' ELSE 'change' END)),
  seq
);
