import { performance } from 'node:perf_hooks'
import type { Quota } from '../../shared/plans.js'
import type { LimitDecision, UsageSnapshot } from '../limiter.js'
import { DAY_MS, MINUTE_MS } from '../policy.js'
import type { RedisQuotaStore, Reservation } from './quota-store.js'

/**
 * Quota leases: one script call reserves a run of consecutive admission numbers of an identity's
 * current windows, and this instance admits from the run without asking Redis again. Written here
 * because no limiter library leases from a fixed-window counter kept with bans (Doorman and Envoy
 * lease tokens of a rate, not numbers of a window).
 *
 * Why it stays exact (never more admitted than the plan allows, over any number of instances):
 * - Redis counts every reserved number as used when it hands the run out (consume.lua), so two
 *   instances never hold the same number, and no number beyond the limit is ever handed out.
 * - A run belongs to the minute window (and day window) it was reserved in, and is used only
 *   while that window surely lasts on Redis' clock: until its end minus CLOCK_MARGIN_MS, with
 *   Redis' time estimated from above (its TIME as read by the script, taken as if it had been read
 *   when the call was sent). Numbers left at the end are dropped: a client may get fewer requests
 *   than its plan in that window, never more.
 * - Refusals are never leased: a request the run cannot admit goes to Redis, which counts the
 *   refusal toward a ban exactly as without leases.
 *
 * Bans are the exception that proves it: while an identity (a key or a keyless address) is
 * banned, Redis refuses each of its requests and changes nothing (no window, no ban level moves),
 * so once Redis has answered a ban, this instance refuses the identity's requests itself until
 * the ban's end, which it reads on Redis' clock estimated from above (it asks Redis again a little
 * before the end, never after). A banned client hammering an instance costs Redis nothing.
 *
 * How much is reserved: a run starts at one number and doubles each time one is used up within
 * GROW_WITHIN_MS (a busy key), up to `leaseMax`; it halves when one lasted longer. It never takes
 * more than 1/LEASE_SHARE of what the windows had left at the last call, so near the limit runs
 * fall to one number and the last requests of a window go to Redis one by one, as without leases.
 * Callers waiting while a call is in flight share it: the call reserves enough for all of them.
 *
 * The leases call the store (quota-store.ts) and nothing else: a request Redis cannot answer now
 * gets `undefined`, and the limiter that asked (redis-limiter.ts) decides it by its failure policy.
 *
 * What the headers mean: X-RateLimit-Remaining is `limit − n − 1` for the request's admission
 * number n in the window, so it is exact in admission order. Across instances, admission order is
 * not arrival order: an instance using an older run may answer a higher Remaining than another
 * instance did a moment before (docs/limits.md).
 */

/** LIMITER_LEASE_MAX by default: the most admissions one call to Redis reserves. */
export const DEFAULT_LEASE_MAX = 256
/** A run takes at most this share of what the windows had left. */
const LEASE_SHARE = 16
/** A run used up within this time is followed by one twice as long. */
const GROW_WITHIN_MS = 1000
/** Stop using a run this long before its window ends: drift of the local clock against Redis' within a minute. */
const CLOCK_MARGIN_MS = 50
/** Identities with a lease or a call in flight kept at most; beyond, the oldest is dropped (only under-admits). */
const MAX_LEASES = 10_000

/** A request's decision, or undefined when Redis could not answer it (the limiter decides it then). */
type Decided = LimitDecision | undefined

interface Waiter {
  resolve(decision: Decided): void
  reject(error: unknown): void
}

interface Lease {
  perMinute: number
  perDay: number
  /** Numbers of the run not yet used. */
  left: number
  /** Remaining of the next admission from the run, per window. */
  minuteRemaining: number
  dayRemaining: number
  minuteResetAt: number
  dayResetAt: number
  /** Local ms (monotonic) from which the run must not be used. */
  usableUntil: number
  /** Redis' clock minus the local one, estimated from above (ms). */
  offset: number
  /** Local ms at which the run was reserved, and its length. */
  reservedAt: number
  size: number
  waiters: Waiter[]
  inFlight: boolean
}

