import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { createAdminToken } from '../../src/admin/admin-tokens.js'
import { buildApp } from '../../src/app.js'
import { type Config, loadConfig } from '../../src/config.js'
import { banPolicy } from '../../src/limits/index.js'
import { MemoryLimiter } from '../../src/limits/memory/memory-limiter.js'
import { ManualClock } from '../../src/shared/clock.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import type { Storage } from '../../src/storage/storage.js'
import { buildAdminApp, TEST_NOW } from '../helpers/app.js'

export interface AdminTestApp {
  /** The admin listener's app (admin API, /metrics). */
  app: FastifyInstance
  /** The main listener's app (the public API), sharing storage, limiter and key service with `app`. */
  api: FastifyInstance
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

/** The admin listener's app and the main one beside it, as the server builds them, on in-memory SQLite. */
export async function buildAdminTestApp(options: { env?: Record<string, string>; storage?: Storage } = {}): Promise<AdminTestApp> {
  const config = loadConfig({ BOOTSTRAP_KEY: 'false', ...options.env })
  const clock = new ManualClock(TEST_NOW)
  const storage = options.storage ?? new SqliteStorage({ databaseUrl: ':memory:', durability: 'process' })
  const limiter = new MemoryLimiter(clock, banPolicy(config))
  const api = await buildApp({ config, storage, limiter, clock })
  await api.ready()
  const app = await buildAdminApp(api, { config, storage, limiter, clock })
  const { token, record } = await createAdminToken(storage.adminTokens, 'test token')
  return {
    app,
    api,
    storage,
    clock,
    config,
    token,
    tokenId: record.id,
    call: (method, url, body, headers = {}) =>
      app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body) }),
      }),
    close: async () => {
      await app.close()
      await api.close()
      await limiter.close()
      await storage.close()
    },
  }
}
