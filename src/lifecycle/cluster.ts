import cluster from 'node:cluster'
import type { Config } from '../config/config.js'
import type { ConfigSource } from '../config/config-file.js'
import { ConfigError } from '../shared/startup-error.js'
import { adminBannerLine, cliCommand, configurationLines, firstKeyBanner, listeningBanner, reachableOrigin } from './banner.js'
import { heapBoundFlags } from './heap-bound.js'

/** Where a process's listeners are bound: what a worker tells the primary of a cluster for its banner. */
export interface Listening {
  main: { address: string; port: number }
  admin: { address: string; port: number } | undefined
}

/**
 * `serve --workers N`: N server processes on one machine sharing the port (node:cluster). They
 * share nothing but the database and Redis, so N > 1 needs REDIS_URL: N in-memory limiters would
 * each allow the full quota. A worker that dies is replaced; SIGTERM/SIGINT drain all workers.
 * A worker runs `startServer` (the server's own start, handed in by the command line: the
 * lifecycle does not import the entry points).
 */
export async function startCluster(
  config: Config,
  workers: number,
  source: ConfigSource,
  startServer: (config: Config, source: ConfigSource) => Promise<unknown>,
): Promise<void> {
  if (config.redisUrl === undefined) {
    throw new ConfigError(
      `--workers ${workers} needs a shared rate-limit store: set REDIS_URL (each worker's in-memory limiter would allow the whole quota)`,
    )
  }
  if (cluster.isWorker) {
    try {
      await startServer({ ...config, bootstrapKey: false }, source)
    } catch (error) {
      // The IPC channel would keep a failed worker alive, idle, forever: exit, so the primary
      // starts another one (with backoff) and the service comes up once the database does.
      process.stderr.write(`animal-store: worker failed to start: ${error instanceof Error ? error.message : String(error)}\n`)
      process.exit(1)
    }
    // A signal sent to the whole process group (Ctrl-C in a terminal, systemd's default
    // KillMode=control-group) reaches every worker directly. Say so, so that the primary does not
    // send a second one: a second signal makes a draining worker exit at once (close-with-grace).
    // Added after startServer, so a signal during start-up is never swallowed by this listener.
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      // With a callback, a closed IPC channel is reported to it rather than thrown as an 'error'.
      process.on(signal, () => process.connected && process.send?.({ animalStore: 'stopping' }, undefined, undefined, () => {}))
    }
    return
  }
  // The primary holds the SQLite file's lock for its workers (none on PostgreSQL): no second
  // server or cluster starts on the file. Held until the process ends (the exit handler also keeps
  // it referenced: a lock that is garbage-collected is released).
  const { lockStorage } = await import('../storage/index.js')
  const lock = await lockStorage(config, cliCommand(source))
  process.once('exit', () => void lock?.close())
  let firstKey: string | undefined
  const showFirstKey = () => {
    if (firstKey !== undefined) process.stdout.write(firstKey)
    firstKey = undefined
  }
  if (config.bootstrapKey) {
    // The first-key bootstrap runs once, here, not in N racing workers.
    const { openStorage } = await import('../storage/index.js')
    const { createFirstKey } = await import('../keys/key-service.js')
    const storage = await openStorage(config)
    try {
      const first = await createFirstKey(storage.keys, config.env)
      // Shown after the listening banner, as by a single server (server.ts), or at a stop before any
      // worker listened: it is shown once, and no later start makes another.
      if (first) firstKey = firstKeyBanner(first.key, first.record, reachableOrigin(config.host, config.port), cliCommand(source))
    } finally {
      await storage.close()
    }
  }
  // Each worker with the heap bound (a process's heap is sized when it starts); after the primary's
  // own flags (tsx's loader in development), so that MAX_HEAP_MB wins over one of them.
  cluster.setupPrimary({ execArgv: [...process.execArgv, ...heapBoundFlags(config.maxHeapMb)] })
  let stopping = false
  const startedAt = new Map<number, number>()
  // A replacement scheduled just before a stop must not start during it.
  const fork = () => {
    if (!stopping) startedAt.set(cluster.fork().id, Date.now())
  }
  for (let i = 0; i < workers; i++) fork()
  // The first worker to listen on every listener says where (all workers share the same ports).
  let announced = false
  cluster.on('message', (_worker, message: { animalStore?: unknown; listening?: Listening } | null) => {
    if (announced || message?.animalStore !== 'listening' || message.listening === undefined) return
    announced = true
    const { main, admin } = message.listening
    const cli = cliCommand(source)
    const notes = [`Workers:     ${workers}`, adminBannerLine(admin, cli), ...configurationLines(config, source)]
    process.stdout.write(listeningBanner(main.address, main.port, config.host, notes, cli))
    showFirstKey()
  })
  // Workers that die soon after starting (database unreachable, ...) are replaced with exponential
  // backoff rather than every 0.5 s; one that ran for a while resets it.
  let quickExits = 0
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return
    const lived = Date.now() - (startedAt.get(worker.id) ?? 0)
    startedAt.delete(worker.id)
    quickExits = lived < 30_000 ? quickExits + 1 : 0
    const delay = Math.min(500 * 2 ** Math.max(0, quickExits - 1), 10_000)
    process.stderr.write(`animal-store: worker ${worker.process.pid} exited (${signal ?? code}); starting a new one in ${delay} ms\n`)
    // Not unref'd: when every worker is down, this timer is what keeps the primary alive.
    setTimeout(fork, delay)
  })
  // Workers that received the stop signal themselves (from the process group).
  const signalled = new Set<number>()
  cluster.on('message', (worker, message: unknown) => {
    if ((message as { animalStore?: unknown } | null)?.animalStore === 'stopping') signalled.add(worker.id)
  })
  // A worker leaves cluster.workers on the later of its 'exit' and 'disconnect', so at its 'exit'
  // it (and others) may still be listed though dead: count only the live ones.
  const exitIfAllDead = () => {
    if (Object.values(cluster.workers ?? {}).every((worker) => worker === undefined || worker.isDead())) process.exit(0)
  }
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return
    showFirstKey()
    stopping = true
    const deadline = setTimeout(() => process.exit(1), 15_000)
    deadline.unref()
    cluster.on('exit', exitIfAllDead)
    // Workers hit by the same process-group signal report it within milliseconds; the others
    // (the signal was sent to the primary alone, as Kubernetes and `kill PID` do) get it now.
    setTimeout(() => {
      for (const worker of Object.values(cluster.workers ?? {})) {
        if (worker !== undefined && !worker.isDead() && !signalled.has(worker.id)) worker.process.kill(signal)
      }
      exitIfAllDead()
    }, 200)
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
}
