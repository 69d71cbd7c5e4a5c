/**
 * Pure arithmetic of the usage chart, apart from uPlot and the DOM so it can be tested in-process:
 * the buckets stacked (allowed at the bottom, rate-limited on it, banned on top, so a bar's height is
 * the bucket's total), long ranges folded into days (720 hourly bars are a pixel wide each), and the
 * y axis's steps in whole requests (a count of 0.2 requests means nothing).
 */
export interface Counts {
  allowed: number
  rateLimited: number
  banned: number
}
export interface Bucket extends Counts {
  start: string
}

export const total = (c: Counts) => c.allowed + c.rateLimited + c.banned

/** The three stacked tops of each bucket, lowest first: allowed, allowed+rate-limited, the total. */
export function stackTops(buckets: Counts[]): [number[], number[], number[]] {
  const allowed = buckets.map((b) => b.allowed)
  const limited = buckets.map((b) => b.allowed + b.rateLimited)
  const all = buckets.map(total)
  return [allowed, limited, all]
}

/** Buckets added up by UTC day (the day of each bucket's start), in order. */
export function byDay<B extends Bucket>(buckets: B[]): Bucket[] {
  const days: Bucket[] = []
  for (const b of buckets) {
    const start = `${b.start.slice(0, 10)}T00:00:00.000Z`
    const last = days.at(-1)
    if (last?.start === start) {
      last.allowed += b.allowed
      last.rateLimited += b.rateLimited
      last.banned += b.banned
    } else days.push({ start, allowed: b.allowed, rateLimited: b.rateLimited, banned: b.banned })
  }
  return days
}

/** The y axis's candidate steps: 1, 2, 5, 10, 20, 50 … — whole requests only. */
export const WHOLE_INCREMENTS: number[] = Array.from({ length: 30 }, (_, i) => [1, 2, 5][i % 3]! * 10 ** Math.floor(i / 3))

/** The last bucket with any request (the one the figures under the chart show unless one is hovered). */
export function lastBusy<B extends Counts>(buckets: B[]): B | undefined {
  return buckets.findLast((b) => total(b) > 0)
}

/** The most steps between the y axis's gridlines (260 px of chart: about 40 px or more between them). */
export const Y_STEPS = 5

/**
 * The y axis of the chart: a whole step from WHOLE_INCREMENTS, the smallest that needs at most
 * `steps` of them, and a top that is the first multiple of it at or above the tallest bar, each
 * gridline labelled. Left to itself, uPlot topped the scale at the tallest bar (9) and labelled
 * the steps below it (0 to 8): the bar rose above the highest label, and read as 8.
 */
export function yAxis(tallest: number, steps = Y_STEPS): { top: number; step: number; splits: number[] } {
  const step = WHOLE_INCREMENTS.find((s) => Math.ceil(tallest / s) <= steps) ?? WHOLE_INCREMENTS.at(-1)!
  const top = Math.max(1, Math.ceil(tallest / step)) * step
  return { top, step, splits: Array.from({ length: top / step + 1 }, (_, i) => i * step) }
}
