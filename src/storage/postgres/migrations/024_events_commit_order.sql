-- The event log's listings in an order that commits cannot overtake (GET /v1/events, GET
-- /admin/v1/events; event-repository.ts). seq comes from a sequence, handed out when an event is
-- inserted, not when its transaction commits: with several writers, seq 5 can commit after seq 6,
-- and a reader that saw 6 and moved its cursor past it never saw 5. Each event now keeps the id of
-- the transaction that wrote it (xid8: 64 bits, never wraps), and a listing reads the events in
-- (xid, seq) order and only up to the oldest write transaction still open
-- (pg_snapshot_xmin(pg_current_snapshot())): a transaction that commits later has an xid at or
-- above that horizon, so it sorts after every event already listed. The events written before this
-- migration all committed long ago: they keep xid 0 and their seq order.
ALTER TABLE events ADD COLUMN xid xid8 NOT NULL DEFAULT '0';
ALTER TABLE events ALTER COLUMN xid SET DEFAULT pg_current_xact_id();

-- The indexes the listings walk, now in their order (owner, [type,] xid, seq).
DROP INDEX events_customer_seq;
DROP INDEX events_customer_type_seq;
DROP INDEX events_key_chain_seq;
DROP INDEX events_key_chain_type_seq;
DROP INDEX events_type_seq;
DROP INDEX events_key_id_seq;
CREATE INDEX events_customer_xid_seq ON events (customer_id, xid, seq) WHERE customer_id IS NOT NULL;
CREATE INDEX events_customer_type_xid_seq ON events (customer_id, type, xid, seq) WHERE customer_id IS NOT NULL;
CREATE INDEX events_key_chain_xid_seq ON events (key_chain_id, xid, seq) WHERE key_chain_id IS NOT NULL;
CREATE INDEX events_key_chain_type_xid_seq ON events (key_chain_id, type, xid, seq) WHERE key_chain_id IS NOT NULL;
CREATE INDEX events_type_xid_seq ON events (type, xid, seq);
CREATE INDEX events_key_id_xid_seq ON events (key_id, xid, seq) WHERE key_id IS NOT NULL;
CREATE INDEX events_xid_seq ON events (xid, seq);
