import cluster from 'node:cluster'
import { ConfigError, type Config } from './config.js'

/**
 * `serve --workers N`: N server processes on one machine sharing the port (node:cluster). They
 * share nothing but the database and Redis, so N > 1 needs REDIS_URL: N in-memory limiters would
 * each allow the full quota. A worker that dies is replaced; SIGTERM/SIGINT drain all workers.
 */
export async function startCluster(config: Config, workers: number): Promise<void> {
  if (config.redisUrl === undefined) {
    throw new ConfigError(
      `--workers ${workers} needs a shared rate-limit store: set REDIS_URL (each worker's in-memory limiter would allow the whole quota)`,
    )
  }
  if (cluster.isWorker) {
    const { startServer } = await import('./server.js')
    await startServer({ ...config, bootstrapKey: false })
    return
  }
  if (config.bootstrapKey) {
    // The first-key bootstrap runs once, here, not in N racing workers.
    const { openStorage } = await import('./storage/index.js')
    const { createFirstKey } = await import('./keys/key-service.js')
    const storage = await openStorage(config)
    try {
      const first = await createFirstKey(storage.keys, config.env)
      if (first) process.stdout.write(`\nNo API key existed, so one Free key was created. It is shown only this once:\n\n  ${first.key}\n\n`)
    } finally {
      await storage.close()
    }
  }
  let stopping = false
  const fork = () => cluster.fork()
  for (let i = 0; i < workers; i++) fork()
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return
    process.stderr.write(`animal-store: worker ${worker.process.pid} exited (${signal ?? code}); starting a new one\n`)
    setTimeout(fork, 500).unref()
  })
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return
    stopping = true
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal)
    const deadline = setTimeout(() => process.exit(1), 15_000)
    deadline.unref()
    cluster.on('exit', () => {
      // A worker leaves cluster.workers on the later of its 'exit' and 'disconnect', so at its
      // 'exit' it (and others) may still be listed though dead: count only the live ones.
      if (Object.values(cluster.workers ?? {}).every((worker) => worker === undefined || worker.isDead())) process.exit(0)
    })
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
}
