import { KeyInputError } from '../keys/administration.js'
import { readDateTime } from '../shared/date-time.js'

/**
 * The keys commands' flags as the key service's input, and its refusals in the flags' names: the
 * service names its fields as the admin API does (`perMinute`), the CLI as flags (`--per-minute`).
 */

/** The service's field names as the CLI's flags, for its error messages. */
const FLAGS: Record<string, string> = {
  plan: '--plan',
  customerId: '--customer',
  name: '--name',
  perMinute: '--per-minute',
  perDay: '--per-day',
  expiresAt: '--expires-at',
  metadata: '--metadata',
  graceSeconds: '--grace',
  limit: '--limit',
  state: '--state',
  scopes: '--scopes',
}

/** A KeyInputError's message with the fields named as flags (`perMinute` -> `--per-minute`). */
export function inputErrorMessage(error: KeyInputError): string {
  if (error.field === 'id') return error.message.replace(/^id /, 'key ')
  let message = error.message.replace(/\b(perMinute|perDay|expiresAt|graceSeconds|customerId)\b/g, (field) => FLAGS[field]!)
  const flag = FLAGS[error.field]
  if (flag !== undefined && (message.startsWith(error.field + ' ') || message.startsWith(error.field + ':')))
    message = flag + message.slice(error.field.length)
  return message
}

/** ISO 8601 with a time and an offset (or Z), or `none` to clear when clearing is allowed. */
export function expiry(raw: string | undefined, clearable: boolean): number | null | undefined {
  if (raw === undefined) return undefined
  if (clearable && raw === 'none') return null
  const reading = readDateTime(raw)
  if ('ms' in reading) return reading.ms
  if (reading.problem === 'impossible')
    throw new KeyInputError('expiresAt', `expiresAt must be a date and time that exists (${reading.detail}; got ${JSON.stringify(raw)})`)
  throw new KeyInputError(
    'expiresAt',
    `expiresAt must be an ISO 8601 date and time with an offset, e.g. 2027-01-31T00:00:00Z (got ${JSON.stringify(raw)})`,
  )
}

export function metadata(raw: string | undefined, clearable: boolean): Record<string, unknown> | null | undefined {
  if (raw === undefined) return undefined
  if (clearable && raw === 'none') return null
  try {
    return JSON.parse(raw) as Record<string, unknown>
  } catch {
    throw new KeyInputError('metadata', 'metadata must be a JSON object, e.g. \'{"customer":"c_42"}\'')
  }
}

/** `--scopes pets:read,orders:read`: the scopes as the service checks them (an empty item is kept, and refused there). */
export function scopesFlag(raw: string | undefined): string[] | undefined {
  return raw === undefined ? undefined : raw.split(',').map((s) => s.trim())
}
