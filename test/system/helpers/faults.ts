/**
 * Throwaway PostgreSQL and Redis servers for the fault tests under test/system/: a test that stops,
 * kills or restarts a dependency does it to a server of its own, never to the machine's shared
 * 127.0.0.1:5432 / 127.0.0.1:6379 (those stay the default target of ordinary tests only).
 *
 *   requireThrowaway(t, 'PostgreSQL' | 'Redis')  the binaries are there? (skips loudly, fails under REQUIRE_SERVICES=1)
 *   startThrowawayRedis(t)     redis-server on a free 127.0.0.1 port, nothing persisted (--save "" --appendonly no)
 *   startThrowawayPostgres(t)  initdb into a temp dir, postgres on a free 127.0.0.1 port; database `test`, user
 *                              `postgres`, trust auth
 *
 * test/system/helpers/proxies.ts (PgBouncer, HAProxy) and test/system/helpers/redis-topologies.ts (Redis Cluster,
 * Sentinel) start their processes through `startThrowaway` below, with the same guarantees.
 *
 * Both return a ThrowawayServer: `url`, `port`, `ready()`, and `stop()` (graceful: Redis SIGTERM,
 * which saves nothing, so its data is gone; PostgreSQL SIGINT, i.e. `pg_ctl stop -m fast`), `kill()`
 * (SIGKILL to the server's whole process group: for PostgreSQL the postmaster and every backend, a
 * crash), `pause()`/`resume()` (SIGSTOP/SIGCONT: a hung server) and `start()` (again, on the same
 * port and data; resolves once it answers). Every wait is
 * bounded and fails with the server's last output.
 *
 * Each server runs in a process group of its own under its own directory in os.tmpdir(). It is
 * removed, group and directory, after the test (t.after), on the test process's exit or SIGINT/
 * SIGTERM/SIGHUP, and, should the test process die by SIGKILL, by a small shell watchdog that polls
 * for its parent every second.
 *
 * PostgreSQL refuses to run as root: as root, initdb and postgres run as the `postgres` user (the
 * spawn's uid/gid; no runuser or su needed). fsync=off only gives up durability across an operating
 * system crash, which no test provokes: a killed PostgreSQL still recovers everything it committed.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import pg from 'pg'
import { REQUIRE_SERVICES } from '../../helpers/services.js'
import { freePort, sleep } from './process.js'

const START_TIMEOUT_MS = 30_000
const STOP_TIMEOUT_MS = 20_000
/** Output kept for error messages. */
const OUTPUT_TAIL = 8_192

export interface ThrowawayServer {
  readonly port: number
  readonly url: string
  /** Its temp directory (PostgreSQL's data directory is `<dir>/data`). */
  readonly dir: string
  /** Whether the server process is running (it may not answer yet). */
  readonly running: boolean
  /** Answers PING / `SELECT 1` right now. */
  ready(): Promise<boolean>
  /** Starts it (again) on the same port and data; resolves once it answers. */
  start(): Promise<void>
  /** Graceful stop; resolves once the process has exited. */
  stop(): Promise<void>
  /** SIGKILL to the whole process group; resolves once the server has exited. */
  kill(): Promise<void>
  /** SIGSTOP / SIGCONT to the whole process group: a server that hangs, then resumes. */
  pause(): void
  resume(): void
  /** What the server wrote lately (stdout and stderr). */
  output(): string
}

// ---------------------------------------------------------------------------------------------
// Binaries.

function postgresBinDir(): string | undefined {
  const candidates: string[] = []
  if (process.env.PG_BINDIR) candidates.push(process.env.PG_BINDIR)
  try {
    const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a))
    candidates.push(...versions.map((v) => `/usr/lib/postgresql/${v}/bin`))
  } catch {
    // not the Debian layout
  }
  const fromPgConfig = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' })
  if (fromPgConfig.status === 0) candidates.push(fromPgConfig.stdout.trim())
  return candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'postgres')))
}

const PG_BIN = postgresBinDir()

export type ThrowawayKind = 'PostgreSQL' | 'Redis' | 'PgBouncer' | 'HAProxy'

const runs = (file: string, args: string[]) => spawnSync(file, args, { stdio: 'ignore' }).status === 0

