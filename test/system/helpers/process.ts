/**
 * Real processes for the process-level tests: the server (src/server.ts) and the CLI (src/cli.ts),
 * run through tsx so no build is needed, or from dist/ with ANIMAL_STORE_TEST_BUILD=dist, as
 * `npm test` and `npm run test:system` do after their build: a dist/ process starts with a third of
 * the CPU (no tsx), which CI's hundreds of server and CLI processes add up to minutes of.
 *
 * Every child started here is tracked and killed (SIGKILL) when the test process exits, even if a
 * test fails or times out; tests should still stop their servers and remove their temp dirs in
 * `t.after` hooks (see `useTempDir` and `ServerProcess.kill`).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import { bearer, freePort, request, waitHealthy } from '../../../tools/http.mjs'
import { type CreatedKey, createKeyWithCli, entryArgs, type KeyOptions } from '../../../tools/service-cli.mjs'
import { serviceEnv } from '../../../tools/service-env.mjs'
import { REVOCATION_DEADLINE_MS, sleep, waitFor } from '../../helpers/wait.js'

// One implementation each: shared with the benchmark and the soak (plain JavaScript in tools/), and
// the waits every test uses, process-level or not (test/helpers/wait.ts).
export { bearer, freePort, REVOCATION_DEADLINE_MS, request, sleep, waitFor }

/** The repository root (cwd of every child, unless a test names another). */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url))

const USE_DIST = process.env.ANIMAL_STORE_TEST_BUILD === 'dist'

/** The arguments after `node` that run the server or the CLI: from dist/ or through tsx, as above. */
export const entry = (name: 'server' | 'cli') => entryArgs(name, { source: !USE_DIST })

export type EnvOverrides = Record<string, string | undefined>

/**
 * The parent's environment without service configuration (no config file either:
 * ANIMAL_STORE_CONFIG_FILE=off) and test-runner internals, plus `overrides` (undefined deletes). The admin listener gets a free port (ADMIN_PORT=0) unless the
 * test names one: its default, 8081, would be shared by every server a test run starts at once.
 */
export const childEnv = (overrides: EnvOverrides = {}): NodeJS.ProcessEnv => serviceEnv({ ADMIN_PORT: '0', ...overrides })

/** The admin listener's origin, from the start-up banner's `Admin API:` line (undefined until printed, or when off). */
export function adminOriginIn(stdout: string): string | undefined {
  return /^ {2}Admin API: {3}(http:\/\/\S+)\/admin\/v1 /m.exec(stdout)?.[1]
}

// ---------------------------------------------------------------------------------------------
// Child tracking: nothing outlives the test process.

const live = new Set<ChildProcess>()

function track(child: ChildProcess): void {
  live.add(child)
  child.once('exit', () => live.delete(child))
}

/** SIGKILLs every child still running (also runs automatically when the test process exits). */
export function killAllChildren(): void {
  for (const child of live) {
    try {
      child.kill('SIGKILL')
    } catch {
      // already gone
    }
  }
  live.clear()
}

process.once('exit', killAllChildren)

// ---------------------------------------------------------------------------------------------
// Small utilities.

/**
 * How long a child may take to start, answer or exit before a helper gives up on it: a guard
 * against hangs, not a measure, so generous (Node and tsx start in about a second on a quiet
 * machine; a busy one, or a test starting a dozen at once, slows that many times over).
 */
export const HANG_MS = 60_000

/** The servers each test started (startServer), so that its temp dirs outlive them. */
const serversOf = new WeakMap<TestContext, Set<ServerProcess>>()

/**
 * A fresh temp dir, removed (recursively) after the test. node:test runs `t.after` hooks in the
 * order they were added, so the removal, added before the test starts its servers, would run while
 * they still write into the folder (ENOTEMPTY under load): it kills the test's servers first.
 */
export async function useTempDir(t: TestContext, prefix = 'animal-store-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  t.after(async () => {
    await Promise.all([...(serversOf.get(t) ?? [])].map((server) => server.kill()))
    await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 })
  })
  return dir
}

export interface ExitStatus {
  code: number | null
  signal: NodeJS.Signals | null
}

