-- Webhook deliveries made as they are attempted (src/webhooks/delivery.ts), not when an event is
-- written: each endpoint walks the event log from its cursor, and a claim of the delivery worker
-- takes the next events an endpoint receives for its free slots, each a delivery written already
-- claimed. A delivery row exists only for an attempt made, so an endpoint that never answers costs
-- one row per attempt (WEBHOOK_CONCURRENCY at a time, each waiting WEBHOOK_TIMEOUT_MS), not one per
-- event: before, the dispatcher wrote a row per event and endpoint for every event, whether the
-- endpoint could take it or not, and every event wrote an outbox row in its change's transaction.
--
-- webhook_endpoint_cursors: where an endpoint's walk is, in the log's order (xid, seq) of
-- migration 024, and when it last took some (walks take turns by it, and claimers at once skip
-- each other's, FOR UPDATE SKIP LOCKED). A walk reads only up to the oldest transaction that may
-- still write an event (the listings' horizon), so it never passes one that commits late. Made
-- with its endpoint after the transactions begun before it (its own xid, seq 0), moved there again
-- when a disabled endpoint is enabled (what happened meanwhile is sent by a replay), and left where
-- it is while the endpoint is disabled.
CREATE TABLE webhook_endpoint_cursors (
  endpoint_id TEXT   PRIMARY KEY REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  after_xid   xid8   NOT NULL,
  after_seq   BIGINT NOT NULL,
  walked_at   BIGINT NOT NULL
);
-- The events still in the outbox (not yet fanned out) are walked, from the first of them in the
-- log's order; an event already fanned out to an endpoint has its delivery, which the walk's insert
-- keeps (one per event and endpoint).
INSERT INTO webhook_endpoint_cursors (endpoint_id, after_xid, after_seq, walked_at)
  SELECT e.id, COALESCE(o.xid, pg_current_xact_id()), COALESCE(o.seq - 1, 0), 0
    FROM webhook_endpoints e
    LEFT JOIN (SELECT v.xid, v.seq FROM webhook_outbox w JOIN events v ON v.seq = w.seq ORDER BY v.xid, v.seq LIMIT 1) o ON true;
DROP TABLE webhook_outbox;

-- A failing endpoint has at most one attempt leased at a time (claimDue): the endpoints with one.
-- Only attempts in flight (or lost with their instance, until claimed again) have a lease.
CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (endpoint_id, locked_until) WHERE locked_until IS NOT NULL;
