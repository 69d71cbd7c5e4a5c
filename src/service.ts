import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.js'
import type { Config } from './config/config.js'
import { buildDomain, type Domain, type DomainOverrides } from './domain.js'
import type { Drain } from './shared/drain.js'

/** What a caller may hand in instead of what `config` says (a test's clock, an in-memory store, a logger), and the server's drain. */
export interface ServiceOverrides extends DomainOverrides {
  drain?: Drain
}

/** A ready service: its domain, its jobs started, and both listeners' apps over it, not listening. */
export interface Service {
  /** Built once (domain.ts): both apps read their caches, services and limiter from it. */
  domain: Domain
  /** The main listener's app (the public API, its docs, health). */
  app: FastifyInstance
  /** The admin listener's app (admin API, /metrics), built on first call over the same domain. */
  admin(): Promise<FastifyInstance>
  /** Closes the apps (in-flight requests finish), then the domain: jobs (their last batches), limiter, storage. */
  close(): Promise<void>
}

/**
 * The composition root of the server: the domain (domain.ts), the main app over it, ready, then
 * the domain's background jobs started, once, whichever listeners the process has. What it is
 * given it closes too, once it has returned; a build that fails closes only what it opened itself.
 */
export async function buildService(config: Config, overrides: ServiceOverrides = {}): Promise<Service> {
  const { drain } = overrides
  const domain = await buildDomain(config, overrides)
  let app: FastifyInstance | undefined
  try {
    app = await buildApp(domain, { listener: 'main', drain })
    await app.ready()
    await domain.jobs.daemon.start()
  } catch (error) {
    await app?.close().catch(() => {})
    await domain.discard()
    throw error
  }
  const main = app
  let admin: Promise<FastifyInstance> | undefined
  const buildAdmin = async () => {
    const adminApp = await buildApp(domain, { listener: 'admin', drain })
    try {
      await adminApp.ready()
    } catch (error) {
      await adminApp.close().catch(() => {})
      throw error
    }
    return adminApp
  }
  return {
    domain,
    app: main,
    admin: () => {
      admin ??= buildAdmin()
      return admin
    },
    close: async () => {
      const adminApp = await admin?.catch(() => undefined)
      await Promise.all([main.close(), adminApp?.close()])
      await domain.close()
    },
  }
}
