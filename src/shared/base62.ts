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

/** A record's id: `prefix` and 16 random base62 characters (key_…, cus_…, adm_…; ~95 bits). */
export const randomId = (prefix: string): string => prefix + base62(randomBytes(24), 16)
