import { BOOTSTRAP_ACTOR, type ChangeContext, type RecordedChange } from '../changes/audit-log.js'
import { type ChangeEntry, type ChangeRecorder, recordedChange, withEvents } from '../changes/change-recorder.js'
import type { Environment } from '../config/config.js'
import type { EventDraft } from '../events/event.js'
import type { RateLimiter } from '../limits/limiter.js'
import { type Clock, systemClock } from '../shared/clock.js'
import { PLAN_QUOTAS } from '../shared/plans.js'
import { conflict, invalid, notFound } from '../shared/refusal.js'
import { ALL_SCOPES } from '../shared/scopes.js'
import {
  type CreateKeyRequest,
  type CustomerPlan,
  type CustomerPlans,
  KEY_STATES,
  type KeyAdministration,
  type KeyPage,
  type KeyState,
  type KeyUsage,
  type KeyView,
  type LeakReport,
  type ListKeysQuery,
  type Revocation,
  type UpdateKeyRequest,
} from './administration.js'
import { type ApiKeyRecord, countedQuotaId, hashKey, limiterIdentity } from './api-key.js'
import { keyEvent } from './events.js'
import { changedFields, describe, refuseRetired } from './key-records.js'
import { checkExpiry, checkGrace, checkLimits, checkMetadata, checkName, checkPlan, checkScopes } from './key-validation.js'
import { newKey, newRecord, refusePlanOfCustomer } from './new-key.js'
import type { KeyRepository, KeyRevocation } from './repository.js'
import { alongChain, alsoRevoked } from './rotation-chain.js'

export function keyState(record: Pick<ApiKeyRecord, 'revokedAt' | 'expiresAt'>, now: number): KeyState {
  if (record.revokedAt !== null) return 'revoked'
  return record.expiresAt !== null && record.expiresAt <= now ? 'expired' : 'active'
}

/** Optimistic updates retry this often when another writer changed the key in between. */
const MAX_ATTEMPTS = 5

export interface KeyServiceOptions {
  keys: KeyRepository
  /** Makes every audit entry of the service (changes/). */
  recorder: ChangeRecorder
  /** For usage: its peek() shows the counters the rate-limit headers show. */
  limiter: Pick<RateLimiter, 'peek'>
  env: Environment
  clock?: Clock
  /** Last-use times this process has seen but not yet written (the server's batcher; absent in the CLI). */
  pendingLastUse?: (id: string) => number | undefined
  /**
   * The key cache of this process (the server's KeyResolver; absent in the CLI): a key this service
   * changes is dropped from it as soon as the change is committed, rather than at its next poll of
   * the change log, which is how the other processes learn of it.
   */
  cache?: KeyCache
  /** The customers a key may belong to (absent: a key with a customerId is refused as unknown). */
  customers?: CustomerPlans
}

/** A cache of key records by hash, which must not serve a key once it has changed. */
export interface KeyCache {
  forget(hash: string): void
  /** A key created (also a rotation's successor): the cache's filter of known secrets holds it from now on. */
  created(hash: string): void
}

/**
 * The key service: every rule of the key lifecycle (plans, limits, expiry, rotation, audit),
 * behind the KeyAdministration contract that the CLI and the admin API both call.
 */
export class KeyService implements KeyAdministration {
  private readonly keys: KeyRepository
  private readonly recorder: ChangeRecorder
  private readonly clock: Clock

  constructor(private readonly options: KeyServiceOptions) {
    this.keys = options.keys
    this.recorder = options.recorder
    this.clock = options.clock ?? systemClock
  }

  async createKey(input: CreateKeyRequest, ctx: ChangeContext): Promise<{ key: string; view: KeyView }> {
    const customer = input.customerId === undefined ? undefined : await this.findCustomer(input.customerId)
    const now = this.clock.now()
    const { key, record } = newKey(input, this.options.env, now, customer)
    await this.keys.insertKey(
      record,
      withEvents(
        this.recorder.change(ctx, now, {
          action: 'key.create',
          keyId: record.id,
          details: { ...describe(record), ...(record.customerId === null ? {} : { customerId: record.customerId }) },
        }),
        keyEvent('key.created', this.view(record, now), now),
      ),
    )
    this.options.cache?.created(record.hash)
    return { key, view: this.view(record, now) }
  }

