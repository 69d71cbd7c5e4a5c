/**
 * `npm start`, the README's start command, stopped the way a supervisor or a terminal stops it:
 * a signal to npm's own process (systemd's main PID, `docker stop` on `CMD npm start`, a CI job's
 * cancel) or Ctrl-C to the terminal's process group. The server must drain (SHUTDOWN_DRAIN_MS),
 * close and exit, and npm with it, with status 0: no server left behind holding the port.
 *
 * Runs the real `npm start`, so it runs dist/: `npm test` and `npm run test:system` build first;
 * with `npm run test:one`, run `npm run build` before.
 */
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import net from 'node:net'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import { childEnv, type ExitStatus, HANG_MS, ROOT, request, useTempDir, waitFor } from '../helpers/process.js'

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

/** `npm start` in the repository, in a process group of its own (so a test can Ctrl-C it), serving on free ports. */
async function npmStart(t: TestContext): Promise<NpmStart> {
  assert.ok(existsSync(join(ROOT, 'dist', 'server.js')), 'dist/server.js is missing: run `npm run build` first')
  const dir = await useTempDir(t, 'animal-store-npm-start-')
  const logFile = join(dir, 'server.log')
  const npm = spawn('npm', ['start'], {
    cwd: ROOT,
    env: childEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: join(dir, 'store.db'),
      LOG_FILE: logFile,
      LOG_LEVEL: 'info',
      BOOTSTRAP_KEY: 'false',
      SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  let output = ''
  npm.stdout!.setEncoding('utf8').on('data', (s: string) => (output += s))
  npm.stderr!.setEncoding('utf8').on('data', (s: string) => (output += s))
  const exited = new Promise<ExitStatus>((resolve) => npm.once('close', (code, signal) => resolve({ code, signal })))
  let serverPid: number | undefined
  t.after(() => {
    for (const pid of [-npm.pid!, serverPid]) {
      try {
        if (pid !== undefined) process.kill(pid, 'SIGKILL')
      } catch {
        // already gone
      }
    }
  })
  const port = () => /^Animal Store API listening on http:\/\/127\.0\.0\.1:(\d+)/m.exec(output)?.[1]
  const listening = () => logLines(logFile).find((line) => line.msg.startsWith('Server listening'))
  const up = await waitFor(() => (port() !== undefined && listening() !== undefined) || npm.exitCode !== null, HANG_MS, 100)
  assert.ok(up && npm.exitCode === null, `npm start did not come up:\n${output}`)
  serverPid = listening()!.pid
  assert.notEqual(serverPid, npm.pid)
  return { npm, exited, serverPid, port: Number(port()), logFile, output: () => output }
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
