/** How the console writes times and numbers: UTC like the API (an operator compares them with logs). */
export function time(iso: string | null, never = '—'): string {
  if (iso === null) return never
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`
}

export const count = (n: number) => n.toLocaleString('en')

/**
 * An expiry as typed: `YYYY-MM-DD HH:MM` (or with a `T`), always UTC -> RFC 3339; empty -> null.
 * A text input rather than datetime-local, whose picker shows the browser's locale (a 12-hour clock,
 * month first) under a label that says UTC. Throws, naming the form, for anything else.
 */
export function fromUtcInput(value: string): string | null {
  const text = value.trim()
  if (text === '') return null
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})$/.exec(text)
  const [year, month, day, hour, minute] = (m?.slice(1) ?? []).map(Number) as number[]
  const ms = m === null ? Number.NaN : Date.UTC(year!, month! - 1, day!, hour!, minute!)
  const date = new Date(ms)
  if (Number.isNaN(ms) || date.getUTCDate() !== day || date.getUTCHours() !== hour || date.getUTCMinutes() !== minute)
    throw new Error(`The expiry is a date and time in UTC written YYYY-MM-DD HH:MM, e.g. 2027-06-30 18:00 (got “${text}”).`)
  return date.toISOString()
}

/** RFC 3339 -> the expiry input's value, in UTC. */
export const toUtcInput = (iso: string | null) => (iso === null ? '' : `${iso.slice(0, 10)} ${iso.slice(11, 16)}`)

/** The expiry input (text, UTC), the same on the create form and the key page. */
export const EXPIRY_LABEL = 'Expires (UTC, YYYY-MM-DD HH:MM; empty: never)'

/** What the API's refusal says, for the page: its message (it names the field for bad input). */
export const problem = (error: unknown) => (error instanceof Error ? error.message : String(error))
