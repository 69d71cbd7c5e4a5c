import type { Quota } from '../shared/plans.js'
import type { BanPolicy, LimitDecision, UsageSnapshot } from './limiter.js'

/**
 * The limiting rules, as a pure function over one identity's counters, shared by the in-memory
 * limiter and mirrored line for line by the Redis Lua script (limits/redis/consume.lua).
 *
 * - Fixed windows: the minute window is aligned to the clock minute (:00 to :59), the day window
 *   is the UTC calendar day. A request is counted in both or in neither.
 * - A request refused by a window counts as a rejection; `threshold` rejections within one
 *   minute window start a ban (threshold 0: the key's per-minute limit, at least 10).
 * - Bans escalate exponentially: base, 2x base, 4x base, ... up to max; the level decays to 0
 *   after 24 hours without a new ban.
 */
export const MINUTE_MS = 60_000
export const DAY_MS = 86_400_000
export const BAN_MEMORY_MS = DAY_MS
/** With BAN_THRESHOLD=0 a ban starts after the per-minute limit's worth of refusals, but never fewer (the Redis limiter hands consume.lua the resolved threshold). */
const MIN_DEFAULT_BAN_THRESHOLD = 10

export interface IdentityState {
  minuteStart: number
  minuteCount: number
  minuteRejected: number
  dayStart: number
  dayCount: number
  banUntil: number
  banLevel: number
  banLevelExpiresAt: number
}

export function freshState(): IdentityState {
  return {
    minuteStart: 0,
    minuteCount: 0,
    minuteRejected: 0,
    dayStart: 0,
    dayCount: 0,
    banUntil: 0,
    banLevel: 0,
    banLevelExpiresAt: 0,
  }
}

export function banThreshold(policy: BanPolicy, quota: Quota): number {
  return policy.threshold > 0 ? policy.threshold : Math.max(MIN_DEFAULT_BAN_THRESHOLD, quota.perMinute)
}

/** The ban rule in the words of the OpenAPI document, from the configured policy (BAN_*), so the document never says other than the limiter does. */
export function banRuleText(policy: BanPolicy): string {
  const trigger =
    policy.threshold > 0
      ? `${policy.threshold} refused requests in one minute`
      : `as many refused requests in one minute as the per-minute limit, at least ${MIN_DEFAULT_BAN_THRESHOLD}`
  const memory = `${BAN_MEMORY_MS / 3_600_000} h`
  return `Sending on while limited (${trigger}) starts a temporary ban: 429 \`key_banned\`, ${duration(policy.baseSeconds)}, doubling with each further ban within ${memory}, up to ${duration(policy.maxSeconds)}.`
}

const duration = (seconds: number): string =>
  seconds === 3600
    ? 'one hour'
    : seconds % 3600 === 0
      ? `${seconds / 3600} h`
      : seconds % 60 === 0 && seconds >= 120
        ? `${seconds / 60} min`
        : `${seconds} s`

export function banSeconds(policy: BanPolicy, level: number): number {
  return Math.min(policy.baseSeconds * 2 ** Math.min(level - 1, 30), policy.maxSeconds)
}

