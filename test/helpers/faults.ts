/**
 * Helpers for the fault-injection tests (test/faults/): stopping and starting the machine's real
 * PostgreSQL and Redis, politely (after waiting for other users of them to finish), and making
 * sure both are running again whatever happens to the test: a finally block, `t.after`, and a
 * synchronous process 'exit' / signal handler as the last resort.
 *
 * Only 127.0.0.1 is ever touched, and only with the services' own commands:
 *   PostgreSQL: pg_ctlcluster --skip-systemctl-redirect <version> main stop -m fast | start
 *   Redis:      redis-cli -h 127.0.0.1 -p 6379 shutdown nosave | redis-server --daemonize yes ...
 */
import { execFile, execFileSync } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import type { TestContext } from 'node:test'
import { sleep } from './process.js'
import { REQUIRE_SERVICES } from './services.js'

// ---------------------------------------------------------------------------------------------
// Commands.

const PG_VERSION = (() => {
  try {
    return readdirSync('/etc/postgresql').sort().at(-1) ?? '15'
  } catch {
    return '15'
  }
})()

const PG_CTL = ['--skip-systemctl-redirect', PG_VERSION, 'main'] as const
const REDIS_START = ['--daemonize', 'yes', '--bind', '127.0.0.1', '--port', '6379', '--save', '', '--appendonly', 'no'] as const

interface Run {
  code: number
  stdout: string
  stderr: string
}

function run(file: string, args: readonly string[], timeoutMs = 30_000): Promise<Run> {
  return new Promise((resolve) => {
    execFile(file, [...args], { timeout: timeoutMs, encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof (error as { code?: unknown }).code === 'number' ? ((error as { code: number }).code) : 1
      resolve({ code, stdout: String(stdout), stderr: String(stderr) })
    })
  })
}

function runSync(file: string, args: readonly string[], timeoutMs = 30_000): boolean {
  try {
    execFileSync(file, [...args], { timeout: timeoutMs, stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** `pg_isready -h 127.0.0.1` exits 0. */
export async function pgReady(): Promise<boolean> {
  return (await run('pg_isready', ['-h', '127.0.0.1', '-p', '5432', '-t', '1'], 5_000)).code === 0
}

/** `redis-cli ping` answers PONG. */
export async function redisPong(): Promise<boolean> {
  const r = await run('redis-cli', ['-h', '127.0.0.1', '-p', '6379', 'ping'], 5_000)
  return r.code === 0 && r.stdout.trim() === 'PONG'
}

function pgReadySync(): boolean {
  return runSync('pg_isready', ['-h', '127.0.0.1', '-p', '5432', '-t', '1'], 5_000)
}

function redisPongSync(): boolean {
  try {
    return execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', '6379', 'ping'], { timeout: 5_000, encoding: 'utf8' }).trim() === 'PONG'
  } catch {
    return false
  }
}

/** Stops PostgreSQL (fast mode: open sessions are terminated) and waits until it refuses. */
export async function stopPostgres(): Promise<void> {
  const r = await run('pg_ctlcluster', [...PG_CTL, 'stop', '-m', 'fast'], 60_000)
  if (r.code !== 0 && (await pgReady())) throw new Error(`pg_ctlcluster stop failed (${r.code}): ${r.stderr}`)
}

/** Starts PostgreSQL (pg_ctlcluster waits for it to accept connections). */
export async function startPostgres(): Promise<void> {
  if (await pgReady()) return
  const r = await run('pg_ctlcluster', [...PG_CTL, 'start'], 60_000)
  if (r.code !== 0 && !(await pgReady())) throw new Error(`pg_ctlcluster start failed (${r.code}): ${r.stderr}`)
}

/** Stops Redis without saving (its data is gone afterwards: the limiter's counts start afresh). */
export async function stopRedis(): Promise<void> {
  await run('redis-cli', ['-h', '127.0.0.1', '-p', '6379', 'shutdown', 'nosave'], 10_000)
  for (let i = 0; i < 100 && (await redisPong()); i++) await sleep(50)
  if (await redisPong()) throw new Error('redis still answers after shutdown nosave')
}

/** Starts Redis (daemonized) and waits for PONG. */
export async function startRedis(): Promise<void> {
  if (await redisPong()) return
  await run('redis-server', REDIS_START, 10_000)
  for (let i = 0; i < 200 && !(await redisPong()); i++) await sleep(25)
  if (!(await redisPong())) throw new Error('redis-server did not answer PING after start')
}

/** Starts whichever of PostgreSQL and Redis is not running; never throws. */
export async function ensureServicesRunning(): Promise<void> {
  await startPostgres().catch((error: unknown) => process.stderr.write(`!!! could not restart PostgreSQL: ${String(error)}\n`))
  await startRedis().catch((error: unknown) => process.stderr.write(`!!! could not restart Redis: ${String(error)}\n`))
}

/** The synchronous version, for process 'exit' and signal handlers. */
export function ensureServicesRunningSync(): void {
  if (!pgReadySync()) runSync('pg_ctlcluster', [...PG_CTL, 'start'], 60_000)
  if (!redisPongSync()) {
    runSync('redis-server', REDIS_START, 10_000)
    for (let i = 0; i < 100 && !redisPongSync(); i++) execFileSync('sleep', ['0.05'])
  }
}

let guardInstalled = false

/**
 * Last resort: whatever ends this test process (an uncaught failure, the runner's SIGTERM or
 * Ctrl-C), both services are started again before it goes.
 */
export function installServiceGuard(): void {
  if (guardInstalled) return
  guardInstalled = true
  process.once('exit', ensureServicesRunningSync)
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      ensureServicesRunningSync()
      process.exit(128 + (signal === 'SIGINT' ? 2 : signal === 'SIGTERM' ? 15 : 1))
    })
  }
}

// ---------------------------------------------------------------------------------------------
// Waiting for other users of the shared services.

/** Processes that use the shared PostgreSQL/Redis: benchmarks and the storage, limiter and scale tests. */
export const SHARED_USERS = 'bench/run.mjs|test/scale/|test/storage/|test/limits/'

function parentOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
  } catch {
    return 0
  }
}

