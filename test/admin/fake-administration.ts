// TEMPORARY: a hand-written KeyAdministration double until the real key service (branch keys-core) is merged.
import type {
  AuditEntry,
  ChangeContext,
  CreateKeyRequest,
  KeyAdministration,
  KeyView,
  UpdateKeyRequest,
} from '../../src/keys/administration.js'
import { KeyInputError, KeyNotFoundError, MAX_GRACE_SECONDS, MAX_METADATA_BYTES } from '../../src/keys/administration.js'
import { displayPrefix, generateKey, generateKeyId, hashKey } from '../../src/keys/api-key.js'
import { isPlanName, PLAN_QUOTAS } from '../../src/keys/plans.js'
import type { Storage } from '../../src/storage/storage.js'

export class FakeAdministration implements KeyAdministration {
  readonly views = new Map<string, KeyView>()
  readonly audit: AuditEntry[] = []
  constructor(
    private readonly storage: Storage,
    private readonly now: () => number,
  ) {}

  private log(ctx: ChangeContext, action: AuditEntry['action'], keyId: string, details: Record<string, unknown>) {
    this.audit.push({
      seq: this.audit.length + 1,
      at: this.now(),
      actor: ctx.actor,
      action,
      keyId,
      details,
      requestId: ctx.requestId ?? null,
    })
  }

  private check(plan: string, input: UpdateKeyRequest) {
    if (!isPlanName(plan)) throw new KeyInputError('plan', 'plan must be one of free, pro, business, enterprise')
    if (plan !== 'enterprise' && (input.perMinute !== undefined || input.perDay !== undefined))
      throw new KeyInputError('perMinute', 'perMinute and perDay apply to the enterprise plan only')
    if (input.expiresAt != null && input.expiresAt <= this.now()) throw new KeyInputError('expiresAt', 'expiresAt must be in the future')
    if (input.metadata != null && JSON.stringify(input.metadata).length > MAX_METADATA_BYTES)
      throw new KeyInputError('metadata', `metadata must be at most ${MAX_METADATA_BYTES} bytes`)
    return plan
  }

  async createKey(input: CreateKeyRequest, ctx: ChangeContext) {
    const plan = this.check(input.plan, input)
    const key = generateKey('production')
    const id = generateKeyId()
    const quota = plan === 'enterprise' ? { perMinute: input.perMinute!, perDay: input.perDay! } : PLAN_QUOTAS[plan]
    const now = this.now()
    const view: KeyView = {
      id,
      name: input.name,
      plan,
      ...quota,
      prefix: displayPrefix(key),
      quotaId: id,
      state: 'active',
      createdAt: now,
      updatedAt: now,
      expiresAt: input.expiresAt ?? null,
      revokedAt: null,
      rotatedTo: null,
      rotatedFrom: null,
      metadata: input.metadata ?? null,
      lastUsedAt: null,
    }
    await this.storage.keys.insertKey({
      id,
      name: input.name,
      plan,
      ...quota,
      hash: hashKey(key),
      prefix: view.prefix,
      createdAt: now,
      revokedAt: null,
    })
    this.views.set(id, view)
    this.log(ctx, 'key.create', id, { plan, name: input.name })
    return { key, view }
  }

  async listKeys(query: Parameters<KeyAdministration['listKeys']>[0]) {
    const all = [...this.views.values()]
      .filter((v) => (query.plan === undefined || v.plan === query.plan) && (query.state === undefined || v.state === query.state))
      .filter((v) => query.name === undefined || v.name.toLowerCase().includes(query.name.toLowerCase()))
      .filter((v) => query.after === undefined || v.id > query.after)
      .sort((a, b) => (a.id < b.id ? -1 : 1))
    const keys = all.slice(0, query.limit)
    return { keys, nextAfter: all.length > query.limit ? keys[keys.length - 1]!.id : null }
  }

  async getKey(id: string) {
    const view = this.views.get(id)
    if (view === undefined) throw new KeyNotFoundError(id)
    return view
  }

  async updateKey(id: string, patch: UpdateKeyRequest, ctx: ChangeContext) {
    const view = await this.getKey(id)
    this.check(patch.plan ?? view.plan, patch)
    const next = { ...view, ...patch, updatedAt: this.now() } as KeyView
    this.views.set(id, next)
    this.log(ctx, 'key.update', id, { fields: Object.keys(patch) })
    return next
  }

  async rotateKey(id: string, { graceSeconds }: { graceSeconds: number }, ctx: ChangeContext) {
    const view = await this.getKey(id)
    if (graceSeconds > MAX_GRACE_SECONDS) throw new KeyInputError('graceSeconds', `graceSeconds must be at most ${MAX_GRACE_SECONDS}`)
    const { key, view: created } = await this.createKey({ plan: view.plan, name: view.name }, ctx)
    const next = { ...created, rotatedFrom: id, quotaId: view.quotaId }
    this.views.set(next.id, next)
    const previous = { ...view, rotatedTo: next.id, expiresAt: this.now() + graceSeconds * 1000 }
    this.views.set(id, previous)
    this.audit.pop()
    this.log(ctx, 'key.rotate', id, { to: next.id, graceSeconds })
    return { key, view: next, previous }
  }

  async revokeKey(id: string, ctx: ChangeContext) {
    const view = await this.getKey(id)
    if (view.revokedAt !== null) return { view, alreadyRevoked: true }
    const next: KeyView = { ...view, state: 'revoked', revokedAt: this.now() }
    this.views.set(id, next)
    await this.storage.keys.revokeKey(id, this.now())
    this.log(ctx, 'key.revoke', id, {})
    return { view: next, alreadyRevoked: false }
  }

  async keyUsage(id: string) {
    const view = await this.getKey(id)
    const reset = Math.floor(this.now() / 1000) + 30
    return {
      keyId: id,
      quotaId: view.quotaId,
      minute: { limit: view.perMinute, used: 0, remaining: view.perMinute, resetAt: reset },
      day: { limit: view.perDay, used: 0, remaining: view.perDay, resetAt: reset },
      ban: { active: false, until: null, level: 0 },
      lastUsedAt: view.lastUsedAt,
    }
  }

  async listAudit(query: Parameters<KeyAdministration['listAudit']>[0]) {
    const all = this.audit.filter(
      (e) => (query.after === undefined || e.seq > query.after) && (query.keyId === undefined || e.keyId === query.keyId),
    )
    const entries = all.slice(0, query.limit)
    return { entries, nextAfter: all.length > query.limit ? entries[entries.length - 1]!.seq : null }
  }
}
