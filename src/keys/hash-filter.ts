/** Bits per entry at capacity, and bit positions per hash: about 0.8% false positives, (1 - e^(-7/10))^7. */
export const BITS_PER_ENTRY = 10
const PROBES = 7
/** The smallest capacity (entries): 100,000 bits, 12.5 KB, however few secrets a store holds. */
export const MIN_CAPACITY = 10_000
/** 8 words of 32 bits in a SHA-256: the filter reads its positions from 7 of them. */
const SHA256_HEX = /^[0-9a-f]{64}$/

/**
 * A Bloom filter of SHA-256 hashes (lowercase hex, as `hashKey` makes them): no false negative, a
 * false positive for about 1 hash in 120 when it holds `capacity` entries, fewer below.
 *
 * Hand-written rather than taken from a package: what it holds are already SHA-256 hashes, uniform
 * and independent bits, so its 7 positions are 7 of the hash's 32-bit words taken modulo the
 * filter's size, with no hashing at all. The Bloom filter packages hash their input again
 * (murmur, FNV or xxhash of a string), and this takes 30 lines.
 */
export class HashFilter {
  /** Entries it was sized for: past them the false-positive rate climbs (`full`). */
  readonly capacity: number
  private readonly size: number
  private readonly bits: Uint32Array
  private entries = 0

  constructor(capacity: number) {
    this.capacity = Math.max(MIN_CAPACITY, Math.ceil(capacity))
    // A whole number of 32-bit words; positions are taken modulo this many bits.
    this.bits = new Uint32Array(Math.ceil((this.capacity * BITS_PER_ENTRY) / 32))
    this.size = this.bits.length * 32
  }

  /**
   * Adds a hash; one that is not 64 lowercase hex digits is left out (it cannot be the hash of
   * any presented secret, so no lookup could ever match it).
   */
  add(hash: string): void {
    if (!SHA256_HEX.test(hash)) return
    let added = false
    for (let i = 0; i < PROBES; i++) {
      const position = this.position(hash, i)
      const mask = 1 << (position & 31)
      const word = position >>> 5
      if ((this.bits[word]! & mask) === 0) {
        this.bits[word] = this.bits[word]! | mask
        added = true
      }
    }
    // A hash whose bits were all set already (added before, or a false positive) is not counted again.
    if (added) this.entries++
  }

  /** False: the hash was never added. True: it may have been. */
  mayContain(hash: string): boolean {
    if (!SHA256_HEX.test(hash)) return false
    for (let i = 0; i < PROBES; i++) {
      const position = this.position(hash, i)
      if ((this.bits[position >>> 5]! & (1 << (position & 31))) === 0) return false
    }
    return true
  }

  /** More entries than it was sized for. */
  get full(): boolean {
    return this.entries > this.capacity
  }

  get count(): number {
    return this.entries
  }

  /** Bytes of its bit array. */
  get bytes(): number {
    return this.bits.byteLength
  }

  private position(hash: string, probe: number): number {
    return Number.parseInt(hash.slice(probe * 8, probe * 8 + 8), 16) % this.size
  }
}
