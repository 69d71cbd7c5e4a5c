/**
 * Records found by the SHA-256 of a presented secret (API keys, admin tokens), cached with no TTL
 * until `forget` says the secret changed (the change log, NOTIFY, or this process's own change).
 *
 * - Only records `cacheable` accepts are kept (not a revoked one: it is asked about again).
 * - Unknown secrets are not cached (no negative cache): a secret created a moment ago, in any
 *   process, works at once, with nothing to invalidate on creation.
 * - Identical lookups share one storage query while it runs (single flight): a burst of requests
 *   with the same uncached secret (a cold start, a client retrying a made-up key) costs one.
 * - A lookup that overlaps a `forget` of its hash may have read the record before its change
 *   committed: its answer serves the requests already waiting for it, is never cached, and a
 *   request arriving after the `forget` starts a lookup of its own.
 */
export class SecretLookups<R> {
  private readonly cache = new Map<string, R>()
  private readonly inFlight = new Map<string, Promise<R | undefined>>()
  /** Bumped on every forget, so a lookup racing a change is not cached. */
  private invalidations = 0

  constructor(
    private readonly find: (hash: string) => Promise<R | undefined>,
    private readonly cacheable: (record: R) => boolean,
  ) {}

  cached(hash: string): R | undefined {
    return this.cache.get(hash)
  }

  /** The cached record, else storage's answer (undefined for an unknown secret). */
  lookup(hash: string): Promise<R | undefined> {
    const cached = this.cache.get(hash)
    if (cached !== undefined) return Promise.resolve(cached)
    const pending = this.inFlight.get(hash)
    if (pending !== undefined) return pending
    const seen = this.invalidations
    const done = () => {
      if (this.inFlight.get(hash) === lookup) this.inFlight.delete(hash)
    }
    const lookup = this.find(hash).then(
      (record) => {
        done()
        if (record !== undefined && seen === this.invalidations && this.cacheable(record)) this.cache.set(hash, record)
        return record
      },
      (error: unknown) => {
        done()
        throw error
      },
    )
    this.inFlight.set(hash, lookup)
    return lookup
  }

  forget(hash: string): void {
    this.invalidations++
    this.cache.delete(hash)
    this.inFlight.delete(hash)
  }

  get size(): number {
    return this.cache.size
  }
}
