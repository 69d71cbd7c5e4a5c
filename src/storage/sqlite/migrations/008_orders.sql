-- The store (issue 30): orders that reserve an animal, and the counts of animals by status.
-- Every change of an animal's status comes with a change of its order, in one transaction, made by
-- conditional UPDATEs (src/orders/state.ts, src/storage/order-sql.ts).

-- Moves at every change of the row (an ETag can be made of it).
ALTER TABLE pets ADD COLUMN version INTEGER NOT NULL DEFAULT 1;

-- Times are epoch ms. owner: whose order it is (opaque: src/keys/api-key.ts, orderOwner); key_id:
-- the API key that placed it. expires_at: the end of the hold, fixed when it is placed.
CREATE TABLE orders (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  pet_id     INTEGER NOT NULL REFERENCES pets (id),
  status     TEXT    NOT NULL CHECK (status IN ('placed', 'cancelled', 'completed', 'expired')),
  owner      TEXT    NOT NULL,
  key_id     TEXT    NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  ended_at   INTEGER,
  version    INTEGER NOT NULL DEFAULT 1
);
-- One open order per animal, whatever the code above it does.
CREATE UNIQUE INDEX orders_placed_pet ON orders (pet_id) WHERE status = 'placed';
-- A caller's orders, all or by status, in id order; operators': by status, by key.
CREATE INDEX orders_owner_id ON orders (owner, id);
CREATE INDEX orders_owner_status_id ON orders (owner, status, id);
CREATE INDEX orders_status_id ON orders (status, id);
CREATE INDEX orders_key_id_id ON orders (key_id, id);
-- The expiry sweep: placed orders by the end of their hold.
CREATE INDEX orders_placed_expires_at ON orders (expires_at, id) WHERE status = 'placed';

-- An Idempotency-Key of POST /v1/store/orders: its record names the order it placed (pet_id is
-- then the order's animal). One table for both operations: a key names one request.
ALTER TABLE idempotency_keys ADD COLUMN order_id INTEGER;

-- GET /v1/store/inventory in one read of three rows, kept exact by the triggers below in the
-- transaction of every insert, status change and delete of a pet. An animal without a status is
-- in no row.
CREATE TABLE pet_status_counts (
  status TEXT    PRIMARY KEY CHECK (status IN ('available', 'pending', 'sold')),
  pets   INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO pet_status_counts (status, pets)
  SELECT s.status, (SELECT count(*) FROM pets WHERE pets.status = s.status)
    FROM (SELECT 'available' AS status UNION ALL SELECT 'pending' UNION ALL SELECT 'sold') AS s;

-- Moves at every change of an existing pet (by any connection): the caches of pets of every
-- process read it when the database changed (src/storage/sqlite/catalogue-clock.ts).
CREATE TABLE pet_changes (
  id      INTEGER PRIMARY KEY CHECK (id = 1),
  changes INTEGER NOT NULL
);
INSERT INTO pet_changes (id, changes) VALUES (1, 0);

CREATE TRIGGER pets_counted_on_insert AFTER INSERT ON pets WHEN NEW.status IS NOT NULL
BEGIN
  UPDATE pet_status_counts SET pets = pets + 1 WHERE status = NEW.status;
END;
CREATE TRIGGER pets_counted_on_status AFTER UPDATE OF status ON pets WHEN OLD.status IS NOT NEW.status
BEGIN
  UPDATE pet_status_counts SET pets = pets - 1 WHERE status = OLD.status;
  UPDATE pet_status_counts SET pets = pets + 1 WHERE status = NEW.status;
END;
CREATE TRIGGER pets_counted_on_delete AFTER DELETE ON pets WHEN OLD.status IS NOT NULL
BEGIN
  UPDATE pet_status_counts SET pets = pets - 1 WHERE status = OLD.status;
END;
CREATE TRIGGER pets_changed_on_update AFTER UPDATE ON pets
BEGIN
  UPDATE pet_changes SET changes = changes + 1 WHERE id = 1;
END;
CREATE TRIGGER pets_changed_on_delete AFTER DELETE ON pets
BEGIN
  UPDATE pet_changes SET changes = changes + 1 WHERE id = 1;
END;
