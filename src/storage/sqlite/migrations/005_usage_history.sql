-- Usage history: per key, counts per UTC minute and per UTC hour. Every flush of every
-- instance adds to both (additive upserts), so the hour rows are exact without a roll-up job.
-- start: the bucket's first instant, epoch ms. Old rows are deleted in batches by start.
CREATE TABLE usage_minutes (
  key_id       TEXT    NOT NULL,
  start        INTEGER NOT NULL,
  allowed      INTEGER NOT NULL DEFAULT 0,
  rate_limited INTEGER NOT NULL DEFAULT 0,
  banned       INTEGER NOT NULL DEFAULT 0,
  status_2xx   INTEGER NOT NULL DEFAULT 0,
  status_4xx   INTEGER NOT NULL DEFAULT 0,
  status_5xx   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (key_id, start)
);
CREATE INDEX usage_minutes_start ON usage_minutes (start);

CREATE TABLE usage_hours (
  key_id       TEXT    NOT NULL,
  start        INTEGER NOT NULL,
  allowed      INTEGER NOT NULL DEFAULT 0,
  rate_limited INTEGER NOT NULL DEFAULT 0,
  banned       INTEGER NOT NULL DEFAULT 0,
  status_2xx   INTEGER NOT NULL DEFAULT 0,
  status_4xx   INTEGER NOT NULL DEFAULT 0,
  status_5xx   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (key_id, start)
);
CREATE INDEX usage_hours_start ON usage_hours (start);
