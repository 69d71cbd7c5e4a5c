/**
 * Real processes for the process-level tests: the server (src/server.ts) and the CLI (src/cli.ts),
 * run through tsx so no build is needed (set ANIMAL_STORE_TEST_BUILD=dist to run dist/ instead).
 *
 * Every child started here is tracked and killed (SIGKILL) when the test process exits, even if a
 * test fails or times out; tests should still stop their servers and remove their temp dirs in
 * `t.after` hooks (see `useTempDir` and `ServerProcess.kill`).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'

/** The repository root (cwd of every child). */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url))

const USE_DIST = process.env.ANIMAL_STORE_TEST_BUILD === 'dist'

function entryArgs(entry: 'server' | 'cli'): string[] {
  return USE_DIST ? [join(ROOT, 'dist', `${entry}.js`)] : ['--import', 'tsx', join(ROOT, 'src', `${entry}.ts`)]
}

/** Variables the service reads (src/config.ts): never inherited from the developer's shell. */
const CONFIG_VARS = [
  'ANIMAL_STORE_ENV',
  'PORT',
  'HOST',
  'PUBLIC_BASE_URL',
  'PRODUCTION_BASE_URL',
  'STAGING_BASE_URL',
  'DATABASE_URL',
  'DURABILITY',
  'REDIS_URL',
  'REDIS_FAILURE_POLICY',
  'TRUST_PROXY',
  'LOG_LEVEL',
  'LOG_FILE',
  'KEY_REFRESH_MS',
  'BOOTSTRAP_KEY',
  'BAN_THRESHOLD',
  'BAN_BASE_SECONDS',
  'BAN_MAX_SECONDS',
  'LIMITER_STATE_FILE',
  'LIMITER_SNAPSHOT_MS',
  'REQUEST_TIMEOUT_MS',
  'HEADERS_TIMEOUT_MS',
  'KEEP_ALIVE_TIMEOUT_MS',
  'MAX_HEADER_BYTES',
  'MAX_CONNECTIONS',
]

export type EnvOverrides = Record<string, string | undefined>

/** The parent's environment without service configuration and test-runner internals, plus `overrides` (undefined deletes). */
export function childEnv(overrides: EnvOverrides = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of CONFIG_VARS) delete env[name]
  delete env.NODE_TEST_CONTEXT // set by `node --test` for its own children; not ours to pass on
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete env[name]
    else env[name] = value
  }
  return env
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

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** A port that was free a moment ago: listen on port 0, read the port, close. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.once('error', reject)
    server.listen({ port: 0, host, exclusive: true }, () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => (port ? resolve(port) : reject(new Error('no port from listen(0)'))))
    })
  })
}

/** A fresh temp dir, removed (recursively) after the test. */
export async function useTempDir(t: TestContext, prefix = 'animal-store-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  t.after(() => rm(dir, { recursive: true, force: true }))
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
  /** Killed with SIGKILL after this long (default 20 s); the result then has signal SIGKILL. */
  timeoutMs?: number
}

/** Runs `animal-store ARGS` to completion and returns its status and output. */
export function runCli(args: string[], { db, env = {}, timeoutMs = 20_000 }: CliOptions): Promise<CliResult> {
  const started = performance.now()
  const child = spawn(process.execPath, [...entryArgs('cli'), ...args], {
    cwd: ROOT,
    env: childEnv({ DATABASE_URL: db, LOG_LEVEL: 'warn', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  track(child)
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

/** `keys create ... --json`, asserting success; returns the parsed object. */
export async function createKeyViaCli(
  db: string,
  options: { plan?: string; name?: string; perMinute?: number; perDay?: number; env?: EnvOverrides } = {},
): Promise<{ id: string; key: string; plan: string; prefix: string; perMinute: number; perDay: number }> {
  const args = ['keys', 'create', '--plan', options.plan ?? 'free', '--name', options.name ?? 'test', '--json']
  if (options.perMinute !== undefined) args.push('--per-minute', String(options.perMinute))
  if (options.perDay !== undefined) args.push('--per-day', String(options.perDay))
  const result = await runCli(args, { db, env: options.env ?? {} })
  if (result.code !== 0) throw new Error(`keys create failed (${result.code}): ${result.stderr}`)
  return JSON.parse(result.stdout)
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
  /** How long to wait for GET /healthz 200 (default 20 s). */
  readyTimeoutMs?: number
}

export interface ServerProcess {
  readonly child: ChildProcess
  readonly pid: number
  readonly port: number
  /** http://127.0.0.1:PORT */
  readonly url: string
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
  const child = spawn(process.execPath, entryArgs('server'), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
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

async function waitHealthy(server: ServerProcess, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs
  let exitedEarly: ExitStatus | undefined
  void server.exited.then((s) => (exitedEarly = s))
  while (performance.now() < deadline) {
    if (exitedEarly) {
      throw new Error(
        `server exited before it was healthy (code ${exitedEarly.code}, signal ${exitedEarly.signal})\n` +
          `--- stderr ---\n${server.stderr()}\n--- stdout ---\n${server.stdout()}`,
      )
    }
    try {
      const res = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(1000) })
      await res.arrayBuffer()
      if (res.status === 200) return
    } catch {
      // not listening yet
    }
    await sleep(50)
  }
  await server.kill()
  throw new Error(`server not healthy within ${timeoutMs} ms\n--- stderr ---\n${server.stderr()}\n--- stdout ---\n${server.stdout()}`)
}

/**
 * Starts the server on a free port and waits for GET /healthz 200. The process is SIGKILLed after
 * the test (`t`) unless it has already exited; call `stop()` for a graceful stop.
 */
export async function startServer(t: TestContext, options: ServerOptions): Promise<ServerProcess> {
  for (let attempt = 1; ; attempt++) {
    const server = spawnServerOnce(options, await freePort())
    t.after(() => server.kill())
    try {
      await waitHealthy(server, options.readyTimeoutMs ?? 20_000)
      return server
    } catch (error) {
      // Another process took the port between freePort() and listen(): try another one.
      if (attempt < 3 && /EADDRINUSE/.test(server.stderr() + server.stdout())) continue
      throw error
    }
  }
}

/** Spawns the server without waiting for health (for start-up failures); resolves with its exit and output. */
export async function runServerToExit(
  options: ServerOptions,
  timeoutMs = 20_000,
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
// HTTP helpers.

export const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` })

/** fetch with a timeout (default 10 s), returning status, headers and the parsed (or raw) body. */
export async function request(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown; timeoutMs?: number } = {},
): Promise<{ status: number; headers: Headers; body: unknown; text: string }> {
  const headers: Record<string, string> = { ...init.headers }
  let body: string | undefined
  if (init.body !== undefined) {
    body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body)
    headers['content-type'] ??= 'application/json'
  }
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers,
    ...(body === undefined ? {} : { body }),
    signal: AbortSignal.timeout(init.timeoutMs ?? 10_000),
  })
  const text = await res.text()
  let parsed: unknown = text
  try {
    parsed = JSON.parse(text)
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, body: parsed, text }
}
