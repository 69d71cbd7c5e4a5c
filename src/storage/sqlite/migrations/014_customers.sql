-- Customers (issue 31): a customer has a plan (Enterprise: its own limits) and any number of keys,
-- which share one quota, the customer's (limiter identity c:<customer id>), and its orders.
-- A key's plan and limits are copied from its customer when it is created and rewritten with
-- every key of the customer when the customer's plan changes (with change-log rows, so every
-- instance reloads them): the request path reads the key record alone, as before.
CREATE TABLE customers (
  id         TEXT    PRIMARY KEY,
  name       TEXT    NOT NULL,
  plan       TEXT    NOT NULL CHECK (plan IN ('free', 'pro', 'business', 'enterprise')),
  per_minute INTEGER NOT NULL CHECK (per_minute > 0),
  per_day    INTEGER NOT NULL CHECK (per_day > 0),
  metadata   TEXT, -- a JSON object, or NULL
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
-- Existing keys have no customer: their quota stays k:<quota_id>, their orders theirs.
ALTER TABLE api_keys ADD COLUMN customer_id TEXT REFERENCES customers (id);
CREATE INDEX api_keys_customer_id ON api_keys (customer_id) WHERE customer_id IS NOT NULL;

-- The customers resource records its reads: they join the read actions of AUDIT_KIND_SQL
-- (src/storage/audit-query.ts), so the two indexes on an entry's kind are recreated word for word.
DROP INDEX audit_log_kind_seq;
DROP INDEX audit_log_key_id_kind_seq;
CREATE INDEX audit_log_kind_seq ON audit_log (
  (CASE WHEN action IN ('key.list', 'key.read', 'key.usage', 'audit_log.list', 'key.usage_history', 'usage.top', 'order.list', 'order.read', 'key.lookup', 'customer.list', 'customer.read', 'customer.usage_history') THEN 'read' ELSE 'change' END),
  seq
);
CREATE INDEX audit_log_key_id_kind_seq ON audit_log (
  (key_id || ':' || (CASE WHEN action IN ('key.list', 'key.read', 'key.usage', 'audit_log.list', 'key.usage_history', 'usage.top', 'order.list', 'order.read', 'key.lookup', 'customer.list', 'customer.read', 'customer.usage_history') THEN 'read' ELSE 'change' END)),
  seq
);
