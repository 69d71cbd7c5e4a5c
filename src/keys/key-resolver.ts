import type { Environment } from '../config/config.js'
import { type ApiKeyRecord, hashKey, isWellFormedKey } from './api-key.js'
import type { KeyCache } from './key-service.js'
import { KnownSecrets } from './known-secrets.js'
import type { KeyRepository } from './repository.js'
import { SecretLookups } from './secret-lookups.js'

export interface KeyResolverOptions {
  env: Environment
  /** How often to poll storage for key changes made by other processes (ms). */
  refreshMs: number
  /** A failed poll of the change log, a lost push channel, a failed reload of the filter of known secrets. */
  onError?: (error: unknown) => void
}

/**
 * Turns a presented key into its record without a storage round trip on the hot path.
 *
 * Unrevoked keys are cached by hash with no TTL; correctness comes from invalidation instead: every
 * `refreshMs` the resolver reads the change log that every key creation and change (update,
 * rotation, revocation, in any process) appends to, and drops those hashes; the next request
 * reloads the key. Stores that can push changes (PostgreSQL LISTEN/NOTIFY) also drop them the
 * moment they commit; the polling stays as the safety net for messages lost while the push channel
 * reconnects. Expiry needs no invalidation: the record carries expiresAt, checked on every request.
 * Unknown keys are not cached, so a key created a moment ago works at once (SecretLookups: no
 * negative cache, identical lookups share one query); malformed keys (bad prefix or checksum)
 * never reach storage at all.
 *
 * Every hash the change log names goes into the filter of known secrets too (`known`, loaded at
 * start), which tells the guard whether an uncached secret may exist: one that cannot is looked
 * up only when its address is not refused already (auth/address-precheck.ts).
 *
 * The same change log carries admin tokens (created, revoked): caches that `follow` this resolver
 * (the admin tokens') drop what it drops, and `known` holds their hashes as well.
 */
export class KeyResolver implements KeyCache {
  private readonly lookups: SecretLookups<ApiKeyRecord>
  /** The API keys and admin tokens that may exist (shared with the admin tokens' resolver). */
  readonly known: KnownSecrets
  private readonly followers: Array<Pick<KeyCache, 'forget'>> = []
  private cursor: number | null = null
  private timer: NodeJS.Timeout | undefined
  private polling = false
  private unwatch: (() => Promise<void>) | undefined
  /** Bumped by stop(), so a start() still awaiting storage knows to undo what it set up. */
  private generation = 0

  constructor(
    private readonly keys: KeyRepository,
    private readonly options: KeyResolverOptions,
  ) {
    this.lookups = new SecretLookups(
      (hash) => keys.findKeyByHash(hash),
      (record) => record.revokedAt === null,
    )
    this.known = new KnownSecrets(() => keys.secretHashes(), options.onError)
  }

  /** `cache` is told of every hash this resolver drops. */
  follow(cache: Pick<KeyCache, 'forget'>): void {
    this.followers.push(cache)
  }

  async start(): Promise<void> {
    const generation = this.generation
    // Subscribed before reading the cursor, so no change falls between the two.
    if (this.keys.watchChanges) {
      try {
        const unwatch = await this.keys.watchChanges((hash) => this.forget(hash))
        if (generation !== this.generation) await unwatch()
        else this.unwatch = unwatch
      } catch (error) {
        // Push is an optimisation: without it, polling alone still invalidates the cache.
        this.options.onError?.(error)
      }
    }
    const cursor = (await this.keys.changesSince(null)).cursor
    if (generation !== this.generation) return
    this.cursor = cursor
    // After the cursor: a secret created after the load's query is read from the change log, and
    // one created after the cursor but before the query is in both.
    await this.known.load()
    if (generation !== this.generation) return
    this.timer = setInterval(() => void this.refresh(), this.options.refreshMs)
    this.timer.unref()
  }

  /** Stops polling and push; never rejects (it runs from an onClose hook). */
  async stop(): Promise<void> {
    this.generation++
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    const unwatch = this.unwatch
    this.unwatch = undefined
    if (unwatch === undefined) return
    try {
      await unwatch()
    } catch (error) {
      this.options.onError?.(error)
    }
  }

  /**
   * Without a storage round trip: the cached record, false for a key that cannot be valid
   * (malformed, other environment, bad checksum), or undefined when storage must be asked.
   */
  resolveCached(key: string): ApiKeyRecord | false | undefined {
    // Only well-formed keys of this environment are ever cached (see resolve), so a cached key needs
    // no format and checksum check: that check runs for the keys storage must be asked about.
    const cached = this.lookups.cached(hashKey(key))
    if (cached !== undefined) return cached
    return isWellFormedKey(key, this.options.env) ? undefined : false
  }

  /** For a key that is not cached: false when no such key exists (or it was found unknown or revoked), without storage. */
  mayExist(key: string): boolean {
    return this.known.mayExist(hashKey(key))
  }

  /**
   * The key record, or undefined for a malformed or unknown key. The record may be expired or
   * revoked: the caller checks both (and can name the key in its log). Revoked keys are not cached.
   */
  async resolve(key: string): Promise<ApiKeyRecord | undefined> {
    if (!isWellFormedKey(key, this.options.env)) return undefined
    const hash = hashKey(key)
    return this.known.lookup(
      hash,
      () => this.lookups.lookup(hash),
      (record) => record.revokedAt === null,
    )
  }

  /** Drops keys changed since the last poll from the cache (on the timer; tests call it rather than wait). */
  async refresh(): Promise<void> {
    if (this.polling) return
    this.polling = true
    try {
      const batch = await this.keys.changesSince(this.cursor ?? 0)
      this.cursor = batch.cursor
      for (const hash of batch.hashes) this.forget(hash)
    } catch (error) {
      this.options.onError?.(error)
    } finally {
      this.polling = false
    }
  }

  /**
   * Drops one hash now (push-based invalidation: PostgreSQL NOTIFY, or the key service of this
   * process). Whatever the change log names exists (or existed): it goes into the known secrets.
   */
  forget(hash: string): void {
    this.lookups.forget(hash)
    this.known.add(hash)
    for (const follower of this.followers) follower.forget(hash)
  }

  /** A key this process created: known at once; other processes learn of it from the change log. */
  created(hash: string): void {
    this.known.add(hash)
  }

  get cachedCount(): number {
    return this.lookups.size
  }
}