/** This process and its ancestors (a suite runner whose command line lists every test file matches the pattern). */
function ownLineage(): Set<number> {
  const pids = new Set<number>()
  for (let pid = process.pid; pid > 1 && !pids.has(pid); pid = parentOf(pid)) pids.add(pid)
  return pids
}

/** Pids (not ours) whose command line matches SHARED_USERS. */
export function otherSharedUsers(): number[] {
  let out = ''
  try {
    // No shell: pgrep never matches itself, and no `sh -c '<pattern>'` would match either.
    out = execFileSync('pgrep', ['-f', SHARED_USERS], { encoding: 'utf8', timeout: 5_000 })
  } catch {
    return [] // exit 1: nothing matches
  }
  const mine = ownLineage()
  return out
    .split('\n')
    .map(Number)
    .filter((pid) => pid > 0 && !mine.has(pid) && parentOf(pid) !== process.pid)
}

/**
 * Waits (polling every 5 s, up to `maxMs`, default 10 minutes) until no other benchmark or
 * service test is running, so that stopping a shared service does not break someone else's run.
 * Resolves true when idle; false when others are still running after `maxMs` (then the caller
 * must not stop anything).
 */
export async function waitForSharedServicesIdle(maxMs = 600_000): Promise<boolean> {
  const started = performance.now()
  let reported = false
  for (;;) {
    const others = otherSharedUsers()
    if (others.length === 0) {
      if (reported) process.stderr.write(`... idle after ${Math.round((performance.now() - started) / 1000)} s\n`)
      return true
    }
    if (performance.now() - started >= maxMs) {
      process.stderr.write(`!!! PostgreSQL/Redis still in use after ${Math.round(maxMs / 1000)} s (pids ${others.join(', ')}); not stopping them\n`)
      return false
    }
    if (!reported) {
      process.stderr.write(`waiting for other users of PostgreSQL/Redis to finish (pids ${others.join(', ')})...\n`)
      reported = true
    }
    await sleep(5_000)
  }
}

/**
 * For a test about to stop a shared service: true when it may. When others keep using the
 * services for `maxMs`, fails under REQUIRE_SERVICES=1 (CI runs nothing else alongside), else
 * skips the test loudly.
 */
export async function mayStopSharedServices(t: TestContext, maxMs = 600_000): Promise<boolean> {
  if (await waitForSharedServicesIdle(maxMs)) return true
  const why = 'other benchmarks or service tests kept using PostgreSQL/Redis; not stopping them under them'
  if (REQUIRE_SERVICES) throw new Error(why)
  process.stderr.write(`\n!!! SKIPPED: ${why} — "${t.name}" did not run !!!\n\n`)
  t.skip(why)
  return false
}

/** Budget for a test that waits politely `waits` times: its own work plus the waits. */
export const idleWaitBudgetMs = (waits: number) => waits * 600_000