function binaryMissing(kind: ThrowawayKind): string | undefined {
  if (kind === 'Redis')
    return runs('redis-server', ['--version']) && runs('redis-cli', ['--version']) ? undefined : 'redis-server is not on PATH'
  if (kind === 'HAProxy') return runs('haproxy', ['-v']) ? undefined : 'haproxy is not on PATH (apt-get install haproxy)'
  if (kind === 'PgBouncer') {
    if (!runs('pgbouncer', ['--version'])) return 'pgbouncer is not on PATH (apt-get install pgbouncer)'
    return process.getuid?.() === 0 && spawnSync('id', ['-u', 'postgres']).status !== 0
      ? 'running as root, and no `postgres` user to run PgBouncer as'
      : undefined
  }
  if (!PG_BIN) return 'no PostgreSQL server binaries (initdb, postgres) in /usr/lib/postgresql/*/bin, PG_BINDIR or pg_config --bindir'
  if (process.getuid?.() === 0 && spawnSync('id', ['-u', 'postgres']).status !== 0)
    return 'running as root, and no `postgres` user to run PostgreSQL as'
  return undefined
}

/**
 * Call at the top of a test that starts throwaway servers. A missing binary skips the test with a
 * loud message, or fails it under REQUIRE_SERVICES=1. Returns true when the test may go on.
 */
export function requireThrowaway(t: TestContext, ...kinds: ThrowawayKind[]): boolean {
  for (const kind of kinds) {
    const why = binaryMissing(kind)
    if (why === undefined) continue
    if (REQUIRE_SERVICES) throw new Error(`a throwaway ${kind} is required (REQUIRE_SERVICES=1) but ${why}`)
    process.stderr.write(`\n!!! SKIPPED: ${why} — "${t.name}" did not run !!!\n\n`)
    t.skip(why)
    return false
  }
  return true
}

/** As root, PostgreSQL's (and PgBouncer's) processes run as `postgres`; otherwise as ourselves. */
export function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim())
  return { uid, gid }
}

// ---------------------------------------------------------------------------------------------
// The safety net: every live server is destroyed when the test process goes.

const live = new Set<Throwaway>()

function destroyAllSync(): void {
  for (const server of live) server.destroySync()
}

let netInstalled = false

function installSafetyNet(): void {
  if (netInstalled) return
  netInstalled = true
  process.once('exit', destroyAllSync)
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    process.once(signal, () => {
      destroyAllSync()
      process.exit(code)
    })
  }
}

/**
 * For a parent that dies by SIGKILL: once it is gone, kill the group in `<dir>/.pgid`, free the
 * SysV segment a killed PostgreSQL leaves (its id is on line 7 of postmaster.pid), remove the dir.
 */
const WATCHDOG = `
while kill -0 "$1" 2>/dev/null; do sleep 1; done
pgid=$(cat "$2/.pgid" 2>/dev/null) && kill -s KILL -- "-$pgid" 2>/dev/null
shm=$(sed -n 7p "$2/data/postmaster.pid" 2>/dev/null | awk '{print $2}')
[ -n "$shm" ] && ipcrm -m "$shm" 2>/dev/null
rm -rf "$2"
`

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return
  try {
    process.kill(-pid, 'SIGKILL')
  } catch {
    // already gone
  }
}

// ---------------------------------------------------------------------------------------------
// One server process in a temp dir, started and stopped as often as the test likes.

export interface Launch {
  file: string
  args: string[]
  /** Added to the child's minimal environment (PATH, LC_ALL). */
  env?: Record<string, string>
  /** Graceful stop. */
  stopSignal: NodeJS.Signals
  user?: { uid: number; gid: number }
  ready(): Promise<boolean>
}

class Throwaway implements ThrowawayServer {
  private child: ChildProcess | undefined
  private exited: Promise<void> = Promise.resolve()
  private tail = ''
  private readonly watchdog: ChildProcess

  constructor(
    readonly name: string,
    readonly port: number,
    readonly url: string,
    readonly dir: string,
    private readonly launch: Launch,
  ) {
    installSafetyNet()
    live.add(this)
    this.watchdog = spawn('sh', ['-c', WATCHDOG, 'watchdog', String(process.pid), dir], { detached: true, stdio: 'ignore' })
    this.watchdog.unref()
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null
  }

