import type { FastifyInstance } from 'fastify'
import { type AppDependencies, buildApp } from '../../src/app.js'
import { type Config, loadConfig } from '../../src/config.js'
import type { CreateKeyInput } from '../../src/keys/key-service.js'
import { banPolicy } from '../../src/limits/index.js'
import type { RateLimiter } from '../../src/limits/limiter.js'
import { MemoryLimiter } from '../../src/limits/memory/memory-limiter.js'
import { type Clock, ManualClock } from '../../src/shared/clock.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import type { Storage } from '../../src/storage/storage.js'
import { createApiKey } from './keys.js'

// One implementation, shared with the process tests, the benchmark and the soak.
export { bearer } from '../../bench/lib/http.mjs'

export interface TestApp {
  app: FastifyInstance
  storage: Storage
  limiter: RateLimiter
  clock: Clock
  config: Config
  /**
   * The admin listener's app (admin API, /metrics), built on first use from the same storage,
   * limiter, clock and metrics, calling this app's key service, as the server builds it.
   */
  admin(): Promise<FastifyInstance>
  /** Creates a key in storage and returns the plain key. */
  key(input?: Partial<CreateKeyInput>): Promise<string>
  close(): Promise<void>
}

/** 2026-11-21T12:00:30Z: mid-minute, mid-day, well before the sunset. */
export const TEST_NOW = Date.UTC(2026, 10, 21, 12, 0, 30)

/**
 * Builds the app for app.inject tests: in-memory SQLite and limiter and a manual clock unless
 * given others. Config starts from the defaults of an empty environment, overridden by `env`. No
 * logging unless given a `logger`.
 */
export async function buildTestApp(
  options: {
    env?: Record<string, string>
    clock?: Clock
    storage?: Storage
    limiter?: RateLimiter
    logger?: AppDependencies['logger']
  } = {},
): Promise<TestApp> {
  const config = loadConfig({ BOOTSTRAP_KEY: 'false', ...options.env })
  const clock = options.clock ?? new ManualClock(TEST_NOW)
  const storage = options.storage ?? new SqliteStorage({ databaseUrl: ':memory:', durability: 'process' })
  const limiter = options.limiter ?? new MemoryLimiter(clock, banPolicy(config))
  const app = await buildApp({ config, storage, limiter, clock, logger: options.logger })
  await app.ready()
  let admin: Promise<FastifyInstance> | undefined
  return {
    app,
    storage,
    limiter,
    clock,
    config,
    admin: () => {
      admin ??= buildAdminApp(app, { config, storage, limiter, clock })
      return admin
    },
    key: async (input = {}) => (await createApiKey(storage.keys, { plan: 'free', name: 'test', ...input }, config.env)).key,
    close: async () => {
      await (await admin)?.close()
      await app.close()
      await limiter.close()
      await storage.close()
    },
  }
}

/** The admin listener's app beside `main`, sharing its dependencies (as server.ts builds it). */
export async function buildAdminApp(
  main: FastifyInstance,
  deps: { config: Config; storage: Storage; limiter: RateLimiter; clock: Clock },
): Promise<FastifyInstance> {
  const admin = await buildApp({ ...deps, metrics: main.metrics, listener: 'admin', keyAdmin: main.keyService })
  await admin.ready()
  return admin
}
