/**
 * The limiter's key space in Redis (prefix `as:rl:` by default):
 *
 *   {k:<quota id>}, {adm:<token id>}           one hash per key or admin token: its own slot
 *   {addresses:<n>}:a:<address>                 a keyless address admitted to table n today
 *   {addresses:<n>}:count                       table n's admissions today
 *   {addresses:<n>}:overflow:<bucket>           the counter shared by table n's further addresses
 *
 * Every key expires by itself (consume.lua); docs/deployment.md has their sizes.
 */
import { isAddressIdentity, overflowBucket } from '../address-identities.js'

/**
 * Keyless addresses live in this many tables, one hash-tagged slot each (`{addresses:<n>}`): a
 * table's count, its addresses and their overflow counters must share a slot for one script to
 * touch them on a Redis Cluster, and sixteen slots spread them over the masters. An address's
 * table is its overflow counter's number modulo ADDRESS_TABLES; each admits
 * ceil(LIMITER_MAX_ADDRESSES / ADDRESS_TABLES) addresses a day.
 */
export const ADDRESS_TABLES = 16

/** The Redis keys of an identity's counters: its hash, and for a keyless address its table's count and its overflow counter (consume.lua). */
export function limiterKeys(prefix: string, identity: string): [string] | [string, string, string] {
  if (!isAddressIdentity(identity)) return [prefix + '{' + identity + '}']
  const bucket = overflowBucket(identity)
  const table = prefix + '{addresses:' + (bucket % ADDRESS_TABLES) + '}:'
  return [table + identity, table + 'count', table + 'overflow:' + bucket]
}
