/**
 * The admin API under the fuzzer: its own app and loopback listener (`listener: 'admin'`), built
 * next to the main app from the same storage, limiter and clock and calling the main app's key
 * service, as the server does with ADMIN_PORT. An admin token, a revoked one, and keys seeded
 * through the API itself (so `<known N>` ids exist in every state). Its observer checks what the
 * document cannot say: a refused request changes no key and writes no audit entry; an accepted
 * one writes exactly one, by this token, with this X-Request-Id; a key it creates works on the
 * main listener and one it revokes no longer does.
 */
import type { FastifyInstance } from 'fastify'
import { parse as parseLossless } from 'lossless-json'
import { createAdminToken, revokeAdminToken } from '../../src/admin-tokens/admin-tokens.js'
import type { AuditEntry } from '../../src/changes/audit-log.js'
import type { TestApp } from '../helpers/app.js'
import { type AuthChoice, UNAUTHENTICATED_CHOICES } from './arbitraries.js'
import { type Credentials, type Endpoint, type Observer, REQUEST_TIMEOUT_MS, spareAddress } from './endpoint.js'
import { Oracle } from './oracle.js'
import { sendHttp, type WireResponse } from './transport.js'

/**
 * The admin reads that are not on record (docs/keys.md, the audit log): GET /token tells the caller
 * only of the token it holds, as the admin document tells it only what it may call; the list of
 * admin tokens holds no secret and is not audited (docs/keys.md, admin token roles).
 */
const NOT_ON_RECORD = new Set(['getAdminToken', 'listAdminTokens'])

interface Snapshot {
  /** Every key as stored, but for its last use (written in batches by the main app, at any time). */
  keys: Map<string, string>
  auditSeq: number
}

export interface AdminFixtureOptions {
  /** The main listener's credentials: its keys are what an admin request must refuse as a token. */
  apiKeys: Credentials
  /** The main listener, where the keys the admin API makes are used. */
  main: { port: number; oracle: Oracle }
  docOverride?: (doc: any) => any
}

export class AdminFixture {
  /** API keys this fixture saw created (201 `key`), by id: the secrets to try on the main listener. */
  private readonly secrets = new Map<string, string>()
  private auditSeq = 0
  /** The state after the last request observed. */
  private last: Snapshot | undefined

  private constructor(
    readonly app: FastifyInstance,
    private readonly t: TestApp,
    readonly tokenId: string,
    readonly endpoint: Endpoint,
    private readonly main: AdminFixtureOptions['main'],
  ) {}

  static async start(t: TestApp, options: AdminFixtureOptions): Promise<AdminFixture> {
    // The admin listener's app as the server builds it (buildService), beside `t.app`.
    const app = await t.admin()
    await app.listen({ port: 0, host: '127.0.0.1' })
    const address = app.server.address()
    if (address === null || typeof address === 'string') throw new Error('no admin port')
    const { token, record } = await createAdminToken(t.storage.adminTokens, 'fuzz')
    const revoked = await createAdminToken(t.storage.adminTokens, 'fuzz revoked')
    await revokeAdminToken(t.storage.adminTokens, revoked.record.id)
    const docAnswer = await sendHttp({
      port: address.port,
      localAddress: '127.0.0.1',
      method: 'GET',
      path: '/admin/v1/openapi.json',
      headers: [['authorization', `Bearer ${token}`]],
      timeoutMs: REQUEST_TIMEOUT_MS,
    })
    if (docAnswer.status !== 200) throw new Error(`GET /admin/v1/openapi.json answered ${docAnswer.status}`)
    const doc = JSON.parse(docAnswer.body.toString('utf8'))
    const oracle = await Oracle.create(options.docOverride ? options.docOverride(structuredClone(doc)) : doc, 'admin')
    const endpoint: Endpoint = {
      name: 'admin',
      port: address.port,
      oracle,
      // An API key is never an admin token: `free` and `staging` are refused here.
      credentials: {
        valid: token,
        revoked: revoked.token,
        free: options.apiKeys.valid,
        staging: options.apiKeys.staging,
        readOnly: options.apiKeys.readOnly,
      },
      unauthenticated: new Set<AuthChoice>([...UNAUTHENTICATED_CHOICES, 'free', 'read-only']),
      knownIds: [],
    }
    const fixture = new AdminFixture(app, t, record.id, endpoint, options.main)
    endpoint.observer = fixture.observer()
    fixture.auditSeq = (await fixture.auditAfter(0)).at(-1)?.seq ?? 0
    await fixture.seed()
    return fixture
  }

  async close(): Promise<void> {
    await this.app.close()
  }

