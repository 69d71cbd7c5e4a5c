-- Idempotency-Key records of POST /v1/pets, per API key, shared by every instance. Each is
-- written in the same transaction as the pet it created, so a committed pet always has its
-- record; pets never change, so the pet id is enough to replay the answer. Deleted after 24 hours
-- (created_at, epoch ms).
CREATE TABLE idempotency_keys (
  key_id      TEXT   NOT NULL,
  idem_key    TEXT   NOT NULL,
  fingerprint TEXT   NOT NULL, -- SHA-256 (hex) of the canonical request body
  pet_id      BIGINT NOT NULL,
  created_at  BIGINT NOT NULL,
  PRIMARY KEY (key_id, idem_key)
);
CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);
