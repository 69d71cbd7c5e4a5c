-- Webhook delivery (src/webhooks/delivery.ts).
--
-- webhook_outbox: the events not yet fanned out to the endpoints, one row each, written by
-- writeChange beside the event in its change's transaction (only while an endpoint is enabled: with
-- none, an event costs nothing more), and deleted by the dispatcher in the transaction that makes
-- the event's deliveries. The dispatcher reads what is there, not a seq cursor: on PostgreSQL a
-- change that took a lower seq can commit after one with a higher seq, and a cursor past the higher
-- one would skip it; a row here is seen once its change has committed, whatever its seq. A table of
-- its own rather than a column of events marking the undispatched: the write path gains one b-tree
-- entry (this table's key), and dispatching deletes it, where an UPDATE of events would write a new
-- version of the row and an entry in each of its seven indexes (PostgreSQL), or rewrite the row in
-- its b-tree and the partial index (SQLite).
--
-- webhook_deliveries: one per event and endpoint that receives it (unique), pending until a 2xx
-- (delivered) or the end of the retry schedule, a 410 or a disabled endpoint (failed). attempts
-- counts the attempts begun; a claim counts one up, leases the delivery until locked_until and
-- moves next_attempt_at there, so a claim lost with its instance (kill -9) is due again when its
-- lease ends, for any instance; its outcome is recorded only while the claim holds its lease
-- (attempts and locked_until as the claim left them). The last attempt's status, duration and
-- error are kept on the row for the log's listing. Deleted with their endpoint, and with their event
-- (the event log's retention).
--
-- webhook_delivery_attempts: each attempt, numbered, with what it came to (duration_ms null: its
-- outcome was never recorded, its instance stopped) and the first characters of the answer.
CREATE TABLE webhook_outbox (
  seq BIGINT PRIMARY KEY
);
CREATE TABLE webhook_deliveries (
  id               TEXT    PRIMARY KEY,
  endpoint_id      TEXT    NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_seq        BIGINT  NOT NULL REFERENCES events (seq) ON DELETE CASCADE,
  event_id         TEXT    NOT NULL,
  event_type       TEXT    NOT NULL,
  status           TEXT    NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts         INTEGER NOT NULL,
  next_attempt_at  BIGINT,
  locked_until     BIGINT,
  last_status_code INTEGER,
  last_duration_ms INTEGER,
  last_error       TEXT,
  created_at       BIGINT  NOT NULL,
  updated_at       BIGINT  NOT NULL,
  CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
);
-- One delivery per event and endpoint; an endpoint's log, newest first; its deletion's cascade.
CREATE UNIQUE INDEX webhook_deliveries_endpoint_event ON webhook_deliveries (endpoint_id, event_seq);
-- The event log's retention: a swept event takes its deliveries.
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_seq);
-- The worker's claim: the pending, by when they are due.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE TABLE webhook_delivery_attempts (
  delivery_id      TEXT    NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempt          INTEGER NOT NULL,
  started_at       BIGINT  NOT NULL,
  duration_ms      INTEGER,
  status_code      INTEGER,
  error            TEXT,
  response_excerpt TEXT,
  PRIMARY KEY (delivery_id, attempt)
);

-- The delivery log's reads (webhook_delivery.list, webhook_delivery.read) join the read actions of
-- AUDIT_KIND_SQL (src/storage/audit-query.ts), so the two indexes on an entry's kind are recreated
-- with the new list, word for word.
DROP INDEX audit_log_kind_seq;
DROP INDEX audit_log_key_id_kind_seq;
CREATE INDEX audit_log_kind_seq ON audit_log (
  (CASE WHEN action IN ('key.list', 'key.read', 'key.usage', 'audit_log.list', 'key.usage_history', 'usage.top', 'order.list', 'order.read', 'key.lookup', 'customer.list', 'customer.read', 'customer.usage_history', 'webhook_endpoint.list', 'webhook_endpoint.read', 'event.list', 'webhook_delivery.list', 'webhook_delivery.read') THEN 'read' ELSE 'change' END),
  seq
);
CREATE INDEX audit_log_key_id_kind_seq ON audit_log (
  (key_id || ':' || (CASE WHEN action IN ('key.list', 'key.read', 'key.usage', 'audit_log.list', 'key.usage_history', 'usage.top', 'order.list', 'order.read', 'key.lookup', 'customer.list', 'customer.read', 'customer.usage_history', 'webhook_endpoint.list', 'webhook_endpoint.read', 'event.list', 'webhook_delivery.list', 'webhook_delivery.read') THEN 'read' ELSE 'change' END)),
  seq
);
