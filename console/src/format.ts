/** How the console writes times and numbers: UTC like the API (an operator compares them with logs). */
export function time(iso: string | null, never = '—'): string {
  if (iso === null) return never
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`
}

export const count = (n: number) => n.toLocaleString('en')

/** A datetime-local input's value (read as UTC) -> RFC 3339; empty -> null. */
export function fromDateTimeInput(value: string): string | null {
  if (value === '') return null
  return new Date(`${value.length === 16 ? `${value}:00` : value}Z`).toISOString()
}

/** RFC 3339 -> a datetime-local input's value in UTC. */
export const toDateTimeInput = (iso: string | null) => (iso === null ? '' : iso.slice(0, 16))

/** What the API's refusal says, for the page: its message (it names the field for bad input). */
export const problem = (error: unknown) => (error instanceof Error ? error.message : String(error))