/** Resolves when the child has exited and its stdout/stderr are fully read ('close'). */
function closeOf(child: ChildProcess): Promise<ExitStatus> {
  return new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })))
}

// ---------------------------------------------------------------------------------------------
// The CLI.

export interface CliResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  /** Wall time from spawn to exit (ms). */
  ms: number
}

export interface CliOptions {
  /** SQLite file (DATABASE_URL). */
  db: string
  env?: EnvOverrides
  /** Killed with SIGKILL after this long (default HANG_MS); the result then has signal SIGKILL. */
  timeoutMs?: number
  /** Written to its standard input (otherwise none). */
  stdin?: string
}

/** Runs `animal-store ARGS` to completion and returns its status and output. */
export function runCli(args: string[], { db, env = {}, timeoutMs = HANG_MS, stdin }: CliOptions): Promise<CliResult> {
  const started = performance.now()
  const child = spawn(process.execPath, [...entry('cli'), ...args], {
    cwd: ROOT,
    env: childEnv({ DATABASE_URL: db, LOG_LEVEL: 'warn', ...env }),
    stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  })
  track(child)
  if (stdin !== undefined) child.stdin!.end(stdin)
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (stdout += s))
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr += s))
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
  return new Promise((resolve, reject) => {
    child.once('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    // 'close' (not 'exit'): all output has been read.
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr, ms: performance.now() - started })
    })
  })
}

/** `keys create ... --json` on the SQLite file (or database) `db`; returns the key as the admin API shows it, with the key itself. */
export function createKeyViaCli(db: string, options: KeyOptions & { env?: EnvOverrides } = {}): Promise<CreatedKey> {
  return createKeyWithCli((args) => runCli(args, { db, env: options.env ?? {} }), options)
}

// ---------------------------------------------------------------------------------------------
// The server.

export interface ServerOptions {
  /** Directory for the default database and log file (required unless both db and logFile are given). */
  dir: string
  /** SQLite file; default `<dir>/animal-store.db`. */
  db?: string
  /** LOG_FILE; default `<dir>/server.log`. */
  logFile?: string
  /** Extra environment (BOOTSTRAP_KEY defaults to false here; pass 'true' or undefined to test the bootstrap). */
  env?: EnvOverrides
  /** How long to wait for GET /healthz 200 (default HANG_MS). */
  readyTimeoutMs?: number
  /** Listen on this port (e.g. to restart an instance where a load balancer expects it); default a free one. */
  port?: number
  /** The working directory (where a .env file is read from, with ANIMAL_STORE_CONFIG_FILE: undefined); default ROOT. */
  cwd?: string
}

export interface ServerProcess {
  readonly child: ChildProcess
  readonly pid: number
  readonly port: number
  /** http://127.0.0.1:PORT */
  readonly url: string
  /** The admin listener's origin (admin API and /metrics), as the banner says; throws when it is off. */
  readonly adminUrl: string
  readonly db: string
  readonly logFile: string
  /** Everything written so far. */
  stdout(): string
  stderr(): string
  /** Resolves when the process has exited. */
  readonly exited: Promise<ExitStatus>
  /** Sends `signal` and waits for the exit (SIGKILL and an error after timeoutMs). */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<ExitStatus & { ms: number }>
  /** SIGKILL now, and wait for the exit. */
  kill(): Promise<ExitStatus>
}

function spawnServerOnce(options: ServerOptions, port: number): ServerProcess {
  const db = options.db ?? join(options.dir, 'animal-store.db')
  const logFile = options.logFile ?? join(options.dir, 'server.log')
  const env = childEnv({
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: db,
    LOG_FILE: logFile,
    LOG_LEVEL: 'info',
    BOOTSTRAP_KEY: 'false',
    ...options.env,
  })
  const child = spawn(process.execPath, entry('server'), { cwd: options.cwd ?? ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  track(child)
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (stdout += s))
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr += s))
  const exited = closeOf(child)
  const stop = async (signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 10_000) => {
    const started = performance.now()
    if (child.exitCode === null && child.signalCode === null) child.kill(signal)
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)))
    const result = await Promise.race([exited, timedOut])
    clearTimeout(timer)
    if (result === 'timeout') {
      child.kill('SIGKILL')
      await exited
      throw new Error(`server pid ${child.pid} did not exit within ${timeoutMs} ms of ${signal}; killed`)
    }
    return { ...result, ms: performance.now() - started }
  }
  return {
    child,
    pid: child.pid!,
    port,
    url: `http://127.0.0.1:${port}`,
    get adminUrl() {
      const origin = adminOriginIn(stdout)
      if (origin === undefined) throw new Error(`no admin listener in the banner of server pid ${child.pid}:\n${stdout}`)
      return origin
    },
    db,
    logFile,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    stop,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      return exited
    },
  }
}

