/**
 * The servers the fuzzer talks to, on loopback ports: the app (main listener) and the admin API
 * on a listener of its own (admin.ts), sharing storage, limiter and a manual clock; the keys the
 * auth choices stand for; the oracles of both OpenAPI documents; and the model of what each
 * Idempotency-Key created (idempotency.ts).
 */

import { Writable } from 'node:stream'
import { pino } from 'pino'
import type { ManualClock } from '../../src/shared/clock.js'
import type { Storage } from '../../src/storage/storage.js'
import { openTestApp, type TestApp } from '../helpers/app.js'
import { createApiKey } from '../helpers/keys.js'
import { AdminFixture } from './admin.js'
import { UNAUTHENTICATED_CHOICES } from './arbitraries.js'
import { type Credentials, type Endpoint, probeLoopbackBlock, READ_ONLY_SCOPES, REQUEST_TIMEOUT_MS } from './endpoint.js'
import { SECRET_SHAPED } from './hostile-text.js'
import { IDEMPOTENCY_HEADER, IdempotencyModel, idempotencyObserver } from './idempotency.js'
import { Oracle } from './oracle.js'
import { destroyAgents, sendHttp } from './transport.js'

export interface Keys extends Credentials {
  /** A second Enterprise key: Idempotency-Keys are scoped per API key. */
  second: string
}

export interface FuzzServerOptions {
  now?: number
  /** The store (default: SQLite in memory); closed with the server. */
  storage?: Storage
  env?: Record<string, string>
  docOverride?: (doc: any) => any
  adminDocOverride?: (doc: any) => any
}

export class FuzzServer {
  /** The highest animal id the idempotency property has accounted for. */
  lastPetId = 0n
  readonly admin: Endpoint
  /** The service's log lines (access lines, warnings, errors) not yet looked at. */
  private readonly logLines: string[]

  private constructor(
    readonly t: TestApp,
    readonly main: Endpoint,
    readonly keys: Keys,
    readonly idempotency: IdempotencyModel,
    private readonly adminFixture: AdminFixture,
    logLines: string[],
  ) {
    this.admin = adminFixture.endpoint
    this.logLines = logLines
  }

  static async start(options: FuzzServerOptions = {}): Promise<FuzzServer> {
    const logLines: string[] = []
    const sink = new Writable({
      write(chunk, _encoding, done) {
        logLines.push(String(chunk))
        done()
      },
    })
    // Webhook endpoints' host names resolve to a public address without asking the machine's DNS.
    const t = await openTestApp({
      env: options.env,
      logger: pino({ level: 'info' }, sink),
      storage: options.storage,
      resolveHost: async () => ['93.184.215.14'],
    })
    if (options.now !== undefined) (t.clock as ManualClock).set(options.now)
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const address = t.app.server.address()
    if (address === null || typeof address === 'string') throw new Error('no port')
    await probeLoopbackBlock(address.port)
    const enterprise = { plan: 'enterprise', perMinute: 1_000_000_000, perDay: 1_000_000_000 }
    const valid = await t.key(enterprise)
    const second = await t.key({ ...enterprise, name: 'second' })
    const free = await t.key({ plan: 'free' })
    const readOnly = await t.key({ ...enterprise, name: 'read-only', scopes: [...READ_ONLY_SCOPES] })
    const revokedCreated = await createApiKey(t.storage.keys, { plan: 'pro', name: 'revoked' }, t.config.env)
    await t.storage.keys.revokeKey(revokedCreated.record.id, Date.now())
    await t.domain.keyResolver.refresh()
    const other = t.config.env === 'production' ? 'staging' : 'production'
    // A key of the other environment, stored: refused by its prefix alone.
    const staging = (await createApiKey(t.storage.keys, { plan: 'pro', name: 'other env' }, other)).key
    const keys: Keys = { valid, free, revoked: revokedCreated.key, staging, second, readOnly }
    // Used once now, so the server has them cached: a key it has not cached is not looked up for a
    // refused address (SECURITY.md), and the properties soon spend 127.0.0.1's keyless window.
    for (const key of [valid, second, free, readOnly])
      await t.app.inject({ url: '/v1/pets?limit=1', headers: { authorization: `Bearer ${key}` } })
    const doc = await fetchDoc(address.port)
    const oracle = await Oracle.create(options.docOverride ? options.docOverride(structuredClone(doc)) : doc, 'public')
    const creates = oracle.surface.operationsWithHeader(IDEMPOTENCY_HEADER)[0]
    const idempotency = new IdempotencyModel(t.clock, creates?.body ?? {})
    const endpoint: Endpoint = {
      name: 'main',
      port: address.port,
      oracle,
      credentials: keys,
      unauthenticated: UNAUTHENTICATED_CHOICES,
      knownIds: [],
      observer: idempotencyObserver(idempotency),
    }
    const admin = await AdminFixture.start(t, {
      apiKeys: keys,
      main: { port: address.port, oracle },
      docOverride: options.adminDocOverride,
    })
    return new FuzzServer(t, endpoint, keys, idempotency, admin, logLines)
  }

  /**
   * The log lines written since the last call that hold more of a key than its display prefix
   * (none may: SECURITY.md). A line is written when its request is answered, so it may come with
   * the next case's.
   */
  takeLeakedLogLines(): string[] {
    return this.logLines.splice(0).filter((line) => SECRET_SHAPED.test(line))
  }

  get port(): number {
    return this.main.port
  }

  get oracle(): Oracle {
    return this.main.oracle
  }

  get clock(): ManualClock {
    return this.t.clock as ManualClock
  }

  fetchDoc(): Promise<unknown> {
    return fetchDoc(this.port)
  }

  /** The server still answers /healthz (no crash, no wedged event loop), and the admin listener its document. */
  async assertAlive(): Promise<void> {
    const res = await sendHttp({
      port: this.port,
      localAddress: '127.0.0.1',
      method: 'GET',
      path: '/healthz',
      headers: [],
      timeoutMs: REQUEST_TIMEOUT_MS,
    })
    if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`)
    const admin = await sendHttp({
      port: this.admin.port,
      localAddress: '127.0.0.1',
      method: 'GET',
      path: '/admin/v1/openapi.json',
      headers: [['authorization', `Bearer ${this.admin.credentials.valid}`]],
      timeoutMs: REQUEST_TIMEOUT_MS,
    })
    // 429: the admin token's quota may be spent by the admin property; the listener answered.
    if (admin.status !== 200 && admin.status !== 429) throw new Error(`the admin listener answered ${admin.status}`)
  }

  async close(): Promise<void> {
    destroyAgents()
    await this.adminFixture.close()
    await this.t.close()
  }
}

async function fetchDoc(port: number): Promise<unknown> {
  const res = await sendHttp({
    port,
    localAddress: '127.0.0.1',
    method: 'GET',
    path: '/v1/openapi.json',
    headers: [],
    timeoutMs: REQUEST_TIMEOUT_MS,
  })
  if (res.status !== 200) throw new Error(`GET /v1/openapi.json answered ${res.status}`)
  return JSON.parse(res.body.toString('utf8'))
}
