import { randomBytes } from 'node:crypto'

export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** `length` uniformly random base62 characters, drawn from `bytes` first (then from more random bytes). */
export function base62(bytes: Buffer, length: number): string {
  let out = ''
  // Rejection sampling keeps every character uniform (248 = 4 * 62).
  let i = 0
  let pool = bytes
  while (out.length < length) {
    if (i >= pool.length) {
      pool = randomBytes(length)
      i = 0
    }
    const b = pool[i++]!
    if (b < 248) out += BASE62[b % 62]
  }
  return out
}

/**
 * Random bytes for ids, drawn from a pool the CSPRNG refills 4 KiB at a time (as Node's own
 * randomUUID does): a `randomBytes` call per id cost a system call, 20 µs and more a call on a
 * busy machine, where ids are made on the request path (an event per created animal).
 */
const POOL_BYTES = 4096
let pool = Buffer.alloc(0)
let used = 0
function pooledRandomBytes(count: number): Buffer {
  if (used + count > pool.length) {
    pool = randomBytes(POOL_BYTES)
    used = 0
  }
  const bytes = pool.subarray(used, used + count)
  used += count
  return bytes
}

/** A record's id: `prefix` and 16 random base62 characters (key_…, cus_…, adm_…; ~95 bits). */
export const randomId = (prefix: string): string => prefix + base62(pooledRandomBytes(24), 16)

/**
 * An id that sorts by when it was made: `prefix`, the time in milliseconds as 8 base62 characters
 * (enough for 6,000 years), then 16 random ones (~95 bits). Rows keyed by it are inserted at the end
 * of their unique index instead of at a random page of it: the events log, written with every
 * change, dirtied a page of that index per event (50 random pages a group commit).
 */
export function timeOrderedId(prefix: string, ms: number): string {
  let time = ''
  for (let i = 0, rest = Math.floor(ms); i < 8; i++, rest = Math.floor(rest / 62)) time = BASE62[rest % 62] + time
  return prefix + time + base62(pooledRandomBytes(24), 16)
}
