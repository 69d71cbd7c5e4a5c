/**
 * `npm start`, the README's start command, stopped the way a supervisor or a terminal stops it:
 * a signal to npm's own process (systemd's main PID, `docker stop` on `CMD npm start`, a CI job's
 * cancel) or Ctrl-C to the terminal's process group. The server must drain (SHUTDOWN_DRAIN_MS),
 * close and exit, and npm with it, with status 0: no server left behind holding the port.
 *
 * Killed with SIGKILL instead (npm alone, or its whole process group: a supervisor's last resort,
 * a CI runner, the OOM killer), npm cannot pass anything on: the server, in a session of its own,
 * must notice that its launcher is gone, say so in one log line and stop, releasing the port and
 * the SQLite lock, so that the next `npm start` on the same database serves.
 *
 * Runs the real `npm start`, so it runs dist/: `npm test` and `npm run test:system` build first;
 * with `npm run test:one`, run `npm run build` before.
 */
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import pg from 'pg'
import { requireService } from '../../helpers/services.js'
import { childPids, commandLine, isAlive as isRunning, useScratchDatabase } from '../helpers/cluster.js'
import { adminOriginIn, childEnv, type ExitStatus, HANG_MS, ROOT, request, useTempDir, waitFor } from '../helpers/process.js'

const DRAIN_MS = 500

interface NpmStart {
  npm: ChildProcess
  exited: Promise<ExitStatus>
  /** The server process npm started (from its log lines), and its port (from its banner). */
  serverPid: number
  port: number
  logFile: string
  output(): string
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

function logLines(logFile: string): Array<{ pid: number; msg: string; signal?: string }> {
  if (!existsSync(logFile)) return []
  return readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line))
}

interface Launched {
  npm: ChildProcess
  exited: Promise<ExitStatus>
  output(): string
  /** Killed (SIGKILL) after the test, with npm's process group: a server that outlived npm. */
  killAfter: Set<number>
}

/**
 * `npm start` in the repository with `env` (over the test's defaults) and `args` after `--`, in a
 * process group of its own (so a test can Ctrl-C it).
 */
function launchNpmStart(t: TestContext, env: Record<string, string>, args: string[] = []): Launched {
  assert.ok(existsSync(join(ROOT, 'dist', 'server.js')), 'dist/server.js is missing: run `npm run build` first')
  const npm = spawn('npm', ['start', ...(args.length === 0 ? [] : ['--', ...args])], {
    cwd: ROOT,
    env: childEnv({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', BOOTSTRAP_KEY: 'false', SHUTDOWN_DRAIN_MS: String(DRAIN_MS), ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  let output = ''
  npm.stdout!.setEncoding('utf8').on('data', (s: string) => (output += s))
  npm.stderr!.setEncoding('utf8').on('data', (s: string) => (output += s))
  const exited = new Promise<ExitStatus>((resolve) => npm.once('close', (code, signal) => resolve({ code, signal })))
  const killAfter = new Set<number>()
  t.after(() => {
    for (const pid of [-npm.pid!, ...killAfter]) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // already gone
      }
    }
  })
  return { npm, exited, output: () => output, killAfter }
}

/**
 * `npm start` serving on free ports, on the database and log file in `dir` (a new temp dir by
 * default), once it is up.
 */
async function npmStart(
  t: TestContext,
  dir?: string,
  { env = {}, args = [] }: { env?: Record<string, string>; args?: string[] } = {},
): Promise<NpmStart> {
  dir ??= await useTempDir(t, 'animal-store-npm-start-')
  const logFile = join(dir, 'server.log')
  // The log of an earlier start on the same dir is not this one's.
  const earlierLines = logLines(logFile).length
  const { npm, exited, output, killAfter } = launchNpmStart(t, { DATABASE_URL: join(dir, 'store.db'), LOG_FILE: logFile, ...env }, args)
  const port = () => /^Animal Store API listening on http:\/\/127\.0\.0\.1:(\d+)/m.exec(output())?.[1]
  const listening = () =>
    logLines(logFile)
      .slice(earlierLines)
      .find((line) => line.msg.startsWith('Server listening'))
  const up = await waitFor(() => (port() !== undefined && listening() !== undefined) || npm.exitCode !== null, HANG_MS, 100)
  assert.ok(up && npm.exitCode === null, `npm start did not come up:\n${output()}`)
  const serverPid = listening()!.pid
  killAfter.add(serverPid)
  assert.notEqual(serverPid, npm.pid)
  return { npm, exited, serverPid, port: Number(port()), logFile, output }
}

/** Sends `signal` to npm (or its process group) and waits for npm to exit; undefined if it did not within HANG_MS. */
async function stop(started: NpmStart, signal: NodeJS.Signals, target: 'npm' | 'process group'): Promise<ExitStatus | undefined> {
  process.kill(target === 'npm' ? started.npm.pid! : -started.npm.pid!, signal)
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), HANG_MS)))
  const exit = await Promise.race([started.exited, timedOut])
  clearTimeout(timer)
  return exit
}

