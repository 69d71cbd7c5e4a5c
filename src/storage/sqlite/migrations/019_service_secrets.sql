-- Secrets every instance on this database shares, and keeps across restarts: made once, by the
-- first start that finds none (a random 256-bit value from the process's CSPRNG, written with
-- ON CONFLICT DO NOTHING, so instances starting together keep the one that was written first).
-- 'service': the service's own secret, from which each use derives its key (the entity tags of
-- conditional reads: src/http/conditional-reads.ts). Never shown, logged or sent.
CREATE TABLE service_secrets (
  name       TEXT    PRIMARY KEY,
  secret     TEXT    NOT NULL,
  created_at INTEGER NOT NULL
);
