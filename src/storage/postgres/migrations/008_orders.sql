-- The store (issue 30): orders that reserve an animal, and the counts of animals by status.
-- Every change of an animal's status comes with a change of its order, in one transaction, made by
-- conditional UPDATEs (src/orders/state.ts, src/storage/order-sql.ts). A constant default: no
-- table rewrite.

-- Moves at every change of the row (an ETag can be made of it).
ALTER TABLE pets ADD COLUMN version BIGINT NOT NULL DEFAULT 1;

-- Times are epoch ms. owner: whose order it is (opaque: src/keys/api-key.ts, orderOwner); key_id:
-- the API key that placed it. expires_at: the end of the hold, fixed when it is placed.
CREATE TABLE orders (
  id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  pet_id     BIGINT NOT NULL REFERENCES pets (id),
  status     TEXT   NOT NULL CHECK (status IN ('placed', 'cancelled', 'completed', 'expired')),
  owner      TEXT   NOT NULL,
  key_id     TEXT   NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  ended_at   BIGINT,
  version    BIGINT NOT NULL DEFAULT 1
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
ALTER TABLE idempotency_keys ADD COLUMN order_id BIGINT;

-- GET /v1/store/inventory: the sum of at most 96 rows, kept exact by the triggers below in the
-- transaction of every insert, status change and delete of a pet. A row per status and shard, the
-- shard being the writing backend's (pg_backend_pid() % 32), so that concurrent transactions
-- rarely wait on the same row (one row per status would make every insert wait for the commit of
-- the one before); a shard's count may go below zero, the sum never does. Each transaction updates
-- rows of its own shard only, in the order of the status names, so two can never deadlock on them.
-- An animal without a status is in no row.
CREATE TABLE pet_status_counts (
  status TEXT     NOT NULL CHECK (status IN ('available', 'pending', 'sold')),
  shard  SMALLINT NOT NULL,
  pets   BIGINT   NOT NULL DEFAULT 0,
  PRIMARY KEY (status, shard)
);
INSERT INTO pet_status_counts (status, shard)
  SELECT s, n FROM unnest(ARRAY['available', 'pending', 'sold']) AS s, generate_series(0, 31) AS n;
UPDATE pet_status_counts c SET pets = t.pets
  FROM (SELECT status, count(*) AS pets FROM pets WHERE status IS NOT NULL GROUP BY status) t
 WHERE c.status = t.status AND c.shard = 0;

CREATE FUNCTION pets_count_status() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  mine SMALLINT := pg_backend_pid() % 32;
  gone  TEXT := CASE WHEN TG_OP IN ('UPDATE', 'DELETE') THEN OLD.status END;
  came  TEXT := CASE WHEN TG_OP IN ('INSERT', 'UPDATE') THEN NEW.status END;
BEGIN
  IF gone IS NOT DISTINCT FROM came THEN RETURN NULL; END IF;
  -- In the order of the names: every transaction takes these row locks in one order.
  IF gone IS NOT NULL AND (came IS NULL OR gone < came) THEN
    UPDATE pet_status_counts SET pets = pets - 1 WHERE status = gone AND shard = mine;
    gone := NULL;
  END IF;
  IF came IS NOT NULL THEN
    UPDATE pet_status_counts SET pets = pets + 1 WHERE status = came AND shard = mine;
  END IF;
  IF gone IS NOT NULL THEN
    UPDATE pet_status_counts SET pets = pets - 1 WHERE status = gone AND shard = mine;
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER pets_counted_on_insert AFTER INSERT ON pets FOR EACH ROW WHEN (NEW.status IS NOT NULL)
  EXECUTE FUNCTION pets_count_status();
CREATE TRIGGER pets_counted_on_status AFTER UPDATE OF status ON pets FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status)
  EXECUTE FUNCTION pets_count_status();
CREATE TRIGGER pets_counted_on_delete AFTER DELETE ON pets FOR EACH ROW WHEN (OLD.status IS NOT NULL)
  EXECUTE FUNCTION pets_count_status();
