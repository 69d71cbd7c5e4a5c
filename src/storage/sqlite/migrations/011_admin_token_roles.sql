-- Admin token roles (issue 32): `read` may read the admin API (keys, usage, audit log, orders) but
-- change nothing; `admin` may do everything. Every token made before roles existed keeps what it
-- could do: `admin`. The list is closed here and in ADMIN_TOKEN_ROLES
-- (src/admin-tokens/admin-token-repository.ts).
ALTER TABLE admin_tokens ADD COLUMN role TEXT NOT NULL DEFAULT 'admin' CHECK (role IN ('read', 'admin'));
