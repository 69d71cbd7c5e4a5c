import { after, before, type TestContext } from 'node:test'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { type Config, loadConfig } from '../../src/config/config.js'
import type { Domain } from '../../src/domain.js'
import type { CreateKeyInput } from '../../src/keys/key-service.js'
import type { RateLimiter } from '../../src/limits/limiter.js'
import type { Metrics } from '../../src/ops/metrics.js'
import { buildService } from '../../src/service.js'
import { type Clock, ManualClock } from '../../src/shared/clock.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import type { Storage } from '../../src/storage/storage.js'
import type { HostResolver } from '../../src/webhooks/destination.js'
import { REDIS_KEY_PREFIX } from '../../tools/service-env.mjs'
import { createApiKey } from './keys.js'

// One implementation, shared with the process tests, the benchmark and the soak.
export { bearer } from '../../tools/http.mjs'

export interface TestApp {
  app: FastifyInstance
  /**
   * The service's one domain (src/domain.ts), under both apps: its services (`domain.services.keys`),
   * its key cache (`domain.keyResolver.refresh()` rather than wait for a poll), its recorders and jobs.
   */
  domain: Domain
  storage: Storage
  limiter: RateLimiter
  clock: Clock
  config: Config
  metrics: Metrics
  /**
   * The admin listener's app (admin API, /metrics), built on first use over the same domain, as
   * the server builds it.
   */
  admin(): Promise<FastifyInstance>
  /** Creates a key in storage and returns the plain key. */
  key(input?: Partial<CreateKeyInput>): Promise<string>
  close(): Promise<void>
}

/** 2026-11-21T12:00:30Z: mid-minute, mid-day, well before the sunset. */
export const TEST_NOW = Date.UTC(2026, 10, 21, 12, 0, 30)

export interface TestAppOptions {
  env?: Record<string, string>
  clock?: Clock
  storage?: Storage
  limiter?: RateLimiter
  logger?: FastifyBaseLogger
  /** How webhook endpoints' host names resolve (default: the system's resolver). */
  resolveHost?: HostResolver
}

/**
 * Builds the service for app.inject tests, as the server does (buildService): in-memory SQLite
 * (whose orders' holds the app's clock judges, as on a server) and limiter and a manual clock
 * unless given others. Config starts from the defaults of an empty
 * environment, overridden by `env`. No logging unless given a `logger`. Closed after the test `t`
 * (or before, by its own `close()`: it closes once).
 */
export async function buildTestApp(t: TestContext, options: TestAppOptions = {}): Promise<TestApp> {
  const built = await openTestApp(options)
  t.after(() => built.close())
  return built
}

/**
 * One app for every test of a describe block: built before its first test, closed after its last.
 * Call it in the block, before the hooks that use it, never at a file's top level (Node 20 runs a
 * file's top-level before hooks at once, not one after the other). The object is filled in when
 * the block starts; `options` may be a function, for what must be opened first (a store).
 */
export function buildSuiteApp(options: TestAppOptions | (() => Promise<TestAppOptions>) = {}): TestApp {
  const shared = {} as TestApp
  before(async () => Object.assign(shared, await openTestApp(typeof options === 'function' ? await options() : options)))
  after(() => shared.close?.())
  return shared
}

/** The app of buildTestApp, for a harness that closes it itself (test/fuzz/server.ts). */
export async function openTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const config = testConfig(options.env)
  const given = options.clock ?? new ManualClock(TEST_NOW)
  const { app, domain, admin, close } = await buildService(config, {
    clock: given,
    storage: options.storage ?? memoryStorage(given),
    limiter: options.limiter,
    logger: options.logger,
    resolveHost: options.resolveHost,
  })
  const { storage, limiter, clock, metrics } = domain
  return {
    app,
    domain,
    storage,
    limiter,
    clock,
    config,
    metrics,
    admin,
    key: async (input = {}) => (await createApiKey(storage.keys, { plan: 'free', name: 'test', ...input }, config.env)).key,
    close: once(close),
  }
}

/** `close`, run on the first call only; later calls wait for it. */
function once(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined
  return () => (closing ??= close())
}

/**
 * The configuration of an empty environment (no first key, no limiter state file, no webhook
 * delivery: a test's endpoints point at public addresses, which a test must never call; the tests
 * of delivery set WEBHOOK_DELIVERY=on), overridden by `env`. Without LIMITER_STATE_FILE=off the
 * default DATABASE_URL would put one in the checkout's data/ directory, where every test app's
 * close saved its windows and the next test app of any file loaded them: 127.0.0.1 ran out of its
 * anonymous quota across files. With REDIS_URL, this process's own key prefix keeps the shared
 * Redis's counters of 127.0.0.1 from being every file's (tools/service-env.mjs).
 */
export const testConfig = (env: Record<string, string> = {}): Config =>
  loadConfig({ BOOTSTRAP_KEY: 'false', LIMITER_STATE_FILE: 'off', REDIS_KEY_PREFIX, WEBHOOK_DELIVERY: 'off', ...env })

/** A fresh in-memory SQLite store; `holdClock` judges its orders' holds (else the system's clock). */
export const memoryStorage = (holdClock?: Clock): Storage =>
  new SqliteStorage({ databaseUrl: ':memory:', durability: 'process', holdClock })
