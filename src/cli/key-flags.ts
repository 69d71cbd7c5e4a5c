import { readDateTime } from '../shared/date-time.js'
import { UsageError } from './command-errors.js'

/**
 * The commands' flags as the services' input, and the services' fields as flags: a service names
 * its fields as the admin API does (`perMinute`), the CLI as flags (`--per-minute`).
 */

/** The flags whose names are not the field's in kebab case. */
const FLAGS: Record<string, string> = { customerId: '--customer', gracePeriodSeconds: '--grace', expiresInSeconds: '--expires-in' }

/** The flag of a service's field, for its refusals (cli.ts): `perMinute` -> `--per-minute`. */
export const flagOf = (field: string): string => FLAGS[field] ?? `--${field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`

/** ISO 8601 with a time and an offset (or Z), or `none` to clear when clearing is allowed. */
export function expiry(raw: string | undefined, clearable: boolean): number | null | undefined {
  if (raw === undefined) return undefined
  if (clearable && raw === 'none') return null
  const reading = readDateTime(raw)
  if ('ms' in reading) return reading.ms
  if (reading.problem === 'impossible')
    throw new UsageError(`--expires-at must be a date and time that exists (${reading.detail}; got ${JSON.stringify(raw)})`)
  throw new UsageError(
    `--expires-at must be an ISO 8601 date and time with an offset, e.g. 2027-01-31T00:00:00Z (got ${JSON.stringify(raw)})`,
  )
}

export function metadata(raw: string | undefined, clearable: boolean): Record<string, unknown> | null | undefined {
  if (raw === undefined) return undefined
  if (clearable && raw === 'none') return null
  try {
    return JSON.parse(raw) as Record<string, unknown>
  } catch {
    throw new UsageError('--metadata must be a JSON object, e.g. \'{"customer":"c_42"}\'')
  }
}

/** `--scopes pets:read,orders:read`: the scopes as the service checks them (an empty item is kept, and refused there). */
export function scopesFlag(raw: string | undefined): string[] | undefined {
  return raw === undefined ? undefined : raw.split(',').map((s) => s.trim())
}
