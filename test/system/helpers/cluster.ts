/**
 * Helpers for the tests of several instances (test/system/): a scratch PostgreSQL database per test, bursts of
 * concurrent requests spread over several instances, a long-running `animal-store serve` process
 * (the primary of `--workers N`) and the children of a process.
 *
 * Everything started here is killed after the test (SIGKILL, by pid), also when the test fails.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import http from 'node:http'
import type { TestContext } from 'node:test'
import pg from 'pg'
import { PG_URL } from '../../helpers/services.js'
import { awayFromBoundary } from '../../helpers/windows.js'
import { bearer, childEnv, type EnvOverrides, type ExitStatus, entry, freePort, ROOT, sleep } from './process.js'

export { waitFor } from './process.js'

// ---------------------------------------------------------------------------------------------
// A scratch PostgreSQL database.

/** `PG_URL` with its database name replaced. */
export function databaseUrlFor(name: string): string {
  const url = new URL(PG_URL)
  url.pathname = '/' + name
  return url.toString()
}

/** Runs `work` on one short-lived connection to `url`. */
export async function withPg<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 })
  client.on('error', () => {})
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end().catch(() => {})
  }
}

/**
 * Creates a fresh database `as_scale_<random>` on the server of PG_URL and returns its URL; it is
 * dropped (WITH (FORCE): lingering connections of killed servers are cut) after the test.
 */
export async function useScratchDatabase(t: TestContext, prefix = 'as_scale_'): Promise<string> {
  const name = prefix + randomBytes(6).toString('hex')
  await withPg(PG_URL, (c) => c.query(`CREATE DATABASE ${name}`))
  t.after(async () => {
    await withPg(PG_URL, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch((error: unknown) => {
      process.stderr.write(`could not drop scratch database ${name}: ${(error as Error).message}\n`)
    })
  })
  return databaseUrlFor(name)
}

// ---------------------------------------------------------------------------------------------
// Requests.

export interface Outcome {
  status: number
  /** The error body's code, when there is one. */
  code: string | undefined
  retryAfter: number | undefined
  /** Index of the target that answered. */
  target: number
}

async function outcome(res: Response, target: number): Promise<Outcome> {
  const text = await res.text()
  let code: string | undefined
  try {
    code = (JSON.parse(text) as { code?: string }).code
  } catch {
    // not JSON
  }
  const retry = res.headers.get('retry-after')
  return { status: res.status, code, retryAfter: retry === null ? undefined : Number(retry), target }
}

/** One GET with a timeout, reduced to status, error code and Retry-After. */
export async function probe(url: string, headers: Record<string, string> = {}, timeoutMs = 10_000, target = 0): Promise<Outcome> {
  return outcome(await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) }), target)
}

/**
 * `count` requests sent at once, spread round-robin over `bases` (request i goes to bases[i % n]),
 * to `path` with `headers`. Resolves when all have answered.
 */
export async function burst(bases: string[], path: string, count: number, headers: Record<string, string>): Promise<Outcome[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) => {
      const target = i % bases.length
      return probe(bases[target]! + path, headers, 20_000, target)
    }),
  )
}

/** Counts of `status` or `status code` strings, e.g. { '200': 60, '429 key_banned': 80 }. */
export function tally(outcomes: Outcome[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const o of outcomes) {
    const label = o.status >= 400 && o.code ? `${o.status} ${o.code}` : String(o.status)
    counts[label] = (counts[label] ?? 0) + 1
  }
  return counts
}

/** Waits, when fewer than `seconds` are left in this minute (or day), for the next one. */
export const ensureMinuteRoom = (seconds: number): Promise<void> => awayFromBoundary(seconds * 1000)

// ---------------------------------------------------------------------------------------------
// Processes.

/** Pids of the live children of `pid` (from /proc; Linux). */
export function childPids(pid: number): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      // pid (comm) state ppid ...; comm may contain spaces and parentheses: split after the last ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const state = fields[0]
      const ppid = Number(fields[1])
      if (ppid === pid && state !== 'Z' && state !== 'X') pids.push(Number(entry))
    } catch {
      // exited meanwhile
    }
  }
  return pids
}

