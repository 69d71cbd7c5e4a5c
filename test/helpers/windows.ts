/**
 * Rate-limit windows are aligned to the clock's minute and UTC day. A test on a real clock that
 * straddles a boundary would legitimately see a fresh window (two minutes' quota, counters back at
 * zero), so it first waits, when needed, until at least `needMs` are left in the current minute and
 * day, and the minute is not just starting (another process's clock may still be in the last one).
 */
import { setTimeout as sleep } from 'node:timers/promises'

const MINUTE_MS = 60_000
const DAY_MS = 86_400_000
const SKEW_MS = 300

export async function awayFromBoundary(needMs: number): Promise<void> {
  const now = Date.now()
  const intoMinute = now % MINUTE_MS
  const leftInDay = DAY_MS - (now % DAY_MS)
  if (MINUTE_MS - intoMinute >= needMs && intoMinute >= SKEW_MS && leftInDay >= needMs) return
  // Past midnight too when the day is what ran short: the next minute is then the day's first.
  await sleep(MINUTE_MS - intoMinute + SKEW_MS)
}