  ready(): Promise<boolean> {
    return this.launch.ready()
  }

  output(): string {
    return this.tail
  }

  async start(): Promise<void> {
    if (this.running) throw new Error(`${this.name} on port ${this.port} is already running`)
    const { file, args, user } = this.launch
    const child = spawn(file, args, {
      cwd: this.dir,
      detached: true, // a group of its own: kill() reaches every backend, a terminal's Ctrl-C none
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH, LC_ALL: 'C', ...this.launch.env },
      ...user,
    })
    child.on('error', (error) => (this.tail += `\n${String(error)}`))
    if (child.pid === undefined) throw new Error(`${this.name}: could not spawn ${file}`)
    this.child = child
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()))
    void this.exited.then(() => rmSync(join(this.dir, '.pgid'), { force: true }))
    writeFileSync(join(this.dir, '.pgid'), String(child.pid))
    const keep = (chunk: Buffer) => (this.tail = (this.tail + chunk.toString('utf8')).slice(-OUTPUT_TAIL))
    child.stdout!.on('data', keep)
    child.stderr!.on('data', keep)
    const deadline = performance.now() + START_TIMEOUT_MS
    for (;;) {
      if (!this.running) throw new Error(`${this.name} on port ${this.port} exited while starting:\n${this.tail}`)
      if (await this.launch.ready()) return
      if (performance.now() > deadline) {
        await this.kill()
        throw new Error(`${this.name} on port ${this.port} did not answer within ${START_TIMEOUT_MS} ms:\n${this.tail}`)
      }
      await sleep(50)
    }
  }

  async stop(): Promise<void> {
    if (!this.running) return
    this.child!.kill(this.launch.stopSignal)
    this.resume() // a paused server could not act on the signal
    if (await this.exitedWithin(STOP_TIMEOUT_MS)) return
    await this.kill()
    throw new Error(
      `${this.name} on port ${this.port} did not stop within ${STOP_TIMEOUT_MS} ms of ${this.launch.stopSignal}; killed:\n${this.tail}`,
    )
  }

  pause(): void {
    if (this.running) process.kill(-this.child!.pid!, 'SIGSTOP')
  }

  resume(): void {
    if (this.running) process.kill(-this.child!.pid!, 'SIGCONT')
  }

  async kill(): Promise<void> {
    if (!this.running) return
    killGroup(this.child!.pid)
    if (!(await this.exitedWithin(STOP_TIMEOUT_MS))) throw new Error(`${this.name} (pid ${this.child!.pid}) survived SIGKILL`)
  }

  /** After the test: stop it (gracefully when possible) and remove everything. */
  async dispose(): Promise<void> {
    await this.stop().catch((error: unknown) => process.stderr.write(`${String(error)}\n`))
    this.destroySync()
  }

  /** Synchronous, for exit handlers: SIGKILL the group, free a killed PostgreSQL's SysV segment, remove the dir. */
  destroySync(): void {
    if (this.running) killGroup(this.child!.pid)
    freeSysvSegment(join(this.dir, 'data', 'postmaster.pid'))
    killGroup(this.watchdog.pid)
    rmSync(this.dir, { recursive: true, force: true })
    live.delete(this)
  }

  private async exitedWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)))
    const done = await Promise.race([this.exited.then(() => true), timedOut])
    clearTimeout(timer)
    return done
  }
}

/** A postmaster that stopped cleanly removed postmaster.pid; one that was killed leaves its segment behind. */
function freeSysvSegment(pidFile: string): void {
  try {
    const shmid = readFileSync(pidFile, 'utf8').split('\n')[6]?.trim().split(/\s+/)[1]
    if (shmid !== undefined && /^\d+$/.test(shmid)) spawnSync('ipcrm', ['-m', shmid], { stdio: 'ignore', timeout: 5_000 })
    unlinkSync(pidFile)
  } catch {
    // no pid file: nothing was left behind
  }
}

/**
 * Creates the server in a fresh temp dir on a free port and starts it; another port when the one
 * just found was taken meanwhile. Disposed of after the test.
 */
