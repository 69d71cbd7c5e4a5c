/**
 * The one reader of a date and time a person or client sends (the admin API's `expiresAt`, the
 * usage and audit ranges `from` and `to`, the CLI's `--expires-at`): RFC 3339, an ISO 8601 date and
 * time with an offset, `2027-01-31T00:00:00Z` or `2027-01-31T01:00:00.5+01:00` (`T` and `Z` in
 * either case; the seconds may be left out, `2027-01-31T00:00Z`; digits past the millisecond are
 * dropped). Every field must exist as written: `Date.parse` moves `2027-02-30` to 2 March and reads
 * hour 24 as the next day, where this refuses them and says why. No leap second (`:60`).
 */

const FORM = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December']

export type DateTimeReading =
  /** Unix milliseconds. */
  | { ms: number }
  /** Not written as a date and time at all. */
  | { problem: 'form' }
  /** Written as one, but no such date or time exists; `detail` says which part (e.g. "February 2027 has 28 days"). */
  | { problem: 'impossible'; detail: string }

const isLeapYear = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)

const daysIn = (year: number, month: number) => (month === 2 ? (isLeapYear(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31)

export function readDateTime(text: string): DateTimeReading {
  const m = FORM.exec(text)
  if (m === null) return { problem: 'form' }
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as [number, number, number, number, number]
  const second = m[6] === undefined ? 0 : Number(m[6])
  const impossible = (detail: string): DateTimeReading => ({ problem: 'impossible', detail })
  if (month < 1 || month > 12) return impossible(`months go from 01 to 12, not ${m[2]}`)
  const days = daysIn(year, month)
  if (day < 1 || day > days) return impossible(`${MONTHS[month - 1]} ${m[1]} has ${days} days, not day ${m[3]}`)
  if (hour > 23) return impossible(`hours go from 00 to 23, not ${m[4]}`)
  if (minute > 59) return impossible(`minutes go from 00 to 59, not ${m[5]}`)
  if (second > 59) return impossible(`seconds go from 00 to 59, not ${m[6]}`)
  let offsetMinutes = 0
  if (m[9] !== undefined) {
    const [offsetHour, offsetMinute] = [Number(m[10]), Number(m[11])]
    if (offsetHour > 23 || offsetMinute > 59) return impossible(`an offset goes from -23:59 to +23:59, not ${m[9]}${m[10]}:${m[11]}`)
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (offsetHour * 60 + offsetMinute)
  }
  const millisecond = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'))
  // setUTCFullYear, not Date.UTC, which reads the years 0 to 99 as 1900 to 1999.
  const at = new Date(0)
  at.setUTCFullYear(year, month - 1, day)
  at.setUTCHours(hour, minute, second, millisecond)
  return { ms: at.getTime() - offsetMinutes * 60_000 }
}
