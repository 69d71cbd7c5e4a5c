-- The event log (src/events/): one row per event, written in the transaction of the change it
-- describes (writeChange), so a change and its events commit together or not at all. seq orders
-- the log and is the `after` cursor of its listings (AUTOINCREMENT: never reused, even once the
-- newest rows are swept). data is the resource as the API shows it, JSON text kept as written
-- (int64 fields exact). An event belongs to a customer, else to a key chain (the first key of a
-- rotation chain, every key of it has it as quota_id); key_id is the key it is about or that made
-- it. once_key, when set, makes an event happen once however many instances try (a usage threshold
-- of a window, a ban): a second insert with the same value is skipped.
-- Numbered 020 while 021 exists already: each file is applied once by name (migrate.ts), so a
-- database that has 021 applies this one at its next start.
CREATE TABLE events (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  id           TEXT    NOT NULL UNIQUE,
  type         TEXT    NOT NULL,
  occurred_at  INTEGER NOT NULL,
  data         TEXT    NOT NULL,
  customer_id  TEXT,
  key_chain_id TEXT,
  key_id       TEXT,
  once_key     TEXT    UNIQUE
);
-- The reads: a customer's or a chain's events (GET /v1/events), with or without a type; an
-- operator's by type or key (GET /admin/v1/events); the retention sweep by age.
CREATE INDEX events_customer_seq ON events (customer_id, seq) WHERE customer_id IS NOT NULL;
CREATE INDEX events_customer_type_seq ON events (customer_id, type, seq) WHERE customer_id IS NOT NULL;
CREATE INDEX events_key_chain_seq ON events (key_chain_id, seq) WHERE key_chain_id IS NOT NULL;
CREATE INDEX events_key_chain_type_seq ON events (key_chain_id, type, seq) WHERE key_chain_id IS NOT NULL;
CREATE INDEX events_type_seq ON events (type, seq);
CREATE INDEX events_key_id_seq ON events (key_id, seq) WHERE key_id IS NOT NULL;
CREATE INDEX events_occurred_at ON events (occurred_at);
