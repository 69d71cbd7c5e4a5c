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