function portClosed(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(false)
    })
    socket.once('error', () => resolve(true))
  })
}

for (const [signal, target] of [
  ['SIGTERM', 'npm'],
  ['SIGINT', 'npm'],
  ['SIGINT', 'process group'],
] as const) {
  const how = target === 'npm' ? `${signal} to npm` : `${signal} to its process group (Ctrl-C in a terminal)`
  test(`npm start: ${how} drains the server, stops it and exits 0`, { timeout: 2 * HANG_MS + 30_000 }, async (t) => {
    const started = await npmStart(t)
    assert.equal((await request(`http://127.0.0.1:${started.port}/healthz`)).status, 200)

    const exit = await stop(started, signal, target)
    assert.equal(isAlive(started.serverPid), false, `the server (pid ${started.serverPid}) stops with npm`)
    assert.ok(await portClosed(started.port), 'its port is free again')
    assert.deepEqual(exit, { code: 0, signal: null }, `npm exits 0\n${started.output()}`)
    const server = logLines(started.logFile).filter((line) => line.pid === started.serverPid)
    assert.deepEqual(
      server
        .filter((line) => /^(draining|shutting down|second)/.test(line.msg))
        .map((line) => `${line.msg.split(/[:,]/)[0]} (${line.signal ?? 'no drain'})`),
      [`draining (${signal})`, `shutting down (${signal})`],
      'one signal reached the server: it drained, then closed (a second one would have cut the drain short)',
    )
  })
}

/** Generous for a busy machine: the server hears of its launcher's end at once (of npm's within a second), then closes. */
const LAUNCHER_GONE_MS = 30_000

for (const target of ['npm', 'process group'] as const) {
  const how = target === 'npm' ? 'SIGKILL to npm alone' : 'SIGKILL to its process group (a supervisor, a CI runner)'
  test(`npm start: ${how} stops the server too, which says why; port and lock are free, the next npm start serves`, {
    timeout: 3 * HANG_MS,
  }, async (t) => {
    const dir = await useTempDir(t, 'animal-store-npm-start-')
    const started = await npmStart(t, dir)
    assert.equal((await request(`http://127.0.0.1:${started.port}/healthz`)).status, 200)

    process.kill(target === 'npm' ? started.npm.pid! : -started.npm.pid!, 'SIGKILL')
    const stopped = await waitFor(() => !isRunning(started.serverPid), LAUNCHER_GONE_MS, 100)
    assert.ok(stopped, `the server (pid ${started.serverPid}) still runs ${LAUNCHER_GONE_MS / 1000} s after its launcher was killed`)
    assert.ok(await portClosed(started.port), 'its port is free again')
    const why = logLines(started.logFile).filter((line) => line.pid === started.serverPid && line.msg.includes('launcher'))
    assert.equal(why.length, 1, `one log line says why it stopped:\n${started.output()}`)
    assert.match(why[0]!.msg, /^its launcher \(pid \d+\) is gone: /)

    // The kernel released the SQLite lock with the process: the next start on the same database serves.
    const next = await npmStart(t, dir)
    assert.equal((await request(`http://127.0.0.1:${next.port}/healthz`)).status, 200)
    assert.deepEqual(await stop(next, 'SIGTERM', 'npm'), { code: 0, signal: null })
  })
}

