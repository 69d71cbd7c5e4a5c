-- Animals. AUTOINCREMENT: ids are never reused, even after the highest row is gone.
CREATE TABLE pets (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  name        TEXT    NOT NULL,
  category_id INTEGER NOT NULL,
  status      TEXT    CHECK (status IN ('available', 'pending', 'sold'))
);
-- Serves "WHERE status = ? AND id > ? ORDER BY id LIMIT ?" without a scan or a sort.
CREATE INDEX pets_status_id ON pets (status, id);

-- API keys: only the SHA-256 of a key is stored, with a short display prefix.
CREATE TABLE api_keys (
  id         TEXT    PRIMARY KEY,
  name       TEXT    NOT NULL,
  plan       TEXT    NOT NULL CHECK (plan IN ('free', 'pro', 'business', 'enterprise')),
  per_minute INTEGER NOT NULL CHECK (per_minute > 0),
  per_day    INTEGER NOT NULL CHECK (per_day > 0),
  hash       TEXT    NOT NULL UNIQUE,
  prefix     TEXT    NOT NULL,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
);

-- Append-only log that running instances poll to drop revoked keys from their caches.
CREATE TABLE key_revocations (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  key_hash   TEXT    NOT NULL,
  revoked_at INTEGER NOT NULL
);
