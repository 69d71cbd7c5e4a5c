import { CustomerNotFoundError } from '../../customers/errors.js'
import { KeyConflictError, KeyInputError, KeyNotFoundError } from '../../keys/administration.js'
import { readDateTime } from '../../shared/date-time.js'
import { ApiError } from '../../shared/errors.js'

/** The service's values (Unix ms) as the admin API writes them: RFC 3339 strings in UTC. */
export const iso = (ms: number) => new Date(ms).toISOString()
export const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms))

/** An RFC 3339 time from a request -> Unix ms; null stays null (clears the expiry). */
export function parseTime(field: string, value: string | null | undefined): number | null | undefined {
  if (value === null || value === undefined) return value
  const reading = readDateTime(value)
  if ('ms' in reading) return reading.ms
  if (reading.problem === 'impossible')
    throw new ApiError('invalid_request', `${field} must be a date and time that exists (${reading.detail})`)
  throw new ApiError('invalid_request', `${field} must be an RFC 3339 date-time such as 2027-01-01T00:00:00Z`)
}

/** The service's field names, where the admin API calls a field otherwise. */
const API_FIELD: Record<string, string> = { graceSeconds: 'gracePeriodSeconds' }

/** The service's refusals in the closed list: bad input is 400 naming the field, an unknown key 404, a key in the wrong state 409. */
export async function callService<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof KeyInputError) {
      const field = API_FIELD[error.field] ?? error.field
      const message = error.message.startsWith(error.field) ? field + error.message.slice(error.field.length) : `${field}: ${error.message}`
      throw new ApiError('invalid_request', message)
    }
    if (error instanceof KeyNotFoundError) throw new ApiError('not_found', error.message)
    if (error instanceof CustomerNotFoundError) throw new ApiError('not_found', error.message)
    if (error instanceof KeyConflictError) throw new ApiError('conflict', error.message)
    throw error
  }
}
