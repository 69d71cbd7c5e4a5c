/**
 * Durations as the variables write them: a whole number and its unit, `ms`, `s`, `m`, `h` or `d`
 * (`500ms`, `5s`, `30m`, `2h`, `5d`), and comma-separated lists of them (WEBHOOK_RETRY_SCHEDULE).
 * A unit is required: a bare number would leave a reader to guess between seconds and milliseconds.
 */

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }
const DURATION = /^(\d{1,9})(ms|s|m|h|d)$/

/** What a duration may be written as, for the messages and the reference. */
export const DURATION_WORDS = 'a whole number and a unit: `ms`, `s`, `m`, `h` or `d` (`500ms`, `5s`, `30m`, `2h`, `5d`)'

/** `text` in milliseconds, or undefined when it is not a duration. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim())
  if (match === null) return undefined
  return Number(match[1]) * UNIT_MS[match[2]!]!
}

/** What is wrong with `text` as one duration from `min` to `max` ms (the message after the variable's name), or undefined. */
export function durationProblem(text: string, min: number, max: number, range: string): string | undefined {
  const ms = parseDuration(text)
  if (ms === undefined) return `must be ${DURATION_WORDS} (got ${JSON.stringify(text)})`
  if (ms < min || ms > max) return `must be ${range} (got ${JSON.stringify(text)})`
  return undefined
}

/** What is wrong with `text` as a list of 1 to `maxItems` durations, each from `min` to `max` ms, or undefined. */
export function durationListProblem(text: string, maxItems: number, min: number, max: number, range: string): string | undefined {
  const items = text.split(',')
  if (items.length > maxItems) return `must list at most ${maxItems} durations (got ${items.length})`
  for (const item of items) {
    const ms = parseDuration(item)
    if (ms === undefined) return `must be a comma-separated list of durations, each ${DURATION_WORDS} (got ${JSON.stringify(item.trim())})`
    if (ms < min || ms > max) return `must list durations ${range} (got ${JSON.stringify(item.trim())})`
  }
  return undefined
}

/** A list that durationListProblem passed, in milliseconds, in its order. */
export const parseDurationList = (text: string): number[] => text.split(',').map((item) => parseDuration(item)!)