/** The command line of a process ([] once it is gone). */
export function commandLine(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean)
  } catch {
    return []
  }
}

/** Children of `pid` that are Node processes (cluster workers), not helpers such as tsx's esbuild service. */
export function nodeChildPids(pid: number): number[] {
  return childPids(pid).filter((child) => commandLine(child)[0] === process.execPath)
}

/** Whether a process with this pid exists (and is not a zombie). */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]
    return state !== 'Z' && state !== 'X'
  } catch {
    return false
  }
}

function killPid(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    // already gone
  }
}

export interface CliServer {
  readonly child: ChildProcess
  readonly pid: number
  readonly port: number
  readonly url: string
  stdout(): string
  stderr(): string
  readonly exited: Promise<ExitStatus>
}

/**
 * Spawns `animal-store ARGS` (dist/cli.js, or src/cli.ts through tsx: as runCli does) and leaves it
 * running: for `serve`, whose cluster workers run the same way (always through tsx, each worker
 * paid tsx's start-up again: the workers test spent 74 s of CPU against 47 from dist/). The process
 * and every child it has (cluster workers) are SIGKILLed after the test by pid.
 */
export async function spawnCli(
  t: TestContext,
  args: string[],
  env: EnvOverrides,
  options: { port?: number; ownProcessGroup?: boolean } = {},
): Promise<CliServer> {
  const listenPort = options.port ?? (await freePort())
  const child = spawn(process.execPath, [...entry('cli'), ...args], {
    cwd: ROOT,
    env: childEnv({ PORT: String(listenPort), HOST: '127.0.0.1', BOOTSTRAP_KEY: 'false', LOG_LEVEL: 'warn', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
    // A process group of its own (pgid = its pid), so that a test can signal the whole group as a
    // terminal's Ctrl-C or systemd's default KillMode=control-group do, without touching the runner.
    detached: options.ownProcessGroup ?? false,
  })
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (stdout += s))
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr += s))
  const exited = new Promise<ExitStatus>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })))
  // Workers seen while it ran: they are killed too, even once the primary is gone.
  const seen = new Set<number>()
  const watch = setInterval(() => {
    if (child.pid !== undefined) for (const pid of childPids(child.pid)) seen.add(pid)
  }, 100)
  watch.unref()
  const cleanup = () => {
    clearInterval(watch)
    if (child.pid !== undefined) for (const pid of childPids(child.pid)) seen.add(pid)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    for (const pid of seen) if (isAlive(pid)) killPid(pid)
  }
  process.once('exit', cleanup)
  t.after(async () => {
    cleanup()
    process.removeListener('exit', cleanup)
    await Promise.race([exited, sleep(5_000)])
  })
  return {
    child,
    pid: child.pid!,
    port: listenPort,
    url: `http://127.0.0.1:${listenPort}`,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
  }
}

/**
 * A POST /v1/pets whose headers are sent now and whose body is sent by `finish()`: a request that
 * is in flight for as long as the test wants (to check that a stopping server drains it). Opens a
 * new connection, so with node:cluster consecutive calls land on consecutive workers.
 */
export function slowPost(base: string, key: string): { sent: Promise<void>; finish(): Promise<{ status: number; body: string }> } {
  const body = JSON.stringify({ name: 'in flight', categoryId: 1 })
  const url = new URL('/v1/pets', base)
  const req = http.request({
    host: url.hostname,
    port: url.port,
    path: url.pathname,
    method: 'POST',
    agent: false,
    headers: { ...bearer(key), 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
  })
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.once('error', reject)
    req.once('response', (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (s: string) => (text += s))
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
      res.once('error', reject)
    })
  })
  response.catch(() => {}) // observed through finish()
  req.flushHeaders()
  const half = Math.floor(body.length / 2)
  const sent = new Promise<void>((resolve, reject) => req.write(body.slice(0, half), (error) => (error ? reject(error) : resolve())))
  return {
    sent,
    finish: () => {
      req.end(body.slice(half))
      return response
    },
  }
}