  /** A few keys in every state, made through the API (so they are known ids): active, enterprise, expiring, rotated, revoked; a customer and its key; an admin token; webhook endpoints and a delivery. */
  private async seed(): Promise<void> {
    const soon = new Date(this.t.clock.now() + 120_000).toISOString()
    const call = async (method: string, path: string, body: unknown) => {
      const res = await sendHttp({
        port: this.endpoint.port,
        localAddress: '127.0.0.1',
        method,
        path: `/admin/v1${path}`,
        headers: [
          ['authorization', `Bearer ${this.endpoint.credentials.valid}`],
          ['content-type', 'application/json'],
        ],
        body: Buffer.from(JSON.stringify(body)),
        timeoutMs: REQUEST_TIMEOUT_MS,
      })
      if (res.status >= 300) throw new Error(`seeding ${method} ${path} answered ${res.status}: ${res.body.toString()}`)
      const location = res.headers.location
      if (location !== undefined) this.endpoint.knownIds.push(location.slice(location.lastIndexOf('/') + 1))
      this.auditSeq = (await this.auditAfter(this.auditSeq)).at(-1)?.seq ?? this.auditSeq
      return JSON.parse(res.body.toString()) as { apiKey: { id: string } }
    }
    const free = await call('POST', '/keys', { plan: 'free', name: 'seed free' })
    await call('POST', '/keys', {
      plan: 'enterprise',
      name: 'seed enterprise',
      perMinute: 1000,
      perDay: 100_000,
      metadata: { customer: 'c1' },
    })
    await call('POST', '/keys', { plan: 'pro', name: 'seed expiring', expiresAt: soon })
    await call('POST', `/keys/${free.apiKey.id}/rotate`, { gracePeriodSeconds: 3600 })
    const revoked = await call('POST', '/keys', { plan: 'business', name: 'seed revoked' })
    await call('POST', `/keys/${revoked.apiKey.id}/revoke`, {})
    // A customer (its id known too), and a key of it.
    const customer = (await call('POST', '/customers', { plan: 'free', name: 'seed customer' })) as unknown as { id: string }
    await call('POST', '/keys', { name: 'seed customer key', customerId: customer.id })
    // An admin token made through the API (no Location: there is no GET of one), its id known too.
    const colleague = (await call('POST', '/admin-tokens', { name: 'seed colleague', role: 'read' })) as unknown as {
      adminToken: { id: string }
    }
    this.endpoint.knownIds.push(colleague.adminToken.id)
    // A webhook endpoint of the customer (its id known from its Location), and one of every event.
    await call('POST', '/webhook-endpoints', { url: 'https://hooks.example.com/fuzz', events: ['order.placed'], customerId: customer.id })
    await call('POST', '/webhook-endpoints', { url: 'https://93.184.215.14/fuzz', events: ['*'], description: 'seed' })
    // A delivery of it (its id known too): a key's event, its delivery claimed by hand (this app sends nothing).
    const everyEvent = this.endpoint.knownIds[this.endpoint.knownIds.length - 1]!
    await call('POST', '/keys', { plan: 'free', name: 'seed delivered' })
    await this.t.storage.webhookDeliveries.claimDue(Date.now(), 100, Date.now() + 60_000)
    const [delivery] = await this.t.storage.webhookDeliveries.pageDeliveries({ endpointId: everyEvent, limit: 1 })
    if (delivery === undefined) throw new Error('seeding a webhook delivery made none')
    this.endpoint.knownIds.push(delivery.id)
  }

  private async snapshot(): Promise<Snapshot> {
    const keys = new Map<string, string>()
    for (const { lastUsedAt: _lastUse, ...record } of await this.t.storage.keys.listKeys()) keys.set(record.id, JSON.stringify(record))
    this.auditSeq = (await this.auditAfter(this.auditSeq)).at(-1)?.seq ?? this.auditSeq
    return { keys, auditSeq: this.auditSeq }
  }

  private async auditAfter(seq: number): Promise<AuditEntry[]> {
    const entries: AuditEntry[] = []
    for (let after = seq; ; ) {
      const page = await this.t.storage.audit.list({ limit: 100, after })
      entries.push(...page.entries)
      if (page.nextAfter === null) return entries
      after = page.nextAfter
    }
  }

