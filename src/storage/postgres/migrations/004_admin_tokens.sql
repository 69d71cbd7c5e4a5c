-- Admin tokens (the admin API, /admin/v1): like API keys, only the SHA-256 of a token is stored,
-- with a short display prefix. Another table than api_keys: an API key is never an admin token.
-- Times are epoch ms.
CREATE TABLE admin_tokens (
  id         TEXT   PRIMARY KEY,
  name       TEXT   NOT NULL,
  hash       TEXT   NOT NULL UNIQUE,
  prefix     TEXT   NOT NULL,
  created_at BIGINT NOT NULL,
  revoked_at BIGINT
);