export async function startThrowaway(
  t: TestContext,
  name: string,
  prepare: (dir: string, port: number) => Promise<{ url: string; launch: Launch }>,
  prefix: string,
): Promise<Throwaway> {
  for (let attempt = 1; ; attempt++) {
    const dir = mkdtempSync(join(tmpdir(), prefix))
    const port = await freePort()
    let server: Throwaway | undefined
    try {
      const { url, launch } = await prepare(dir, port)
      server = new Throwaway(name, port, url, dir, launch)
      await server.start()
      t.after(() => server!.dispose())
      return server
    } catch (error) {
      if (server) await server.dispose()
      else rmSync(dir, { recursive: true, force: true })
      if (attempt < 3 && /address already in use/i.test(String(error))) continue
      throw error
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Redis.

/** One PING on a fresh connection: true on +PONG within a second. */
export function redisPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port })
    let reply = ''
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(1_000, () => done(false))
    socket.once('connect', () => socket.write('PING\r\n'))
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1')
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'))
    })
    socket.once('error', () => done(false))
  })
}

/** redis-server on a free 127.0.0.1 port, its working dir in os.tmpdir(), persisting nothing. */
export function startThrowawayRedis(t: TestContext): Promise<ThrowawayServer> {
  return startThrowaway(
    t,
    'throwaway redis-server',
    async (dir, port) => ({
      url: `redis://127.0.0.1:${port}`,
      launch: {
        file: 'redis-server',
        args: [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--dir',
          dir,
          '--save',
          '',
          '--appendonly',
          'no',
          '--daemonize',
          'no',
          '--logfile',
          '',
        ],
        stopSignal: 'SIGTERM',
        ready: () => redisPing(port),
      },
    }),
    'animal-store-redis-',
  )
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL.

export async function pgAnswers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.query('SELECT 1')
    return true
  } catch {
    return false // refused, or "the database system is starting up"
  } finally {
    await client.end().catch(() => {})
  }
}

/**
 * A PostgreSQL cluster of its own: initdb into `<tmp>/data`, postgres listening on 127.0.0.1 only
 * (socket in the temp dir), trust auth, a database `test`; the URL is postgres://postgres@…/test.
 */
export async function startThrowawayPostgres(t: TestContext): Promise<ThrowawayServer> {
  const bin = PG_BIN
  if (!bin) throw new Error(binaryMissing('PostgreSQL'))
  const user = postgresUser()
  const server = await startThrowaway(
    t,
    'throwaway PostgreSQL',
    async (dir, port) => {
      if (user) chownSync(dir, user.uid, user.gid)
      const data = join(dir, 'data')
      const initdb = spawnSync(
        join(bin, 'initdb'),
        ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync'],
        {
          cwd: dir,
          env: { PATH: process.env.PATH, LC_ALL: 'C' },
          encoding: 'utf8',
          timeout: START_TIMEOUT_MS,
          ...user,
        },
      )
      if (initdb.status !== 0) throw new Error(`initdb failed (${initdb.status ?? initdb.signal}): ${initdb.stderr}${initdb.error ?? ''}`)
      const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`
      return {
        url: `postgres://postgres@127.0.0.1:${port}/test`,
        launch: {
          file: join(bin, 'postgres'),
          args: [
            ['-D', data],
            ['-p', String(port)],
            ['-k', dir],
            ['-c', 'listen_addresses=127.0.0.1'],
            ['-c', 'fsync=off'],
            ['-c', 'full_page_writes=off'],
            ['-c', 'shared_buffers=32MB'],
            // In the data dir rather than /dev/shm: nothing outlives the temp dir, even after a kill.
            ['-c', 'dynamic_shared_memory_type=mmap'],
          ].flat(),
          stopSignal: 'SIGINT', // fast shutdown: sessions are terminated, as `pg_ctl stop -m fast`
          user,
          ready: () => pgAnswers(adminUrl),
        },
      }
    },
    'animal-store-pg-',
  )
  const admin = new pg.Client({ connectionString: server.url.replace(/\/test$/, '/postgres'), connectionTimeoutMillis: 5_000 })
  await admin.connect()
  try {
    await admin.query('CREATE DATABASE test')
  } finally {
    await admin.end()
  }
  return server
}