/** Waits for GET /healthz 200; on failure the server is killed and the error carries its whole output. */
async function waitServerHealthy(server: ServerProcess, timeoutMs: number): Promise<void> {
  const output = {
    exited: server.exited,
    get err() {
      return server.stderr()
    },
    get out() {
      return server.stdout()
    },
  }
  try {
    await waitHealthy(server.port, output, { timeoutMs, outputLines: Infinity })
    // The banner (with the admin listener's address) is printed once every listener is bound.
    if (!(await waitFor(() => /^Animal Store API listening on /m.test(server.stdout()), timeoutMs))) {
      throw new Error(`printed no start-up banner within ${timeoutMs} ms`)
    }
  } catch (error) {
    await server.kill()
    throw new Error(`server ${(error as Error).message}\n--- stdout ---\n${server.stdout()}`)
  }
}

/**
 * Starts the server on a free port and waits for GET /healthz 200. The process is SIGKILLed after
 * the test (`t`) unless it has already exited; call `stop()` for a graceful stop.
 */
export async function startServer(t: TestContext, options: ServerOptions): Promise<ServerProcess> {
  for (let attempt = 1; ; attempt++) {
    const server = spawnServerOnce(options, options.port ?? (await freePort()))
    t.after(() => server.kill())
    serversOf.set(t, (serversOf.get(t) ?? new Set()).add(server))
    try {
      await waitServerHealthy(server, options.readyTimeoutMs ?? HANG_MS)
      return server
    } catch (error) {
      // Another process took the port between freePort() and listen(): try another one.
      if (attempt < 3 && options.port === undefined && /EADDRINUSE/.test(server.stderr() + server.stdout())) continue
      throw error
    }
  }
}

/** Spawns the server without waiting for health (for start-up failures); resolves with its exit and output. */
export async function runServerToExit(
  options: ServerOptions,
  timeoutMs = HANG_MS,
): Promise<ExitStatus & { stdout: string; stderr: string }> {
  const server = spawnServerOnce(options, await freePort())
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)))
  const result = await Promise.race([server.exited, timedOut])
  clearTimeout(timer)
  if (result === 'timeout') {
    await server.kill()
    throw new Error(`server was expected to exit but still ran after ${timeoutMs} ms\n${server.stderr()}`)
  }
  return { ...result, stdout: server.stdout(), stderr: server.stderr() }
}

// ---------------------------------------------------------------------------------------------
// HTTP.

/**
 * Waits until the server has read the headers of `count` requests sent with `key` that are still
 * in flight (their bodies held back): until its rate limiter has counted them, as probes with the
 * same key show in X-RateLimit-Remaining. So a test can signal a server that has really taken the
 * requests in, however busy the machine. `key` must serve nothing else meanwhile and have equal
 * per-minute and per-day quotas (`quota`), so that the header is the day's count, which no minute
 * boundary resets. Each probe counts one more.
 */
export async function waitUntilCounted(url: string, key: string, quota: number, count: number, timeoutMs = 30_000): Promise<void> {
  let probes = 0
  let counted = 0
  const seen = await waitFor(async () => {
    const res = await request(`${url}/v1/pets?limit=1`, { headers: bearer(key) })
    probes++
    counted = quota - Number(res.headers.get('x-ratelimit-remaining')) - probes
    return res.status === 200 && counted >= count
  }, timeoutMs)
  if (!seen) throw new Error(`the server counted ${counted} of the ${count} requests in flight within ${timeoutMs} ms`)
}
