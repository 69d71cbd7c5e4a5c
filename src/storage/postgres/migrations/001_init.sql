-- Animals. An identity never hands out a value twice, even after the highest row is gone.
CREATE TABLE pets (
  id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name        TEXT   NOT NULL,
  category_id BIGINT NOT NULL,
  status      TEXT   CHECK (status IN ('available', 'pending', 'sold'))
);
-- Serves "WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3" as one index range scan, no sort;
-- the primary key serves the unfiltered page the same way.
CREATE INDEX pets_status_id ON pets (status, id);

-- API keys: only the SHA-256 of a key is stored, with a short display prefix. Times are epoch ms.
CREATE TABLE api_keys (
  id         TEXT    PRIMARY KEY,
  name       TEXT    NOT NULL,
  plan       TEXT    NOT NULL CHECK (plan IN ('free', 'pro', 'business', 'enterprise')),
  per_minute BIGINT  NOT NULL CHECK (per_minute > 0),
  per_day    BIGINT  NOT NULL CHECK (per_day > 0),
  hash       TEXT    NOT NULL UNIQUE,
  prefix     TEXT    NOT NULL,
  created_at BIGINT  NOT NULL,
  revoked_at BIGINT
);
-- listKeys order.
CREATE INDEX api_keys_created_at_id ON api_keys (created_at, id);

-- Append-only log that running instances poll to drop revoked keys from their caches (the
-- safety net behind NOTIFY). revokeKey serialises its inserts so seq order is commit order.
CREATE TABLE key_revocations (
  seq        BIGSERIAL PRIMARY KEY,
  key_hash   TEXT   NOT NULL,
  revoked_at BIGINT NOT NULL
);