  private observer(): Observer<Snapshot | undefined> {
    return {
      // What the previous answer left is what this request starts from: only admin requests change keys.
      before: async ({ operation }) => (operation === undefined ? undefined : (this.last ?? this.snapshot())),
      after: async ({ case: c, operation }, res, before) => {
        if (operation === undefined || before === undefined) return []
        const problems: string[] = []
        const entries = await this.auditAfter(before.auditSeq)
        const now = await this.snapshot()
        this.last = now
        const changed = [...now.keys].filter(([id, json]) => before.keys.get(id) !== json).map(([id]) => id)
        // Entries are told apart by request id: Node's parser may refuse a request whose head the
        // app is already handling (a bad chunk in a GET's body), whose read is then on record under
        // an id the client never saw.
        const requestId = res.headers['x-request-id']
        const mine = entries.filter((e) => requestId !== undefined && e.requestId === requestId)
        if (res.status < 200 || res.status >= 300) {
          // README (admin API): a refused request changes nothing and is not on record.
          if (changed.length > 0) problems.push(`${operation.id} refused with ${res.status} but changed keys ${changed.join(', ')}`)
          if (mine.length > 0)
            problems.push(`${operation.id} refused with ${res.status} but on record as ${mine.map((e) => e.action).join(', ')}`)
          return problems
        }
        // Every read and every change is on record, once, by its token; a call that changed nothing
        // (revoking a revoked key, an update to the same values) may be left out. A revocation is on
        // record once per key it revoked: the key named and each of its chain's (`alsoRevoked`).
        const read = c.method === 'GET' || c.method === 'HEAD'
        const alsoRevoked = revokedWith(res)
        const recorded = read && !NOT_ON_RECORD.has(operation.id)
        if (mine.length > 1 + alsoRevoked.length || (mine.length === 0 && (recorded || changed.length > 0)))
          problems.push(
            `${operation.id} ${res.status} is on record ${mine.length} times, not ${1 + alsoRevoked.length} (request id ${requestId})`,
          )
        for (const id of alsoRevoked)
          if (!mine.some((e) => e.keyId === id && e.action === 'key.revoke'))
            problems.push(`${operation.id} revoked ${id} with no key.revoke entry`)
        for (const e of mine)
          if (e.actor.type !== 'admin_token' || e.actor.id !== this.tokenId)
            problems.push(`audit entry by ${JSON.stringify(e.actor)}, not this admin token`)
        if (read && changed.length > 0) problems.push(`${c.method} ${operation.id} changed keys ${changed.join(', ')}`)
        problems.push(...(await this.checkOnMain(res, before, now)))
        return problems
      },
    }
  }

  /**
   * The main listener's answer to a key, judged by its own oracle: for an operation without
   * parameters that the key's scopes allow (a list, or GET /v1/rate_limit, which any key may call,
   * for a key that may read nothing), or the first such operation when its scopes are not known.
   */
  private async askMain(key: string, problems: string[], scopes?: readonly string[]): Promise<WireResponse> {
    const plain = this.main.oracle.surface.operations.filter((o) => o.method === 'GET' && !o.template.includes('{'))
    const op =
      (scopes === undefined
        ? plain[0]
        : (plain.find((o) => o.scopes.some((s) => scopes.includes(s))) ?? plain.find((o) => o.scopes.length === 0))) ?? plain[0]!
    const res = await sendHttp({
      port: this.main.port,
      localAddress: spareAddress(),
      method: 'GET',
      path: op.template,
      headers: [['authorization', `Bearer ${key}`]],
      timeoutMs: REQUEST_TIMEOUT_MS,
    })
    const expectation = {
      operation: op.id,
      method: 'GET',
      knownUnauthenticated: false,
      requestId: { sent: false as const },
      wellFormed: true,
    }
    problems.push(...this.main.oracle.judge(expectation, res).problems.map((p) => `main listener: ${p}`))
    return res
  }

  /** A key the answer shows created works on the main listener; a key this request revoked no longer does. */
  private async checkOnMain(res: WireResponse, before: Snapshot, now: Snapshot): Promise<string[]> {
    const problems: string[] = []
    const body = res.body.length > 0 ? (parseLossless(res.body.toString()) as Record<string, unknown>) : {}
    const created = body.apiKey as { id?: unknown } | undefined
    if (res.status === 201 && typeof body.key === 'string' && typeof created?.id === 'string') {
      this.secrets.set(created.id, body.key)
      const answer = await this.askMain(body.key, problems, (created as { scopes?: string[] }).scopes ?? [])
      // 429: a rotated key shares its predecessor's quota, which may be spent.
      if (answer.status !== 200 && answer.status !== 429)
        problems.push(`a key the admin API created answers ${answer.status} on the main listener`)
    }
    const revoked = [...now.keys].filter(
      ([id, json]) => JSON.parse(json).revokedAt !== null && JSON.parse(before.keys.get(id) ?? '{}').revokedAt === null,
    )
    if (revoked.length > 0) await this.t.domain.keyResolver.refresh()
    for (const [id] of revoked) {
      const secret = this.secrets.get(id)
      if (secret === undefined) continue
      const answer = await this.askMain(secret, problems)
      if (answer.status !== 401) problems.push(`key ${id}, revoked through the admin API, answers ${answer.status} on the main listener`)
    }
    return problems
  }
}

/** The ids a revocation's answer says it revoked with the key named (none for any other answer). */
function revokedWith(res: WireResponse): string[] {
  if (res.body.length === 0) return []
  const body = parseLossless(res.body.toString()) as { alsoRevoked?: unknown }
  return Array.isArray(body.alsoRevoked) ? body.alsoRevoked.map((k: { id?: unknown }) => String(k.id)) : []
}