/** A ban Redis answered: refused here until `usableUntil` (local ms). */
interface KnownBan {
  perMinute: number
  perDay: number
  banUntil: number
  offset: number
  usableUntil: number
  /** The refusal Redis answered, whose windows are rolled forward for later refusals. */
  refusal: LimitDecision
}

const localNow = (): number => performance.timeOrigin + performance.now()

export class QuotaLeases {
  private readonly leases = new Map<string, Lease>()
  private readonly bans = new Map<string, KnownBan>()

  constructor(
    /** One script call: reserves up to `want` numbers; undefined when Redis cannot answer now. */
    private readonly store: Pick<RedisQuotaStore, 'reserve'>,
    private readonly leaseMax: number,
    /** Local ms, monotonic (tests pass their own). */
    private readonly clock: () => number = localNow,
  ) {}

  /**
   * An admission from this instance's run, the refusal of a ban Redis answered, or undefined when
   * a call to Redis must decide.
   */
  take(identity: string, quota: Quota): LimitDecision | undefined {
    if (this.bans.size > 0) {
      const refused = this.banned(identity, quota)
      if (refused !== undefined) return refused
    }
    const lease = this.leases.get(identity)
    // While callers wait for a call, newcomers queue behind them: admissions stay in arrival order.
    if (lease === undefined || lease.waiters.length > 0) return undefined
    if (lease.perMinute !== quota.perMinute || lease.perDay !== quota.perDay) return undefined
    return this.takeFrom(lease)
  }

  /**
   * Waits for a call to Redis (one per identity in flight; callers arriving meanwhile share it):
   * the decision, or undefined when Redis could not answer.
   */
  consume(identity: string, quota: Quota): Promise<Decided> {
    let lease = this.leases.get(identity)
    if (lease === undefined) {
      if (this.leases.size >= MAX_LEASES) this.dropIdle()
      lease = emptyLease(quota)
      this.leases.set(identity, lease)
    }
    const waiting = lease
    return new Promise((resolve, reject) => {
      waiting.waiters.push({ resolve, reject })
      if (!waiting.inFlight) void this.refill(identity, waiting, quota)
    })
  }

  /**
   * Numbers of this instance's run for `quota`'s current windows not yet used: Redis counts them as
   * used, but they are still this instance's to admit, so peek() hands them back to its snapshot.
   */
  unused(identity: string, snapshot: UsageSnapshot): number {
    const lease = this.leases.get(identity)
    if (lease === undefined || lease.left === 0 || this.clock() >= lease.usableUntil) return 0
    if (lease.perMinute !== snapshot.minute.limit || lease.perDay !== snapshot.day.limit) return 0
    return lease.minuteResetAt === snapshot.minute.resetAt ? lease.left : 0
  }

  clear(): void {
    this.leases.clear()
    this.bans.clear()
  }

  /**
   * One request decided by its own call (a number of its own, or its own counted refusal), or by a
   * ban already known: a keyless address's every request, and each request refused with others.
   * Undefined when Redis could not answer.
   */
  async single(identity: string, quota: Quota): Promise<Decided> {
    const refused = this.banned(identity, quota)
    if (refused !== undefined) return refused
    const sentAt = this.clock()
    const reservation = await this.store.reserve(identity, quota, 1)
    if (reservation === undefined) return undefined
    this.noteBan(identity, quota, reservation, sentAt)
    return reservation.decision
  }

  /** Keeps a ban that Redis answered (a call sent at local `sentAt`), to refuse the identity here until its end. */
  private noteBan(identity: string, quota: Quota, { decision, banUntil }: Reservation, sentAt: number): void {
    if (banUntil === 0 || decision.reason !== 'key_banned') return
    const offset = decision.now - sentAt
    if (this.bans.size >= MAX_LEASES) this.bans.delete(this.bans.keys().next().value as string)
    this.bans.set(identity, {
      perMinute: quota.perMinute,
      perDay: quota.perDay,
      banUntil,
      offset,
      usableUntil: banUntil - offset - CLOCK_MARGIN_MS,
      refusal: decision,
    })
  }