test('npm start: SIGKILL to its process group while the server is still starting ends the server at once, saying why', {
  timeout: 2 * HANG_MS,
}, async (t) => {
  if (!(await requireService(t, 'PostgreSQL'))) return
  const db = await useScratchDatabase(t, 'as_npm_start_')
  // Held here, the migration lock keeps the server's start waiting (up to 60 s) for it.
  const holder = new pg.Client({ connectionString: db })
  holder.on('error', () => {}) // the scratch database is dropped under it after the test
  await holder.connect()
  t.after(() => holder.end())
  await holder.query('BEGIN')
  await holder.query('SELECT pg_advisory_xact_lock(hashtext($1))', ['animal_store:migrate:'])

  const dir = await useTempDir(t, 'animal-store-npm-start-')
  const launched = launchNpmStart(t, { DATABASE_URL: db, LOG_FILE: join(dir, 'server.log') })
  const waiting = await waitFor(
    async () => (await holder.query("SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")).rowCount === 1,
    HANG_MS,
    100,
  )
  assert.ok(waiting, `the server waits for the migration lock:\n${launched.output()}`)
  const launcher = childPids(launched.npm.pid!).find((pid) => commandLine(pid).some((arg) => arg.endsWith('npm-start.mjs')))
  const server = launcher === undefined ? undefined : childPids(launcher)[0]
  assert.ok(server !== undefined, `npm start -> bin/npm-start.mjs -> the server:\n${launched.output()}`)
  launched.killAfter.add(server)

  process.kill(-launched.npm.pid!, 'SIGKILL')
  const ended = await waitFor(() => !isRunning(server), LAUNCHER_GONE_MS, 100)
  assert.ok(ended, `the server (pid ${server}) still runs ${LAUNCHER_GONE_MS / 1000} s after its launcher was killed`)
  // Its last words are in the pipe it inherited from npm, read by this process's event loop: a
  // gone server may not have been read yet (lanes1 run, a busy machine: the output ended before
  // them). npm's 'close' comes once every writer of its pipes, the server included, closed them.
  await launched.exited
  assert.match(launched.output(), new RegExp(`^animal-store: start-up abandoned: its launcher \\(pid ${launcher}\\) is gone$`, 'm'))
})

/** The server's heap bound as its admin listener's /metrics shows it (animal_store_heap_limit_bytes), in MB. */
async function heapLimitMb(started: NpmStart): Promise<number> {
  const admin = adminOriginIn(started.output())
  assert.ok(admin !== undefined, `no admin listener in the banner:\n${started.output()}`)
  const metrics = await request(`${admin}/metrics`)
  const bytes = Number(/^animal_store_heap_limit_bytes (\S+)$/m.exec(metrics.text)?.[1])
  return bytes / 2 ** 20
}

test('npm start: the server runs with the heap bound of MAX_HEAP_MB, by default 192 MB, read from the configuration as the server reads it', {
  timeout: 2 * HANG_MS,
}, async (t) => {
  // V8's bound is the old space's (the flag) and the young generation's (48 MB on 64-bit Node 20).
  const bounded = (limit: number, flag: number) => limit >= flag && limit <= flag + 64
  const byDefault = await npmStart(t)
  const defaultLimit = await heapLimitMb(byDefault)
  assert.ok(bounded(defaultLimit, 192), `by default: ${defaultLimit} MB`)
  assert.equal(await stop(byDefault, 'SIGTERM', 'npm').then((exit) => exit?.code), 0)

  // From a config file named on the command line, as the server reads it (not only the environment).
  const dir = await useTempDir(t, 'animal-store-npm-start-heap-')
  const file = join(dir, 'service.env')
  writeFileSync(file, 'MAX_HEAP_MB=100\n')
  const configured = await npmStart(t, dir, { args: ['--config-file', file] })
  const configuredLimit = await heapLimitMb(configured)
  assert.ok(bounded(configuredLimit, 100), `MAX_HEAP_MB=100: ${configuredLimit} MB`)
  assert.ok(commandLine(configured.serverPid).includes('--max-old-space-size=100'), commandLine(configured.serverPid).join(' '))
  assert.equal(await stop(configured, 'SIGTERM', 'npm').then((exit) => exit?.code), 0)
})
