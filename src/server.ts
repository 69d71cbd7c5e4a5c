import closeWithGrace from 'close-with-grace'
import { realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { buildApp } from './app.js'
import { systemClock } from './clock.js'
import { ConfigError, loadConfig, type Config } from './config.js'
import { createFirstKey } from './keys/key-service.js'
import { createLimiter } from './limits/index.js'
import { createLogger } from './logger.js'
import { Metrics } from './ops/metrics.js'
import { openStorage } from './storage/index.js'

/** Starts one server process: storage (migrated), limiter, app, listen; closes all on SIGTERM/SIGINT. */
export async function startServer(config: Config): Promise<void> {
  const log = createLogger(config)
  const metrics = new Metrics()
  const storage = await openStorage(config)
  const limiter = await createLimiter(config, systemClock, metrics, log)

  if (config.bootstrapKey) {
    const first = await createFirstKey(storage.keys, config.env)
    if (first) {
      // Printed once, to the terminal only (never through the logger): it is a secret.
      process.stdout.write(
        `\nNo API key existed, so one Free key was created. It is shown only this once:\n\n  ${first.key}\n\n` +
          `Try: curl -H "Authorization: Bearer ${first.key}" ${config.publicBaseUrl ?? `http://localhost:${config.port}`}/v1/pets\n\n`,
      )
    }
  }

  const app = await buildApp({ config, storage, limiter, metrics, logger: log })
  app.server.headersTimeout = config.headersTimeoutMs
  app.server.maxHeadersCount = 100
  app.server.maxConnections = config.maxConnections

  closeWithGrace({ delay: 10_000, logger: log }, async ({ signal, err }) => {
    if (err) log.error({ err }, 'closing after an error')
    else log.info({ signal }, 'shutting down: no new connections, finishing in-flight requests')
    await app.close()
    await limiter.close()
    await storage.close()
    await new Promise<void>((resolve) => log.flush(() => resolve()))
  })

  await app.listen({ port: config.port, host: config.host })
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

const isEntry = isEntryScript()
if (isEntry) {
  let config: Config
  try {
    config = loadConfig()
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`animal-store: configuration error: ${error.message}\n`)
      process.exit(2)
    }
    throw error
  }
  startServer(config).catch((error: unknown) => {
    process.stderr.write(`animal-store: failed to start: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exit(1)
  })
}
