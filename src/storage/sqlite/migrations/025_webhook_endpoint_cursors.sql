-- Webhook deliveries made as they are attempted (src/webhooks/delivery.ts), not when an event is
-- written: each endpoint walks the event log from its cursor, and a claim of the delivery worker
-- takes the next events an endpoint receives for its free slots, each a delivery written already
-- claimed. A delivery row exists only for an attempt made, so an endpoint that never answers costs
-- one row per attempt (WEBHOOK_CONCURRENCY at a time, each waiting WEBHOOK_TIMEOUT_MS), not one per
-- event: before, the dispatcher wrote a row per event and endpoint (9 µs each on SQLite, in the
-- server's own process) for every event, whether the endpoint could take it or not.
--
-- webhook_endpoint_cursors: where an endpoint's walk is, the seq of the last event it was offered
-- (on SQLite seqs are handed out by the one writer, so they commit in their order), and when it
-- last took some (walks take turns by it). Made with its endpoint at the head of the log, moved to
-- the head again when a disabled endpoint is enabled (what happened meanwhile is sent by a replay),
-- and left where it is while the endpoint is disabled.
CREATE TABLE webhook_endpoint_cursors (
  endpoint_id TEXT    PRIMARY KEY REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  after_seq   INTEGER NOT NULL,
  walked_at   INTEGER NOT NULL
);
-- The events still in the outbox (not yet fanned out) are walked; an event already fanned out to an
-- endpoint has its delivery, which the walk's insert keeps (one per event and endpoint).
INSERT INTO webhook_endpoint_cursors (endpoint_id, after_seq, walked_at)
  SELECT id, COALESCE((SELECT MIN(seq) - 1 FROM webhook_outbox), (SELECT MAX(seq) FROM events), 0), 0 FROM webhook_endpoints;
DROP TABLE webhook_outbox;

-- A failing endpoint has at most one attempt leased at a time (claimDue): the endpoints with one.
-- Only attempts in flight (or lost with their instance, until claimed again) have a lease.
CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (endpoint_id, locked_until) WHERE locked_until IS NOT NULL;
