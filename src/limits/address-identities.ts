/**
 * Keyless clients' identities (a client address, an IPv6 /64: auth/address-identity.ts) and how
 * the limiters bound them. Keys and admin tokens are exact and unbounded (there are only so many
 * of them); anyone can bring new addresses (behind TRUST_PROXY, every address a proxy forwards),
 * so only the first LIMITER_MAX_ADDRESSES of them get counters of their own. Every further
 * address is counted in one of OVERFLOW_BUCKETS shared counters, chosen by a hash of the address:
 * sharing a counter with other addresses can only make a client refused sooner, never later.
 * The rules, their memory and the Redis key space: docs/limits.md.
 */

/** What every keyless identity starts with: `a:203.0.113.7`, `a:2001:db8:1:2::/64`. */
export const ADDRESS_IDENTITY_PREFIX = 'a:'

/** Shared counters for the addresses that find the table full (a power of two: see overflowBucket). */
export const OVERFLOW_BUCKETS = 1024

/** The identity of an overflow counter in the in-memory limiter and its state file. */
const OVERFLOW_IDENTITY_PREFIX = 'o:'

export const isAddressIdentity = (identity: string): boolean => identity.startsWith(ADDRESS_IDENTITY_PREFIX)

/**
 * The overflow counter of an address identity: FNV-1a (32 bits) of its UTF-16 code units, so the
 * same in every process and across restarts (the state file and Redis keep the counters).
 */
export function overflowBucket(identity: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < identity.length; i++) hash = Math.imul(hash ^ identity.charCodeAt(i), 0x01000193)
  // FNV's low bits alone are the weakest: fold the high half in.
  return ((hash ^ (hash >>> 16)) >>> 0) & (OVERFLOW_BUCKETS - 1)
}

export const overflowIdentity = (identity: string): string => OVERFLOW_IDENTITY_PREFIX + overflowBucket(identity)

export const isOverflowIdentity = (identity: string): boolean => identity.startsWith(OVERFLOW_IDENTITY_PREFIX)
