import { HashFilter } from './hash-filter.js'

/** The filter is sized for this many times the hashes loaded; once they are used up, it is loaded again, as large. */
const HEADROOM = 2
/** Secrets looked up and found not valid that are remembered (the oldest forgotten first): at most about 1 MB. */
const MAX_RULED_OUT = 10_000
/**
 * Hashes added to a new filter between two turns of the event loop (a few ms each): a reload on a
 * running server with a million keys would otherwise hold every request for about a second.
 */
const HASHES_PER_TURN = 16_384

/**
 * Which secrets (API keys and admin tokens, by SHA-256) may exist, without asking storage: a Bloom
 * filter (HashFilter) of every hash the store holds, loaded at start (one query) and kept current
 * by the change log, which names every secret created or changed, in any process (`add`).
 *
 * The guard asks it about a well-formed secret that is not cached: one that may exist is looked
 * up, so a valid key is judged by its own plan whatever its address; one it rules out is looked up
 * only if its address is not refused already (auth/address-precheck.ts), so a refused guesser
 * costs storage nothing. What it cannot know yet: a secret created in another process since this
 * one last read the change log (within KEY_REFRESH_MS; PostgreSQL's NOTIFY makes it tens of ms).
 *
 * A false positive, and a secret that exists but is revoked, cost one lookup each, once: the
 * lookup's verdict is remembered (`lookup`), until the change log names the hash again, so that
 * one of them replayed from a refused address does not cost a lookup per request.
 */
export class KnownSecrets {
  private filter: HashFilter | undefined
  private loading: Promise<void> | undefined
  /** Hashes added while a load runs: its query may have read the tables before they were written. */
  private addedDuringLoad: string[] | undefined
  private readonly ruledOut = new Set<string>()
  /** Bumped by every `add`: a lookup that overlapped one does not rule its hash out. */
  private additions = 0

  constructor(
    /** Every hash the store holds, comma-separated (KeyRepository.secretHashes). */
    private readonly source: () => Promise<string>,
    private readonly onError?: (error: unknown) => void,
  ) {}

  /** Builds the filter from storage: at start (awaited), and again in the background each time it fills up. */
  load(): Promise<void> {
    this.loading ??= this.build().finally(() => {
      this.loading = undefined
    })
    return this.loading
  }

  /** A secret created or changed (the change log, or this process's own change): it exists. */
  add(hash: string): void {
    this.additions++
    this.ruledOut.delete(hash)
    this.addedDuringLoad?.push(hash)
    const filter = this.filter
    if (filter === undefined) return
    filter.add(hash)
    if (filter.full && this.loading === undefined) this.load().catch((error: unknown) => this.onError?.(error))
  }

  /** False: no such secret exists, or it was looked up and found unknown or revoked. True also before the first load. */
  mayExist(hash: string): boolean {
    if (this.ruledOut.has(hash)) return false
    return this.filter?.mayContain(hash) ?? true
  }

  /**
   * `find`'s answer for `hash`. When the filter let it through but the record is unknown (a false
   * positive) or not `valid` (revoked), the hash is ruled out from then on, unless the change log
   * named a secret while `find` ran (it may have been created meanwhile).
   */
  async lookup<R>(hash: string, find: () => Promise<R | undefined>, valid: (record: R) => boolean): Promise<R | undefined> {
    const since = this.additions
    const record = await find()
    if ((record === undefined || !valid(record)) && since === this.additions && this.filter?.mayContain(hash)) this.ruleOut(hash)
    return record
  }

  /** What the filter holds, for the logs and measurements. */
  get stats(): { entries: number; capacity: number; bytes: number } | undefined {
    const filter = this.filter
    return filter && { entries: filter.count, capacity: filter.capacity, bytes: filter.bytes }
  }

  private ruleOut(hash: string): void {
    if (this.ruledOut.has(hash)) return
    if (this.ruledOut.size >= MAX_RULED_OUT) this.ruledOut.delete(this.ruledOut.values().next().value!)
    this.ruledOut.add(hash)
  }

  private async build(): Promise<void> {
    const added: string[] = []
    this.addedDuringLoad = added
    try {
      const packed = await this.source()
      const filter = new HashFilter(HEADROOM * (countOf(packed) + added.length))
      await addEach(packed, filter)
      for (const hash of added) filter.add(hash)
      this.filter = filter
    } finally {
      this.addedDuringLoad = undefined
    }
  }
}

/** How many hashes the list holds: 64 hex digits and a comma each (an estimate for other lengths, enough to size the filter). */
function countOf(packed: string): number {
  return Math.ceil((packed.length + 1) / 65)
}

/**
 * Adds each hash of the comma-separated list, walking it rather than splitting it (a million
 * strings in an array would cost far more than the one), HASHES_PER_TURN at a time.
 */
async function addEach(packed: string, filter: HashFilter): Promise<void> {
  if (packed === '') return
  let start = 0
  let added = 0
  for (let end = packed.indexOf(','); end !== -1; end = packed.indexOf(',', start)) {
    filter.add(packed.slice(start, end))
    start = end + 1
    if (++added % HASHES_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve))
  }
  filter.add(packed.slice(start))
}