/** Applies one request at `now` (ms) to `s` (mutated) and returns the decision. */
export function consumeOne(s: IdentityState, now: number, quota: Quota, policy: BanPolicy): LimitDecision {
  const minuteStart = now - (now % MINUTE_MS)
  const dayStart = now - (now % DAY_MS)
  if (s.minuteStart !== minuteStart) {
    s.minuteStart = minuteStart
    s.minuteCount = 0
    s.minuteRejected = 0
  }
  if (s.dayStart !== dayStart) {
    s.dayStart = dayStart
    s.dayCount = 0
  }
  if (s.banLevel > 0 && now >= s.banLevelExpiresAt) s.banLevel = 0

  const minuteReset = (minuteStart + MINUTE_MS) / 1000
  const dayReset = (dayStart + DAY_MS) / 1000
  const decision = (allowed: boolean): LimitDecision => ({
    allowed,
    now,
    minute: { limit: quota.perMinute, remaining: Math.max(0, quota.perMinute - s.minuteCount), resetAt: minuteReset },
    day: { limit: quota.perDay, remaining: Math.max(0, quota.perDay - s.dayCount), resetAt: dayReset },
    retryAfter: 0,
  })

  if (now < s.banUntil) {
    const d = decision(false)
    d.reason = 'key_banned'
    d.retryAfter = Math.ceil((s.banUntil - now) / 1000)
    return d
  }
  if (s.minuteCount < quota.perMinute && s.dayCount < quota.perDay) {
    s.minuteCount++
    s.dayCount++
    return decision(true)
  }
  s.minuteRejected++
  const d = decision(false)
  if (s.minuteRejected >= banThreshold(policy, quota)) {
    s.banLevel++
    const seconds = banSeconds(policy, s.banLevel)
    s.banUntil = now + seconds * 1000
    s.banLevelExpiresAt = s.banUntil + BAN_MEMORY_MS
    s.minuteRejected = 0
    d.reason = 'key_banned'
    d.retryAfter = seconds
    d.banStarted = true
    return d
  }
  d.reason = 'rate_limited'
  let until = 0
  if (s.minuteCount >= quota.perMinute) until = Math.max(until, minuteReset)
  if (s.dayCount >= quota.perDay) until = Math.max(until, dayReset)
  d.retryAfter = Math.max(1, Math.ceil(until - now / 1000))
  return d
}

/**
 * The state as consumeOne would find it at `now`, without changing it: a window that has rolled
 * over reads as 0 used, a decayed ban level as 0. Used by both limiters' peek().
 */
export function peekState(s: IdentityState | undefined, now: number, quota: Quota): UsageSnapshot {
  const minuteStart = now - (now % MINUTE_MS)
  const dayStart = now - (now % DAY_MS)
  const minuteUsed = s !== undefined && s.minuteStart === minuteStart ? s.minuteCount : 0
  const dayUsed = s !== undefined && s.dayStart === dayStart ? s.dayCount : 0
  const banned = s !== undefined && now < s.banUntil
  const level = s === undefined || (s.banLevel > 0 && now >= s.banLevelExpiresAt) ? 0 : s.banLevel
  return {
    now,
    minute: {
      limit: quota.perMinute,
      used: minuteUsed,
      remaining: Math.max(0, quota.perMinute - minuteUsed),
      resetAt: (minuteStart + MINUTE_MS) / 1000,
    },
    day: { limit: quota.perDay, used: dayUsed, remaining: Math.max(0, quota.perDay - dayUsed), resetAt: (dayStart + DAY_MS) / 1000 },
    ban: { active: banned, until: banned ? Math.ceil(s.banUntil / 1000) : null, level },
  }
}

/**
 * Folds `from` into `into` (mutated) when one counter must stand for both: an address that loses
 * its own counter to a shared one (the state file reloaded under a smaller LIMITER_MAX_ADDRESSES;
 * in Redis, an address kept from an earlier day when today's table is full). `into` then holds at
 * least what either held: per window the later one, on the same window the larger counts; the later
 * ban and the higher level. Never less, so a client never gains requests by the fold.
 */
export function foldState(into: IdentityState, from: IdentityState): void {
  if (from.minuteStart > into.minuteStart) {
    into.minuteStart = from.minuteStart
    into.minuteCount = from.minuteCount
    into.minuteRejected = from.minuteRejected
  } else if (from.minuteStart === into.minuteStart) {
    into.minuteCount = Math.max(into.minuteCount, from.minuteCount)
    into.minuteRejected = Math.max(into.minuteRejected, from.minuteRejected)
  }
  if (from.dayStart > into.dayStart) {
    into.dayStart = from.dayStart
    into.dayCount = from.dayCount
  } else if (from.dayStart === into.dayStart) into.dayCount = Math.max(into.dayCount, from.dayCount)
  into.banUntil = Math.max(into.banUntil, from.banUntil)
  into.banLevel = Math.max(into.banLevel, from.banLevel)
  into.banLevelExpiresAt = Math.max(into.banLevelExpiresAt, from.banLevelExpiresAt)
}

/** True when the state holds nothing that still matters at `now` (safe to forget). */
export function isStale(s: IdentityState, now: number): boolean {
  return now - s.dayStart >= DAY_MS && now >= s.banUntil && (s.banLevel === 0 || now >= s.banLevelExpiresAt)
}
