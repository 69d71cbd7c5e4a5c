-- Webhook endpoints: URLs that are sent the events they subscribe to (events: a JSON array of
-- types, or ["*"] for every type), only their customer's when customer_id is set, signed with
-- their secret. The secret (whsec_…) is kept as it is: signing needs it, so it cannot be a hash
-- as an API key's is (SECURITY.md). After a rotation, previous_secret signs beside it until
-- previous_secret_expires_at (epoch ms). An endpoint is enabled, or disabled with its reason: by
-- an operator (manual), its receiver answered 410 (gone), or it failed for too long (failing,
-- with failing_since: when its deliveries started failing).
CREATE TABLE webhook_endpoints (
  id                         TEXT    PRIMARY KEY,
  url                        TEXT    NOT NULL,
  description                TEXT,
  events                     JSONB   NOT NULL CHECK (jsonb_typeof(events) = 'array'),
  customer_id                TEXT    REFERENCES customers (id),
  enabled                    BOOLEAN NOT NULL,
  secret                     TEXT    NOT NULL,
  previous_secret            TEXT,
  previous_secret_expires_at BIGINT,
  failing_since              BIGINT,
  disabled_reason            TEXT    CHECK (disabled_reason IN ('manual', 'gone', 'failing')),
  created_at                 BIGINT  NOT NULL,
  updated_at                 BIGINT  NOT NULL,
  CHECK (enabled = (disabled_reason IS NULL)),
  CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL))
);
CREATE INDEX webhook_endpoints_customer_id ON webhook_endpoints (customer_id, id) WHERE customer_id IS NOT NULL;

-- The webhook endpoints resource records its reads (webhook_endpoint.list, webhook_endpoint.read):
-- they join the read actions of AUDIT_KIND_SQL (src/storage/audit-query.ts), so the two indexes on
-- an entry's kind are recreated with the new list, word for word.
DROP INDEX audit_log_kind_seq;
DROP INDEX audit_log_key_id_kind_seq;
CREATE INDEX audit_log_kind_seq ON audit_log (
  (CASE WHEN action IN ('key.list', 'key.read', 'key.usage', 'audit_log.list', 'key.usage_history', 'usage.top', 'order.list', 'order.read', 'key.lookup', 'customer.list', 'customer.read', 'customer.usage_history', 'webhook_endpoint.list', 'webhook_endpoint.read') THEN 'read' ELSE 'change' END),
  seq
);
CREATE INDEX audit_log_key_id_kind_seq ON audit_log (
  (key_id || ':' || (CASE WHEN action IN ('key.list', 'key.read', 'key.usage', 'audit_log.list', 'key.usage_history', 'usage.top', 'order.list', 'order.read', 'key.lookup', 'customer.list', 'customer.read', 'customer.usage_history', 'webhook_endpoint.list', 'webhook_endpoint.read') THEN 'read' ELSE 'change' END)),
  seq
);
