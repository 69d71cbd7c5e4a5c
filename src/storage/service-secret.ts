import { randomBytes } from 'node:crypto'

/**
 * The service's secret (Storage.serviceSecret), read at open, or made by the first start that
 * finds none. ON CONFLICT DO NOTHING, then read again: of instances that start together, each
 * keeps the value written first, so all of them hold the same one.
 */
export const SELECT_SERVICE_SECRET = "SELECT secret FROM service_secrets WHERE name = 'service'"

/** The secret made now: its value and the time (epoch ms), `?` for SQLite, `$n` for PostgreSQL. */
export const insertServiceSecret = (engine: 'sqlite' | 'postgres'): string =>
  `INSERT INTO service_secrets (name, secret, created_at) VALUES ('service', ${engine === 'sqlite' ? '?, ?' : '$1, $2'}) ON CONFLICT (name) DO NOTHING`

/** 256 random bits from the process's CSPRNG, as text. */
export const newServiceSecret = (): string => randomBytes(32).toString('base64url')
