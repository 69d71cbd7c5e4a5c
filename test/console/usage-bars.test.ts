import assert from 'node:assert/strict'
import { test } from 'node:test'
import { byDay, lastBusy, stackTops, total, WHOLE_INCREMENTS, yAxis } from '../../console/src/usage-bars.js'

// Issue 32: the three outcomes were drawn over one another, so a minute with 60 allowed, 59
// rate-limited and 21 banned read as one bar 60 high. Stacked, the bar is the minute's total and
// each part's height is its own count.
test('usage bars: stacked tops are cumulative, the top one the total, each part in proportion', () => {
  const minute = { start: '2030-01-01T09:05:00.000Z', allowed: 60, rateLimited: 59, banned: 21 }
  const idle = { start: '2030-01-01T09:06:00.000Z', allowed: 0, rateLimited: 0, banned: 0 }
  const [allowed, limited, all] = stackTops([minute, idle])
  assert.deepEqual(
    [allowed, limited, all],
    [
      [60, 0],
      [119, 0],
      [140, 0],
    ],
  )
  assert.equal(total(minute), 140)
  // Heights of the parts: 60, 59, 21 out of 140.
  assert.deepEqual([allowed[0]!, limited[0]! - allowed[0]!, all[0]! - limited[0]!], [60, 59, 21])
  assert.equal(lastBusy([minute, idle]), minute)
  assert.equal(lastBusy([idle]), undefined)
})

test('usage bars: 30 days of hours fold into 30 daily bars (a readable width), totals kept', () => {
  const hours = Array.from({ length: 720 }, (_, i) => ({
    start: new Date(Date.UTC(2030, 0, 1) + i * 3_600_000).toISOString(),
    allowed: 1,
    rateLimited: i % 2,
    banned: 0,
  }))
  const days = byDay(hours)
  assert.equal(days.length, 30)
  assert.deepEqual(days[0], { start: '2030-01-01T00:00:00.000Z', allowed: 24, rateLimited: 12, banned: 0 })
  assert.equal(
    days.reduce((n, d) => n + total(d), 0),
    hours.reduce((n, h) => n + total(h), 0),
  )
})

test('usage bars: the y axis steps in whole requests (an idle key shows no 0.2 ticks)', () => {
  assert.ok(WHOLE_INCREMENTS.every((n) => Number.isInteger(n) && n >= 1))
  assert.deepEqual(WHOLE_INCREMENTS.slice(0, 6), [1, 2, 5, 10, 20, 50])
})

// Issue 43: uPlot topped the y scale at the tallest bar and labelled the whole steps below it, so
// a bar of 9 rose above the highest label (8). The top is now a labelled step at or above it.
test('usage bars: the y axis tops at a labelled step at or above the tallest bar, in whole steps, at most 5 of them', () => {
  assert.deepEqual(yAxis(9), { top: 10, step: 2, splits: [0, 2, 4, 6, 8, 10] })
  assert.deepEqual(yAxis(0), { top: 1, step: 1, splits: [0, 1] })
  assert.deepEqual(yAxis(5), { top: 5, step: 1, splits: [0, 1, 2, 3, 4, 5] })
  assert.deepEqual(yAxis(140), { top: 150, step: 50, splits: [0, 50, 100, 150] })
  for (let tallest = 0; tallest <= 5000; tallest += 7) {
    const { top, step, splits } = yAxis(tallest)
    assert.ok(top >= tallest, `${tallest}: the top is not below the tallest bar`)
    assert.equal(splits.at(-1), top, `${tallest}: the top is labelled`)
    assert.ok(splits.length - 1 <= 5, `${tallest}: at most 5 steps`)
    assert.ok(WHOLE_INCREMENTS.includes(step) && top - step < Math.max(tallest, 1), `${tallest}: the first such top`)
  }
})
