import type { LimitDecision, RateLimiter } from '../limits/limiter.js'
import { ANONYMOUS_QUOTA } from '../shared/plans.js'

/**
 * Asked before storage is, when a request presents a well-formed secret (an API key, an admin
 * token) that this instance has not cached and that cannot exist (keys/known-secrets.ts; one that
 * may exist is looked up whatever its address): is the client's address refused anyway? An unknown
 * secret is limited as its address, so an address over its limit or banned would be refused
 * whatever storage answered; without this, each of its guesses would still cost the shared
 * database a query. The address's window is peeked at (nothing counted); only when it
 * refuses is the request counted against it, as any refused request is (rejections start and
 * extend bans), and that decision is returned: the caller answers with it and asks storage
 * nothing. Undefined: the address is not refused, ask storage.
 *
 * If the refusal lifts between the two (a window turns over, a ban ends), the decision returned
 * is an allowed one, already counted against the address: the caller asks storage and uses it
 * rather than count the request a second time, unless the secret turns out valid.
 *
 * The cost: a valid key this instance does not know of yet (created in another process since it
 * last read the change log), sent from a refused address (shared by a guesser behind the same NAT
 * or /64), is refused as that address until the change log is read or the address is allowed again.
 */
export async function decideIfAddressRefused(limiter: RateLimiter, address: string): Promise<LimitDecision | undefined> {
  const usage = await limiter.peek(address, ANONYMOUS_QUOTA)
  if (!usage.ban.active && usage.minute.remaining > 0 && usage.day.remaining > 0) return undefined
  return limiter.consumeSync?.(address, ANONYMOUS_QUOTA) ?? limiter.consume(address, ANONYMOUS_QUOTA)
}