  /** The refusal Redis would answer now to a banned identity (it changes nothing there), or undefined. */
  private banned(identity: string, quota: Quota): LimitDecision | undefined {
    const ban = this.bans.get(identity)
    if (ban === undefined) return undefined
    const now = this.clock()
    if (now >= ban.usableUntil || ban.perMinute !== quota.perMinute || ban.perDay !== quota.perDay) {
      this.bans.delete(identity)
      return undefined
    }
    const redisNow = Math.floor(now + ban.offset)
    const { minute, day } = ban.refusal
    return {
      allowed: false,
      reason: 'key_banned',
      now: redisNow,
      // As the script rolls a window over before refusing (consume.lua): a new window is unused.
      minute: rolled(minute, redisNow, MINUTE_MS),
      day: rolled(day, redisNow, DAY_MS),
      retryAfter: Math.ceil((ban.banUntil - redisNow) / 1000),
    }
  }

  private async refill(identity: string, lease: Lease, quota: Quota): Promise<void> {
    lease.inFlight = true
    try {
      while (lease.waiters.length > 0) {
        const want = this.nextSize(lease, quota)
        const sentAt = this.clock()
        const reservation = await this.store.reserve(identity, quota, want)
        if (reservation === undefined) {
          // Redis cannot answer: every waiter is decided by the limiter's failure policy, one by one.
          this.dropRun(lease)
          for (const waiter of lease.waiters.splice(0)) waiter.resolve(undefined)
          return
        }
        const { decision, granted } = reservation
        if (granted === 0) {
          // Refused: that refusal was counted once, for the first waiter. Each other waiter is a
          // request of its own that Redis must count (toward a ban), so each makes its own call;
          // under a ban, which counts nothing, each is refused here.
          this.dropRun(lease)
          lease.minuteRemaining = decision.minute.remaining
          lease.dayRemaining = decision.day.remaining
          this.noteBan(identity, quota, reservation, sentAt)
          lease.waiters.shift()?.resolve(decision)
          this.settleEach(lease.waiters.splice(0), () => this.single(identity, quota))
          return
        }
        this.startRun(lease, quota, decision, granted, sentAt)
        // The run's first number was admitted by Redis itself, inside its window on its own clock:
        // it is the first waiter's, whatever the local clock says now. Near a window's end the rest
        // of the run may be unusable at once; before, the first number was dropped too and the call
        // made again, so a request in a minute's last 50 ms spent a number per round trip until the
        // minute was used up, and was then refused (test/limits/redis/leases.test.ts).
        lease.waiters.shift()?.resolve(this.takeFirst(lease, decision))
        // The other waiters in arrival order; those beyond the run (or all, if the answer came after
        // its window had ended) go round again.
        while (lease.waiters.length > 0) {
          const admitted = this.takeFrom(lease)
          if (admitted === undefined) break
          lease.waiters.shift()?.resolve(admitted)
        }
      }
    } catch (error) {
      for (const waiter of lease.waiters.splice(0)) waiter.reject(error)
    } finally {
      lease.inFlight = false
    }
  }

  private settleEach(waiters: Waiter[], decide: () => Promise<Decided>): void {
    for (const waiter of waiters) decide().then(waiter.resolve, waiter.reject)
  }

