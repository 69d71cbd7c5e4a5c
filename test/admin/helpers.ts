import { after, before, type TestContext } from 'node:test'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { createAdminToken } from '../../src/admin-tokens/admin-tokens.js'
import type { Config } from '../../src/config/config.js'
import type { Domain } from '../../src/domain.js'
import type { ManualClock } from '../../src/shared/clock.js'
import type { Storage } from '../../src/storage/storage.js'
import { buildTestApp, openTestApp, type TestApp, type TestAppOptions } from '../helpers/app.js'

export interface AdminTestApp {
  /** The admin listener's app (admin API, /metrics). */
  app: FastifyInstance
  /** The main listener's app (the public API), over the same domain as `app`. */
  api: FastifyInstance
  /** The one domain under both apps (test/helpers/app.ts). */
  domain: Domain
  storage: Storage
  clock: ManualClock
  config: Config
  /** An admin token (created in storage) and its id. */
  token: string
  tokenId: string
  /** An admin call with the token (JSON body when `body` is given). */
  call(method: InjectOptions['method'], url: string, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>
  close(): Promise<void>
}

type AdminTestAppOptions = Pick<TestAppOptions, 'env' | 'storage' | 'logger' | 'resolveHost' | 'clock'>

/**
 * The admin listener's app and the main one beside it, as the server builds them, on in-memory
 * SQLite; closed after the test `t` (or before, by its own `close()`).
 */
export async function buildAdminTestApp(t: TestContext, options: AdminTestAppOptions = {}): Promise<AdminTestApp> {
  return adminTestApp(await buildTestApp(t, options))
}

/** One admin app for every test of a describe block, as buildSuiteApp (test/helpers/app.ts) builds one. */
export function buildAdminSuiteApp(options: AdminTestAppOptions | (() => Promise<AdminTestAppOptions>) = {}): AdminTestApp {
  const shared = {} as AdminTestApp
  before(async () => {
    const service = await openTestApp(typeof options === 'function' ? await options() : options)
    shared.close = service.close
    Object.assign(shared, await adminTestApp(service))
  })
  after(() => shared.close?.())
  return shared
}

async function adminTestApp(service: TestApp): Promise<AdminTestApp> {
  const app = await service.admin()
  const { token, record } = await createAdminToken(service.storage.adminTokens, 'test token')
  return {
    app,
    api: service.app,
    domain: service.domain,
    storage: service.storage,
    clock: service.clock as ManualClock,
    config: service.config,
    token,
    tokenId: record.id,
    call: (method, url, body, headers = {}) =>
      app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body) }),
      }),
    close: service.close,
  }
}
