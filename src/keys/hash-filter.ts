/** Bits per entry at capacity, and bit positions per hash: about 0.8% false positives, (1 - e^(-7/10))^7. */
export const BITS_PER_ENTRY = 10
const PROBES = 7
/** The smallest capacity (entries): 100,000 bits, 12.5 KB, however few secrets a store holds. */
export const MIN_CAPACITY = 10_000
/** The value of each lowercase hex digit by character code; -1 for any other character. */
const HEX_DIGIT = new Int8Array(128).fill(-1)
for (let d = 0; d < 16; d++) HEX_DIGIT['0123456789abcdef'.charCodeAt(d)] = d

/**
 * A Bloom filter of SHA-256 hashes (lowercase hex, as `hashKey` makes them): no false negative, a
 * false positive for about 1 hash in 120 when it holds `capacity` entries, fewer below.
 *
 * Hand-written rather than taken from a package: what it holds are already SHA-256 hashes, uniform
 * and independent bits, so its 7 positions are 7 of the hash's 32-bit words taken modulo the
 * filter's size, with no hashing at all. The Bloom filter packages (bloom-filters, bloomxx and the
 * like) hash their input again with xxhash or murmur, a dependency to hash what is already a hash;
 * this is under 100 lines, its false-positive rate tested (test/keys/hash-filter.test.ts).
 */
export class HashFilter {
  /** Entries it was sized for: past them the false-positive rate climbs (`full`). */
  readonly capacity: number
  private readonly size: number
  private readonly bits: Uint32Array
  /** The positions of the hash at hand (one array for every call: a load adds a million). */
  private readonly positions = new Uint32Array(PROBES)
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
    if (!this.locate(hash)) return
    let added = false
    for (let i = 0; i < PROBES; i++) {
      const position = this.positions[i]!
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
    if (!this.locate(hash)) return false
    for (let i = 0; i < PROBES; i++) {
      const position = this.positions[i]!
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

  /**
   * Reads the hash's first 7 words of 32 bits into `positions` (modulo the size), checking on the
   * way that it is 64 lowercase hex digits: false when it is not. By character code rather than
   * a regular expression and parseInt of slices, which made loading a million hashes 10 times slower.
   */
  private locate(hash: string): boolean {
    if (hash.length !== 64) return false
    for (let word = 0; word < 8; word++) {
      let value = 0
      for (let at = word * 8; at < word * 8 + 8; at++) {
        const code = hash.charCodeAt(at)
        const digit = code < 128 ? HEX_DIGIT[code]! : -1
        if (digit < 0) return false
        value = value * 16 + digit
      }
      if (word < PROBES) this.positions[word] = value % this.size
    }
    return true
  }
}