  /** The next call's size: the adaptive run length, at least the waiters, at most a share of what is left. */
  private nextSize(lease: Lease, quota: Quota): number {
    const now = this.clock()
    if (lease.perMinute !== quota.perMinute || lease.perDay !== quota.perDay) {
      Object.assign(lease, emptyLease(quota), { waiters: lease.waiters, inFlight: true })
    } else if (lease.reservedAt > 0) {
      const usedUp = lease.left === 0 && now - lease.reservedAt < GROW_WITHIN_MS
      lease.size = usedUp ? Math.min(lease.size * 2, this.leaseMax) : Math.max(1, lease.size >> 1)
    }
    // What the windows had left at the last call, if they are still the same windows.
    const sameMinute = now + lease.offset < lease.minuteResetAt * 1000
    const sameDay = now + lease.offset < lease.dayResetAt * 1000
    const minuteLeft = sameMinute ? lease.minuteRemaining : quota.perMinute
    const dayLeft = sameDay ? lease.dayRemaining : quota.perDay
    const share = Math.max(1, Math.floor(Math.min(minuteLeft, dayLeft) / LEASE_SHARE))
    return Math.max(1, Math.min(Math.max(lease.size, lease.waiters.length), share, this.leaseMax))
  }

  private startRun(lease: Lease, quota: Quota, first: LimitDecision, granted: number, sentAt: number): void {
    // first.now is Redis' time when the script ran, which was after sentAt: Redis' clock minus the
    // local one is at most first.now − sentAt, so local time + offset never reads Redis' time as earlier than it is.
    lease.offset = first.now - sentAt
    lease.usableUntil = first.minute.resetAt * 1000 - lease.offset - CLOCK_MARGIN_MS
    lease.perMinute = quota.perMinute
    lease.perDay = quota.perDay
    lease.left = granted
    lease.minuteRemaining = first.minute.remaining
    lease.dayRemaining = first.day.remaining
    lease.minuteResetAt = first.minute.resetAt
    lease.dayResetAt = first.day.resetAt
    lease.reservedAt = this.clock()
    lease.size = Math.max(lease.size, 1)
  }

  /** The run's first number, as Redis answered it. */
  private takeFirst(lease: Lease, first: LimitDecision): LimitDecision {
    spendOne(lease)
    return first
  }

  private takeFrom(lease: Lease): LimitDecision | undefined {
    if (lease.left === 0) return undefined
    const now = this.clock()
    if (now >= lease.usableUntil) return undefined
    const decision: LimitDecision = {
      allowed: true,
      now: Math.floor(now + lease.offset),
      minute: { limit: lease.perMinute, remaining: lease.minuteRemaining, resetAt: lease.minuteResetAt },
      day: { limit: lease.perDay, remaining: lease.dayRemaining, resetAt: lease.dayResetAt },
      retryAfter: 0,
    }
    spendOne(lease)
    return decision
  }

  private dropRun(lease: Lease): void {
    lease.left = 0
  }

  /** Makes room: drops the leases nobody waits on, oldest first (a dropped run only under-admits). */
  private dropIdle(): void {
    for (const [identity, lease] of this.leases) {
      if (lease.waiters.length === 0 && !lease.inFlight) this.leases.delete(identity)
      if (this.leases.size < MAX_LEASES / 2) return
    }
  }
}

/** One number of the run handed out: the windows' next answers show one fewer left. */
function spendOne(lease: Lease): void {
  lease.left--
  lease.minuteRemaining--
  lease.dayRemaining--
}

function emptyLease(quota: Quota): Lease {
  return {
    perMinute: quota.perMinute,
    perDay: quota.perDay,
    left: 0,
    minuteRemaining: quota.perMinute,
    dayRemaining: quota.perDay,
    minuteResetAt: 0,
    dayResetAt: 0,
    usableUntil: 0,
    offset: 0,
    reservedAt: 0,
    size: 1,
    waiters: [],
    inFlight: false,
  }
}

/** A window of a refusal as it reads at `now` (Redis ms): the same window, or the next one, unused. */
function rolled(window: LimitDecision['minute'], now: number, length: number): LimitDecision['minute'] {
  if (now < window.resetAt * 1000) return window
  return { limit: window.limit, remaining: window.limit, resetAt: (now - (now % length) + length) / 1000 }
}
