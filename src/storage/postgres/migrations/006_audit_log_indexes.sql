-- The audit log's filters each walk an index in seq order, so that a filtered page examines a
-- bounded number of rows however long the log is (src/storage/audit-query.ts): an actor's
-- entries, an action's, an actor type's, a time range's, a kind's (read or change) and a key's of
-- one kind (the console's view of a key: its changes). key_id has its index since 003.
-- The kind is an expression of the action, AUDIT_KIND_SQL in audit-query.ts word for word (and a
-- key's kind, AUDIT_KEY_KIND_SQL): a planner uses an index on an expression only for a query that
-- says the same.
CREATE INDEX audit_log_actor_id_seq ON audit_log (actor_id, seq);
CREATE INDEX audit_log_action_seq ON audit_log (action, seq);
CREATE INDEX audit_log_actor_type_seq ON audit_log (actor_type, seq);
CREATE INDEX audit_log_at_seq ON audit_log (at, seq);
CREATE INDEX audit_log_kind_seq ON audit_log (
  (CASE WHEN action IN ('key.list', 'key.read', 'key.usage', 'audit_log.list', 'key.usage_history', 'usage.top') THEN 'read' ELSE 'change' END),
  seq
);
CREATE INDEX audit_log_key_id_kind_seq ON audit_log (
  (key_id || ':' || (CASE WHEN action IN ('key.list', 'key.read', 'key.usage', 'audit_log.list', 'key.usage_history', 'usage.top') THEN 'read' ELSE 'change' END)),
  seq
);