  async listKeys(query: ListKeysQuery, ctx?: ChangeContext): Promise<KeyPage> {
    const limit = query.limit
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 100)
      throw invalid('limit', (name) => `${name('limit')} must be an integer from 1 to 100`)
    if (query.plan !== undefined) checkPlan(query.plan)
    if (query.customerId !== undefined) await this.findCustomer(query.customerId)
    if (query.state !== undefined && !KEY_STATES.includes(query.state))
      throw invalid('state', (name) => `${name('state')} must be one of ${KEY_STATES.join(', ')} (got ${JSON.stringify(query.state)})`)
    const now = this.clock.now()
    const rows = await this.keys.pageKeys({ ...query, limit: limit + 1, now })
    const page = rows.slice(0, limit)
    const filter = {
      plan: query.plan,
      customerId: query.customerId,
      state: query.state,
      name: query.name,
      prefix: query.prefix,
      limit,
      after: query.after,
    }
    await this.recorder.read(ctx, { action: 'key.list', details: filter })
    return { keys: page.map((r) => this.view(r, now)), nextAfter: rows.length > limit ? page[page.length - 1]!.id : null }
  }

  async getKey(id: string, ctx?: ChangeContext): Promise<KeyView> {
    const record = await this.find(id)
    const now = this.clock.now()
    await this.recorder.read(ctx, { action: 'key.read', keyId: id, details: {} })
    return this.view(record, now)
  }

  async lookupKey(secret: string, ctx?: ChangeContext): Promise<KeyView> {
    const record = await this.keys.findKeyByHash(hashKey(secret))
    // Never the secret in the message (it is answered and may be logged): only that none matched.
    if (record === undefined) throw notFound('key', undefined, 'No key has this secret')
    const now = this.clock.now()
    await this.recorder.read(ctx, { action: 'key.lookup', keyId: record.id, details: {} })
    return this.view(record, now)
  }

  async reportLeak(secret: string, report: LeakReport, ctx: ChangeContext): Promise<KeyView | undefined> {
    const record = await this.keys.findKeyByHash(hashKey(secret))
    if (record === undefined) return undefined
    const now = this.clock.now()
    const leak = { url: report.url, source: report.source, action: report.action }
    const reported: ChangeEntry = { action: 'key.leak_reported', keyId: record.id, details: { ...leak, state: keyState(record, now) } }
    if (report.action === 'flag') {
      // A report that changes no row: on record alone.
      const view = this.view(record, now)
      await this.recorder.record(withEvents(this.recorder.change(ctx, now, reported), keyEvent('key.leak_reported', view, now)))
      return view
    }
    // The report first, then the revocation's own key.revoke entries, in its transaction.
    const leaked = keyEvent('key.leak_reported', this.view(record, now), now)
    return (await this.revoke(record.id, ctx, { leakUrl: report.url }, reported, leaked)).view
  }

  async updateKey(id: string, patch: UpdateKeyRequest, ctx: ChangeContext): Promise<KeyView> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.find(id)
      const now = this.clock.now()
      refuseRetired(current, 'updated')
      if (current.customerId !== null) refusePlanOfCustomer(patch)
      const plan = patch.plan === undefined ? current.plan : checkPlan(patch.plan)
      // Limits: given ones are checked against the plan; otherwise a key staying on enterprise
      // keeps its own, any other plan takes the plan's (so switching away from enterprise resets
      // them), and switching to enterprise needs both.
      const keep = plan === 'enterprise' && current.plan === 'enterprise'
      const limits = checkLimits(
        plan,
        patch.perMinute ?? (keep ? current.perMinute : undefined),
        patch.perDay ?? (keep ? current.perDay : undefined),
      )
      const next = {
        name: patch.name === undefined ? current.name : checkName(patch.name),
        plan,
        ...limits,
        expiresAt: patch.expiresAt === undefined ? current.expiresAt : checkExpiry(patch.expiresAt, now),
        metadata: patch.metadata === undefined ? current.metadata : checkMetadata(patch.metadata),
        scopes: patch.scopes === undefined ? current.scopes : checkScopes(patch.scopes),
        // Strictly increasing: the optimistic check of a concurrent writer must fail.
        updatedAt: Math.max(now, current.updatedAt + 1),
      }
      const changes = changedFields(current, next)
      if (changes.length === 0) {
        // Nothing to write, but a successful call all the same: on record, as a read is.
        await this.recorder.read(ctx, { action: 'key.update', keyId: id, details: { changed: [], ...describe(current) } })
        return this.view(current, now)
      }
      const updated = await this.keys.updateKey(
        id,
        current.updatedAt,
        next,
        this.recorder.change(ctx, now, { action: 'key.update', keyId: id, details: { changed: changes, ...describe(next, changes) } }),
      )
      if (updated !== undefined) {
        // The older keys of its chain too: they took its plan, limits and scopes.
        for (const hash of [current.hash, ...updated.chain]) this.options.cache?.forget(hash)
        return this.view(updated.record, now)
      }
      if (attempt >= MAX_ATTEMPTS) throw new Error(`key ${id} kept changing during the update; try again`)
    }
  }

  async rotateKey(
    id: string,
    options: { graceSeconds: number },
    ctx: ChangeContext,
  ): Promise<{ key: string; view: KeyView; previous: KeyView }> {
    const grace = checkGrace(options.graceSeconds)
    for (let attempt = 1; ; attempt++) {
      const old = await this.find(id)
      const now = this.clock.now()
      refuseRetired(old, 'rotated')
      if (keyState(old, now) === 'expired')
        throw conflict(`key ${id} has expired and cannot be rotated; create a new key (or update its expiresAt first)`)
      const { key, record } = newRecord(
        // The successor keeps the old key's own expiry, if it had one: rotation changes the secret, not the contract.
        // Its customer too: a rotated key of a customer still shares the customer's quota and orders.
        {
          plan: old.plan,
          name: old.name,
          perMinute: old.perMinute,
          perDay: old.perDay,
          expiresAt: old.expiresAt,
          metadata: old.metadata,
          customerId: old.customerId,
          // What the key may do is part of the contract too.
          scopes: old.scopes,
        },
        this.options.env,
        now,
        { quotaId: old.quotaId, rotatedFrom: old.id },
      )
      const at = Math.max(now, old.updatedAt + 1)
      const graceEnd = now + grace * 1000
      const revokedAt = grace === 0 ? at : null
      const expiresAt = grace === 0 ? old.expiresAt : Math.min(graceEnd, old.expiresAt ?? Number.POSITIVE_INFINITY)
      const previous = { ...old, rotatedTo: record.id, expiresAt, revokedAt, updatedAt: at }
      const done = await this.keys.rotateKey(
        { id, expectedUpdatedAt: old.updatedAt, successor: record, expiresAt, revokedAt, at },
        withEvents(
          this.recorder.change(ctx, now, {
            action: 'key.rotate',
            keyId: id,
            details: { successorId: record.id, graceSeconds: grace, oldKeyExpiresAt: expiresAt, oldKeyRevokedAt: revokedAt },
          }),
          // The rotated key as it is now: its rotatedTo names the successor.
          keyEvent('key.rotated', this.view(previous, now), now),
        ),
      )
      if (done) {
        this.options.cache?.forget(old.hash)
        this.options.cache?.created(record.hash)
        return { key, view: this.view(record, now), previous: this.view(previous, now) }
      }
      if (attempt >= MAX_ATTEMPTS) throw new Error(`key ${id} kept changing during the rotation; try again`)
    }
  }

  /**
   * Revokes the key and every other key of its rotation chain still in its grace period: a rotation
   * replaces a secret that is compromised or old, so revoking any key of the chain ends the old
   * secrets' grace too (the chain's current key stays unless it is the one named). One `key.revoke`
   * entry per key revoked; the others' say which revocation took them (`revokedWith`). A repeat
   * (the key named revoked already) is on record too, with `alreadyRevoked`, in the same transaction:
   * only the store knows, in it, whether the key was revoked before.
   */
  revokeKey(id: string, ctx: ChangeContext): Promise<Revocation> {
    return this.revoke(id, ctx, {})
  }

  /**
   * `reason`: the details that say why (a leak's URL); `first`: an entry written before the
   * revocation's own (a leak's report), and `firstEvent` its event. A `key.revoked` event for each
   * key revoked now (none for a repeat).
   */
  private async revoke(
    id: string,
    ctx: ChangeContext,
    reason: Record<string, unknown>,
    first?: ChangeEntry,
    firstEvent?: EventDraft,
  ): Promise<Revocation> {
    const named = await this.find(id)
    const now = this.clock.now()
    const revokedEvents = (r: KeyRevocation): EventDraft[] => [
      ...(firstEvent === undefined ? [] : [firstEvent]),
      ...(r.revoked ? [keyEvent('key.revoked', this.view({ ...named, revokedAt: now, updatedAt: now }, now), now)] : []),
      ...r.graces.map((g) => keyEvent('key.revoked', this.view(g, now), now)),
    ]
    const { revoked, graces } = await this.keys.revokeKey(id, now, (r) =>
      withEvents(
        this.recorder.change(
          ctx,
          now,
          ...(first === undefined ? [] : [first]),
          {
            action: 'key.revoke',
            keyId: id,
            details: { ...(r.revoked ? {} : { alreadyRevoked: true }), ...alsoRevoked(r.graces, named), ...reason },
          },
          ...alongChain(r.graces, named).map((g): ChangeEntry => ({ action: 'key.revoke', keyId: g.id, details: { revokedWith: id } })),
        ),
        ...revokedEvents(r),
      ),
    )
    const record = await this.find(id)
    // Also when it was already revoked (by another process, maybe not yet polled here).
    for (const key of [record, ...graces]) this.options.cache?.forget(key.hash)
    return { view: this.view(record, now), alreadyRevoked: !revoked, alsoRevoked: alongChain(graces, named).map((g) => this.view(g, now)) }
  }

  async keyUsage(id: string, ctx?: ChangeContext): Promise<KeyUsage> {
    const record = await this.find(id)
    const usage = await this.options.limiter.peek(limiterIdentity(record), record)
    await this.recorder.read(ctx, { action: 'key.usage', keyId: id, details: {} })
    return {
      keyId: record.id,
      quotaId: countedQuotaId(record),
      minute: usage.minute,
      day: usage.day,
      ban: usage.ban,
      lastUsedAt: this.lastUsed(record),
    }
  }

  /** A customer named in the input (a new key's, a list filter's): unknown is bad input naming the field (400), not a missing resource. */
  private async findCustomer(id: string): Promise<CustomerPlan> {
    const customer = await this.options.customers?.findCustomerById(id)
    if (customer === undefined) throw invalid('customerId', (name) => `${name('customerId')}: no customer with id ${id}`)
    return customer
  }

  private async find(id: string): Promise<ApiKeyRecord> {
    const record = await this.keys.findKeyById(id)
    if (record === undefined) throw notFound('key', id)
    return record
  }

  private lastUsed(record: ApiKeyRecord): number | null {
    const pending = this.options.pendingLastUse?.(record.id)
    if (pending === undefined) return record.lastUsedAt
    return Math.max(pending, record.lastUsedAt ?? 0)
  }

  private view(r: ApiKeyRecord, now: number): KeyView {
    return {
      id: r.id,
      name: r.name,
      plan: r.plan,
      perMinute: r.perMinute,
      perDay: r.perDay,
      prefix: r.prefix,
      quotaId: r.quotaId,
      customerId: r.customerId,
      scopes: r.scopes,
      state: keyState(r, now),
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
      expiresAt: r.expiresAt,
      revokedAt: r.revokedAt,
      rotatedTo: r.rotatedTo,
      rotatedFrom: r.rotatedFrom,
      metadata: r.metadata,
      lastUsedAt: this.lastUsed(r),
    }
  }
}

/**
 * On a first start with no key at all, creates one Free key so a newcomer can call the API at once;
 * in the audit log as `key.create` by `system`/`bootstrap`, and its `key.created` event, in the same transaction.
 */
export async function createFirstKey(
  keys: KeyRepository,
  env: Environment,
  now = Date.now(),
): Promise<{ key: string; record: ApiKeyRecord } | undefined> {
  const created = newRecord(
    { plan: 'free', name: 'first key', ...PLAN_QUOTAS.free, expiresAt: null, metadata: null, customerId: null, scopes: [...ALL_SCOPES] },
    env,
    now,
  )
  const recorded: RecordedChange = withEvents(
    recordedChange({ actor: BOOTSTRAP_ACTOR }, now, {
      action: 'key.create',
      keyId: created.record.id,
      details: describe(created.record),
    }),
    // Its event too, as every key's: a new key, never used.
    keyEvent('key.created', { ...created.record, state: 'active', lastUsedAt: null }, now),
  )
  return (await keys.insertFirstKey(created.record, recorded)) ? created : undefined
}

export type CreateKeyInput = CreateKeyRequest
export { newKey }
