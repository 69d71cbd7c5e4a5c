import cluster from 'node:cluster'
import { realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import closeWithGrace from 'close-with-grace'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { addressIdentity, addressSite } from './auth/address-identity.js'
import type { Config } from './config/config.js'
import { type ConfigSource, loadConfiguration, takeConfigFileOption } from './config/config-file.js'
import { shareConnections, trustedPeer } from './http/connection-share.js'
import { createFirstKey } from './keys/key-service.js'
import { adminBannerLine, cliCommand, configurationLines, firstKeyBanner, listeningBanner, reachableOrigin } from './lifecycle/banner.js'
import type { Listening } from './lifecycle/cluster.js'
import { createLimiter } from './limits/index.js'
import type { RateLimiter } from './limits/limiter.js'
import { createLogger } from './ops/logger.js'
import { Metrics } from './ops/metrics.js'
import { buildService } from './service.js'
import { systemClock } from './shared/clock.js'
import { Drain } from './shared/drain.js'
import { ConfigError, redactUrl, StartupError, startFailureLine } from './shared/startup-error.js'
import { lockStorage, openStorage } from './storage/index.js'

/**
 * The longest a start may take before the process gives up with one line and status 2. Above the
 * slowest legitimate wait (another instance holding the PostgreSQL migration lock: up to 60 s);
 * every step also has its own, shorter, timeout: this is the safety net behind them.
 */
const STARTUP_DEADLINE_MS = 90_000

/** A server that is up. */
export interface RunningServer {
  /**
   * Stops it as SIGTERM does but without the drain (nothing is left to take it out of a load
   * balancer first): no new connections, in-flight requests finished, batches written, the lock
   * released, exit. `why` is logged first. Does nothing once a stop is under way.
   */
  stop(why: string): void
}

/**
 * Starts one server process: storage (migrated), its lock, limiter, the service (service.ts), listen; closes all on SIGTERM/SIGINT.
 * A start that fails rejects with a StartupError (or ConfigError) after closing what it opened.
 * `source` (where the configuration came from) makes the CLI commands it prints act on the same.
 */
export async function startServer(config: Config, source: ConfigSource): Promise<RunningServer> {
  const log = createLogger(config)
  const cli = cliCommand(source)
  let phase = `opening the database (DATABASE_URL=${redactUrl(config.databaseUrl)})`
  const deadline = setTimeout(() => {
    // A stuck step holds the event loop's attention forever: there is nothing left to close cleanly.
    process.stderr.write(`animal-store: cannot start: start-up did not finish within ${STARTUP_DEADLINE_MS / 1000} s, stuck ${phase}\n`)
    process.exit(2)
  }, STARTUP_DEADLINE_MS)
  const opened: Array<{ close(): Promise<unknown> }> = []
  let graceful: { close(): void; uninstall(): void } | undefined
  let stopping = false
  let stopReason: string | undefined
  let firstKey: string | undefined
  try {
    const storage = await openStorage(config)
    opened.push(storage)
    // Before the limiter, which reads (and at close writes) the file's limiter state. A worker of
    // `serve --workers` runs under its primary's lock.
    phase = 'locking the database'
    const lock = cluster.isWorker ? undefined : await lockStorage(config, cli)
    if (lock !== undefined) opened.push(lock)
    phase = config.redisUrl === undefined ? 'creating the rate limiter' : `connecting to Redis (REDIS_URL=${redactUrl(config.redisUrl)})`
    const metrics = new Metrics()
    const limiter = await createLimiter(config, systemClock, metrics, log)
    opened.push(limiter)

    phase = 'creating the first key'
    const first = config.bootstrapKey ? await createFirstKey(storage.keys, config.env) : undefined
    // Printed once, to the terminal only (never through the logger): it is a secret. Last, after
    // the listening banner, so that no log line stands between it and the prompt (issue 32: the
    // start-up lines scrolled it away); a start that fails after creating it prints it with the
    // failure (catch below), since no later start creates another.
    if (first) firstKey = firstKeyBanner(first.key, first.record, reachableOrigin(config.host, config.port), cli)

    phase = 'building the app'
    const drain = new Drain()
    const service = await buildService(config, { storage, limiter, metrics, logger: log, drain })
    // The service closes the limiter and storage from here on; the lock is released after them.
    opened.splice(0, opened.length, ...(lock === undefined ? [] : [lock]), service)
    const { app } = service
    limitConnections(app, config, 'main', metrics)
    // The admin listener (admin API and /metrics; ADMIN_PORT=off: none).
    const adminApp = config.adminPort === undefined ? undefined : await service.admin()
    if (adminApp !== undefined) limitConnections(adminApp, config, 'admin', metrics)

    // The drain, then up to 10 s for the requests in flight.
    graceful = closeWithGrace({ delay: config.shutdownDrainMs + 10_000, logger: log }, async ({ signal, err }) => {
      stopping = true
      if (err) log.error({ err }, 'closing after an error')
      else if (stopReason !== undefined) log.warn(`${stopReason}: shutting down without the drain, finishing in-flight requests`)
      else {
        if (config.shutdownDrainMs > 0) {
          log.info({ signal, drainMs: config.shutdownDrainMs }, 'draining: /readyz answers 503, still serving every request')
          await drain.start(config.shutdownDrainMs)
        }
        log.info({ signal }, 'shutting down: no new connections, finishing in-flight requests')
      }
      await service.close()
      await lock?.close()
      await new Promise<void>((resolve) => log.flush(() => resolve()))
    })

    phase = `listening (PORT=${config.port} HOST=${config.host})`
    await listen(app, { PORT: config.port, HOST: config.host })
    if (adminApp !== undefined) {
      phase = `listening (ADMIN_PORT=${config.adminPort} ADMIN_HOST=${config.adminHost})`
      await listen(adminApp, { ADMIN_PORT: config.adminPort!, ADMIN_HOST: config.adminHost })
    }
    const listening: Listening = { main: bound(app), admin: adminApp === undefined ? undefined : bound(adminApp) }
    // In a cluster the primary prints the banner once, for all workers (lifecycle/cluster.ts). The log's
    // start-up lines are written out first, so that on a shared stdout the banner ends the start.
    if (cluster.isWorker) {
      await flushed(log)
      process.send?.({ animalStore: 'listening', listening }, undefined, undefined, () => {})
    } else {
      const { address, port } = listening.main
      const notes = [
        adminBannerLine(listening.admin, cli),
        ...configurationLines(config, source),
        ...(await degradedNotes(config, limiter)),
      ]
      await flushed(log)
      process.stdout.write(listeningBanner(address, port, config.host, notes, cli) + (firstKey ?? ''))
    }
    const running = graceful
    return {
      stop: (why) => {
        if (stopping) return
        stopReason = why
        running.close()
      },
    }
  } catch (error) {
    graceful?.uninstall()
    for (const resource of opened.reverse()) await resource.close().catch(() => {})
    await flushed(log)
    if (firstKey !== undefined) process.stdout.write(firstKey)
    throw error
  } finally {
    clearTimeout(deadline)
  }
}

/** Resolves once the log's buffered lines are written (or after 1 s: a log that cannot keep up must not hold the start). */
function flushed(log: Logger): Promise<void> {
  return new Promise<void>((resolve) => {
    setTimeout(resolve, 1000).unref()
    try {
      log.flush(() => resolve())
    } catch {
      resolve() // the log file is not even open yet: nothing was written to it
    }
  })
}

/** The limits of a listener's connections (docs/limits.md): the admin listener has a budget of its own. */
function limitConnections(app: FastifyInstance, config: Config, listener: 'main' | 'admin', metrics: Metrics): void {
  app.server.headersTimeout = config.headersTimeoutMs
  app.server.maxHeadersCount = 100
  shareConnections(app.server, {
    perClient: config.maxConnectionsPerAddress,
    // Not Node's maxConnections, which would close a new connection before the share could make room for it.
    capacity: listener === 'main' ? config.maxConnections : config.adminMaxConnections,
    // One client per address, per /64 for IPv6: the client the limiter counts.
    clientOf: addressIdentity,
    siteOf: addressSite,
    // A trusted proxy carries many clients' connections (and limits each of them itself); the
    // admin listener trusts no proxy (app.ts).
    exempt: listener === 'main' ? trustedPeer(config.trustProxy) : () => false,
    onRefused: (reason) => metrics.connectionsRefused.inc({ listener, reason }),
    onEvicted: () => metrics.connectionsEvicted.inc({ listener }),
  })
}

/** Listens where `vars` say (port then host: PORT/HOST or ADMIN_PORT/ADMIN_HOST, named in the failure line). */
async function listen(app: FastifyInstance, vars: Record<string, string | number>): Promise<void> {
  const [port, host] = Object.values(vars) as [number, string]
  try {
    await app.listen({ port, host })
  } catch (error) {
    const code = String((error as { code?: unknown }).code)
    const where = `${host.includes(':') ? `[${host}]` : host}:${port}`
    const causes: Record<string, string> = {
      EADDRINUSE: `address already in use: another process listens on ${where}`,
      EACCES: `permission denied to listen on ${where}: ports below 1024 need privileges`,
      EADDRNOTAVAIL: `${host} is not an address of this machine`,
      ENOTFOUND: `the host name ${host} cannot be resolved`,
      EAI_AGAIN: `the host name ${host} cannot be resolved`,
    }
    const cause = causes[code] === undefined ? `cannot listen on ${where}: ${(error as Error).message}` : `${causes[code]} (${code})`
    throw new StartupError(vars, cause)
  }
}

/** The address and port the server is bound to (the port differs from PORT when PORT is 0). */
function bound(app: FastifyInstance): { address: string; port: number } {
  const address = app.server.address()
  return typeof address === 'object' && address !== null ? address : { address: '', port: 0 }
}

/** A dependency that is down at start is said on the terminal too, not only in the log. */
async function degradedNotes(config: Config, limiter: RateLimiter): Promise<string[]> {
  if (config.redisUrl === undefined) return []
  const up = await limiter.ping().then(
    () => true,
    () => false,
  )
  if (up) return []
  const effect = config.redisFailurePolicy === 'open' ? 'rate limits are per instance until it returns' : 'answering 503 until it returns'
  return [`Degraded:    Redis unreachable at ${redactUrl(config.redisUrl)}; ${effect} (REDIS_FAILURE_POLICY=${config.redisFailurePolicy})`]
}

/** Run as the entry script (node dist/server.js), also through a symlink or from a path with spaces. */
function isEntryScript(): boolean {
  const entry = process.argv[1]
  if (entry === undefined) return false
  try {
    return realpathSync(entry) === fileURLToPath(import.meta.url)
  } catch {
    return false
  }
}

/**
 * A server started with an IPC channel (by `npm start`, bin/npm-start.mjs) stops when the channel
 * closes: the kernel closes it when the launcher ends, however it ends (SIGKILL, the OOM killer),
 * and a server that outlived it would keep the port and the SQLite lock with nobody to stop it.
 * Before the server is up, the process just ends. Without a channel (`node dist/server.js`, a
 * supervisor) there is no launcher to outlive.
 */
function stopWithLauncher(server: () => RunningServer | undefined): void {
  if (process.channel === undefined) return
  const launcher = process.ppid
  process.once('disconnect', () => {
    const why = `its launcher (pid ${launcher}) is gone`
    const running = server()
    if (running !== undefined) running.stop(why)
    else {
      process.stderr.write(`animal-store: start-up abandoned: ${why}\n`)
      process.exit(1)
    }
  })
}

if (isEntryScript()) {
  let running: RunningServer | undefined
  stopWithLauncher(() => running)
  try {
    const { configFile, args } = takeConfigFileOption(process.argv.slice(2))
    if (args.length > 0) throw new ConfigError(`unknown argument ${JSON.stringify(args[0])}: the server takes only --config-file FILE`)
    const { config, source } = loadConfiguration({ configFile })
    running = await startServer(config, source)
  } catch (error) {
    process.stderr.write(startFailureLine(error) + '\n')
    process.exit(2)
  }
}
