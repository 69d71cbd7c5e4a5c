/**
 * Slow and hostile clients against a real server process, with raw sockets (issue point 4).
 *
 * The server runs with short limits (HEADERS_TIMEOUT_MS 2000, REQUEST_TIMEOUT_MS 3000,
 * KEEP_ALIVE_TIMEOUT_MS 2000) so each case finishes in seconds; src/app.ts derives from these the
 * sweep interval for incomplete requests (min(1 s, headers timeout / 2) = 1 s here) and the
 * socket inactivity timeout (= REQUEST_TIMEOUT_MS). See docs/limits.md.
 *
 * What Node 20 does, as asserted below:
 * - a request whose headers are not complete within headersTimeout, or whose body is not complete
 *   within requestTimeout, is found by the next sweep and reported as ERR_HTTP_REQUEST_TIMEOUT to
 *   the clientError handler, which answers 408 in the Error shape and closes; a body that stops
 *   arriving altogether meets the inactivity timeout (= REQUEST_TIMEOUT_MS) first, which
 *   src/http/client-errors.ts turns into the same 408;
 * - headers over MAX_HEADER_BYTES are a parser error (HPE_HEADER_OVERFLOW): 431 in the Error shape;
 * - more than maxHeadersCount (100) header lines are NOT an error: Node keeps the first 100 and
 *   silently drops the rest (only the byte limit rejects);
 * - a client that pipelines and never reads: its connection is closed once it has 32 requests
 *   unanswered (src/http/connection-share.ts), before the server builds more answers for it.
 *
 * Timing: what is asserted is the mechanism, with bounds a busy machine cannot reach: a timeout
 * closes a connection not before it expires and within SLACK_MS (10 s) after (a missing timeout
 * never closes it); normal requests are answered while the hostile connections are still open
 * (order, not milliseconds); their latency under attack stays below the hostile connections'
 * timeout (a normal request that had to wait for one would take at least that). Latencies, memory
 * and durations are printed; `npm run soak` and `npm run bench` report such figures.
 */
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import { type TestContext, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { countFds, readMemory } from '../../../tools/proc.mjs'
import { assertError } from '../../helpers/errors.js'
import { bearer, createKeyViaCli, request, type ServerProcess, sleep, startServer, useTempDir } from '../helpers/process.js'

const HEADERS_TIMEOUT_MS = 2000
const REQUEST_TIMEOUT_MS = 3000
const KEEP_ALIVE_TIMEOUT_MS = 2000
/** src/app.ts: connectionsCheckingInterval = min(1000, headersTimeout / 2). */
const SWEEP_MS = Math.min(1000, HEADERS_TIMEOUT_MS / 2)
/** Node keeps an idle keep-alive socket this much longer than the advertised keepAliveTimeout. */
const NODE_KEEP_ALIVE_BUFFER_MS = 1000
const SLACK_MS = 10_000
const MAX_HEADER_BYTES = 8192

const HOSTILE_SCRIPT = fileURLToPath(new URL('../../../tools/hostile-clients.mjs', import.meta.url))

// ---------------------------------------------------------------------------------------------
// Helpers: /proc figures of the server, raw sockets, a small keep-alive load loop.

const rssMb = (pid: number) => (readMemory(pid)?.rssKb ?? NaN) / 1024
const fdCount = (pid: number) => countFds(pid).fds

async function waitFor(what: string, condition: () => boolean, timeoutMs: number, stepMs = 50): Promise<number> {
  const started = performance.now()
  while (!condition()) {
    if (performance.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(stepMs)
  }
  return performance.now() - started
}

interface RawResponse {
  status: number
  headers: Record<string, string>
  body: unknown
}

function parseRaw(data: string): RawResponse | undefined {
  const m = /^HTTP\/1\.1 (\d{3})[^\r\n]*\r\n([\s\S]*?)\r\n\r\n([\s\S]*)$/.exec(data)
  if (!m) return undefined
  const headers: Record<string, string> = {}
  for (const line of m[2]!.split('\r\n')) {
    const colon = line.indexOf(':')
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
  }
  let body: unknown = m[3]
  try {
    body = JSON.parse(m[3]!)
  } catch {
    // not JSON
  }
  return { status: Number(m[1]), headers, body }
}

interface RawResult {
  /** Everything the server sent. */
  data: string
  /** From connect to the server closing the connection (or to our give-up). */
  ms: number
  /** performance.now() when the connection closed. */
  closedAt: number
  /** True when we gave up (destroyed the socket ourselves) after maxMs. */
  gaveUp: boolean
  response: RawResponse | undefined
}

/**
 * Opens a raw connection, runs `onConnect` (which may return an interval to clear), and resolves
 * when the server closes the connection, or after maxMs (then gaveUp is true).
 */
function rawConnection(port: number, onConnect: (socket: net.Socket) => NodeJS.Timeout | undefined, maxMs: number): Promise<RawResult> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' })
    let started = performance.now()
    let data = ''
    let timer: NodeJS.Timeout | undefined
    let gaveUp = false
    socket.on('connect', () => {
      started = performance.now()
      timer = onConnect(socket)
    })
    socket.on('data', (d) => (data += d.toString('latin1')))
    socket.on('error', () => {}) // EPIPE/ECONNRESET when the server closes first: the close tells us
    const giveUp = setTimeout(() => {
      gaveUp = true
      socket.destroy()
    }, maxMs)
    socket.on('close', () => {
      clearInterval(timer)
      clearTimeout(giveUp)
      const closedAt = performance.now()
      resolve({ data, ms: closedAt - started, closedAt, gaveUp, response: parseRaw(data) })
    })
  })
}

/** An error answer in the Error shape, after which the server closes the connection. */
function assertClosingError(response: RawResponse | undefined, status: number, code: string): void {
  assert.ok(response, 'an HTTP response')
  assertError(response, status, code)
  assert.equal(response.headers.connection, 'close')
}

interface LoadSamples {
  /** Latencies (ms) of the answered requests. */
  latencies: number[]
  errors: number
  non200: number
  elapsedMs: number
}

interface LoadFigures {
  requests: number
  errors: number
  non200: number
  p50: number
  p99: number
  max: number
  rps: number
}

const quantile = (sorted: number[], q: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
const round = (n: number) => Math.round(n * 100) / 100

/** Pools the samples of several windows into one set of figures. */
function figures(windows: LoadSamples[]): LoadFigures {
  const latencies = windows.flatMap((w) => w.latencies).sort((a, b) => a - b)
  const elapsed = windows.reduce((sum, w) => sum + w.elapsedMs, 0)
  return {
    requests: latencies.length,
    errors: windows.reduce((sum, w) => sum + w.errors, 0),
    non200: windows.reduce((sum, w) => sum + w.non200, 0),
    p50: round(quantile(latencies, 0.5)),
    p99: round(quantile(latencies, 0.99)),
    max: round(latencies.at(-1) ?? NaN),
    rps: Math.round((latencies.length / elapsed) * 1000),
  }
}

/** `concurrency` workers on `agent` (keep-alive), each sending GET /v1/pets?limit=20 back to back for `ms`. */
async function loadLoop(agent: http.Agent, port: number, key: string, concurrency: number, ms: number): Promise<LoadSamples> {
  const latencies: number[] = []
  let errors = 0
  let non200 = 0
  const one = () =>
    new Promise<void>((resolve) => {
      const t0 = performance.now()
      let done = false
      const finish = (ok: boolean) => {
        if (done) return
        done = true
        if (ok) latencies.push(performance.now() - t0)
        else errors++
        resolve()
      }
      const req = http.request({ host: '127.0.0.1', port, path: '/v1/pets?limit=20', agent, headers: bearer(key) }, (res) => {
        if (res.statusCode !== 200) non200++
        res.on('data', () => {})
        res.on('end', () => finish(true))
        res.on('error', () => finish(false))
      })
      req.setTimeout(10_000, () => req.destroy(new Error('timeout')))
      req.on('error', () => finish(false))
      req.end()
    })
  const started = performance.now()
  const deadline = started + ms
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) await one()
    }),
  )
  const elapsedMs = performance.now() - started
  return { latencies, errors, non200, elapsedMs }
}

/** Starts hostile-clients.mjs in its own process; SIGKILLed after the test and when this process exits. */
function startHostile(
  t: TestContext,
  config: Record<string, unknown>,
): { child: ChildProcess; stats: () => Record<string, number>; ready: () => boolean } {
  const child = spawn(process.execPath, [HOSTILE_SCRIPT], {
    env: { ...process.env, HOSTILE: JSON.stringify({ maxSeconds: 60, ...config }) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
  process.once('exit', kill)
  t.after(kill)
  let last: Record<string, number> = {}
  let lines = 0
  let buffer = ''
  child.stdout!.setEncoding('utf8').on('data', (s: string) => {
    buffer += s
    const parts = buffer.split('\n')
    buffer = parts.pop()!
    for (const line of parts) {
      if (!line.trim()) continue
      last = JSON.parse(line)
      lines++
    }
  })
  child.stderr!.setEncoding('utf8').on('data', (s: string) => process.stderr.write(`[hostile] ${s}`))
  return { child, stats: () => last, ready: () => lines > 0 }
}

async function stopHostile(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await Promise.race([exited, sleep(3000)])
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
}

// ---------------------------------------------------------------------------------------------

test('slow and hostile clients', { timeout: 120_000, skip: !existsSync('/proc/self/status') && 'needs Linux /proc' }, async (t) => {
  const dir = await useTempDir(t, 'animal-store-abuse-')
  const db = `${dir}/store.db`
  const limits = { plan: 'enterprise', perMinute: 10_000_000, perDay: 100_000_000 }
  const [{ key }, { key: hostileKey }] = await Promise.all([
    createKeyViaCli(db, { ...limits, name: 'normal' }),
    createKeyViaCli(db, { ...limits, name: 'hostile' }),
  ])
  const server: ServerProcess = await startServer(t, {
    dir,
    db,
    env: {
      LOG_LEVEL: 'warn',
      HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_TIMEOUT_MS),
      MAX_HEADER_BYTES: String(MAX_HEADER_BYTES),
      // Every hostile connection comes from 127.0.0.1: no share of the connections here, which
      // would refuse all but 256 of them (connection-share.test.ts tests the share).
      MAX_CONNECTIONS_PER_ADDRESS: '10000',
    },
  })
  const { port, pid } = server

  // 100 animals with long names: a limit=100 page is ~25 KB, so pipelined lists are expensive to buffer.
  for (let i = 0; i < 100; i++) {
    const res = await request(`${server.url}/v1/pets`, {
      method: 'POST',
      headers: bearer(key),
      body: { name: `${'n'.repeat(190)}-${i}`, categoryId: i, status: 'available' },
    })
    assert.equal(res.status, 201)
  }

  /** A normal request on a fresh connection (closed after the answer, so it leaves no socket behind). */
  const assertServing = () =>
    new Promise<void>((resolve, reject) => {
      const req = http.get(
        { host: '127.0.0.1', port, path: '/v1/pets?limit=20', agent: false, headers: { ...bearer(key), connection: 'close' } },
        (res) => {
          let text = ''
          res.setEncoding('utf8').on('data', (s: string) => (text += s))
          res.on('end', () => {
            try {
              assert.equal(res.statusCode, 200)
              assert.equal((JSON.parse(text) as unknown[]).length, 20)
              resolve()
            } catch (error) {
              reject(error)
            }
          })
        },
      )
      req.setTimeout(5000, () => req.destroy(new Error('normal request timed out')))
      req.on('error', reject)
    })

  /** Server fds with none of our connections open (the seeding used fetch's keep-alive pool: wait it out once). */
  await sleep(KEEP_ALIVE_TIMEOUT_MS + NODE_KEEP_ALIVE_BUFFER_MS + 300)
  const quietFds = async () => {
    await sleep(200)
    return fdCount(pid)
  }

  await t.test('slowloris headers (one header line a second, never finished): 408 and closed by HEADERS_TIMEOUT_MS', async () => {
    const result = await rawConnection(
      port,
      (socket) => {
        socket.write('GET /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\n')
        let n = 0
        return setInterval(() => socket.write(`X-Slow-${n++}: a\r\n`), 1000)
      },
      HEADERS_TIMEOUT_MS + SWEEP_MS + SLACK_MS + 5000,
    )
    console.log(
      `slowloris: closed after ${Math.round(result.ms)} ms (headersTimeout ${HEADERS_TIMEOUT_MS}, sweep ${SWEEP_MS}); answer ${result.data.split('\r\n')[0]}`,
    )
    // The server closed it while the client was still sending (the client gives up only after the
    // bound): the signal is the server's close, not a stopwatch.
    assert.equal(result.gaveUp, false, 'the server closed the connection')
    assert.ok(result.ms >= HEADERS_TIMEOUT_MS - 100, `not before the headers timeout (${result.ms} ms)`)
    assertClosingError(result.response, 408, 'request_timeout')
    await assertServing()
  })

  await t.test('slow body (Content-Length 1000, one byte a second): 408 and closed by REQUEST_TIMEOUT_MS', async () => {
    const result = await rawConnection(
      port,
      (socket) => {
        socket.write(
          `POST /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
            'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{',
        )
        return setInterval(() => socket.write(' '), 1000)
      },
      REQUEST_TIMEOUT_MS + SWEEP_MS + SLACK_MS + 5000,
    )
    console.log(
      `slow body: closed after ${Math.round(result.ms)} ms (requestTimeout ${REQUEST_TIMEOUT_MS}); answer ${JSON.stringify(result.data.split('\r\n')[0])}`,
    )
    assert.equal(result.gaveUp, false, 'the server closed the connection')
    assert.ok(result.ms >= REQUEST_TIMEOUT_MS - 100, `not before the request timeout (${result.ms} ms)`)
    assertClosingError(result.response, 408, 'request_timeout')
    await assertServing()
  })

  await t.test('oversized headers: 431 in the Error shape; more than 100 header lines are truncated, not refused', async () => {
    // One header over MAX_HEADER_BYTES.
    const huge = await rawConnection(
      port,
      (socket) => void socket.write(`GET /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(MAX_HEADER_BYTES + 100)}\r\n\r\n`),
      5000,
    )
    assert.equal(huge.gaveUp, false)
    assertClosingError(huge.response, 431, 'headers_too_large')
    // The same request as a HEAD: its 431 has no body, which its client would read as more data
    // after the answer (the fuzzer found "Data after `Connection: close`").
    const hugeHead = await rawConnection(
      port,
      (socket) => void socket.write(`HEAD /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(MAX_HEADER_BYTES + 100)}\r\n\r\n`),
      5000,
    )
    assert.equal(hugeHead.gaveUp, false)
    assert.match(hugeHead.data, /^HTTP\/1\.1 431 /)
    assert.match(hugeHead.data, /\r\nconnection: close\r\n/i)
    assert.ok(hugeHead.data.endsWith('\r\n\r\n'), `no body after the head: ${JSON.stringify(hugeHead.data.slice(-120))}`)

    // Many header lines whose total is over MAX_HEADER_BYTES.
    let many = ''
    for (let i = 0; i < 300; i++) many += `X-H${i}: ${'v'.repeat(40)}\r\n`
    const tooMany = await rawConnection(
      port,
      (socket) => void socket.write(`GET /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\n${many}\r\n`),
      5000,
    )
    assert.equal(tooMany.gaveUp, false)
    assertClosingError(tooMany.response, 431, 'headers_too_large')

    // 150 small header lines (under the byte limit): Node keeps the first maxHeadersCount (100) and
    // drops the rest without an error. An Authorization header after them is lost (401); before them, kept (200).
    let lines = ''
    for (let i = 0; i < 150; i++) lines += `X-H${i}: v\r\n`
    const ask = (head: string) =>
      rawConnection(
        port,
        (socket) => void socket.write(`GET /v1/pets?limit=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${head}\r\n`),
        5000,
      )
    const authLast = await ask(`${lines}Authorization: Bearer ${key}\r\n`)
    const authFirst = await ask(`Authorization: Bearer ${key}\r\n${lines}`)
    console.log(`151 header lines: Authorization last -> ${authLast.response?.status}, first -> ${authFirst.response?.status}`)
    assert.equal(authLast.response?.status, 401, 'header lines after the 100th are dropped')
    assert.equal(authFirst.response?.status, 200)

    await assertServing()
  })

  await t.test('sockets left half-open after an error answer do not hold server sockets', async () => {
    const before = await quietFds()
    const sockets: net.Socket[] = []
    let ended = 0
    for (let i = 0; i < 20; i++) {
      // allowHalfOpen: we never close our side, even after the server has closed its side.
      const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true })
      socket.on('error', () => {})
      socket.on('data', () => {})
      socket.on('end', () => ended++)
      if (i % 2 === 0) socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(MAX_HEADER_BYTES + 100)}\r\n\r\n`) // 431
      sockets.push(socket) // the others send nothing: 408 after the headers timeout
    }
    t.after(() => {
      for (const s of sockets) s.destroy()
    })
    await waitFor('the server to answer and close its side of all 20', () => ended === 20, HEADERS_TIMEOUT_MS + SWEEP_MS + SLACK_MS)
    // The inactivity timeout (REQUEST_TIMEOUT_MS) then destroys the server's half-closed sockets.
    const ms = await waitFor(
      'the server to release the half-open sockets',
      () => fdCount(pid) <= before + 2,
      REQUEST_TIMEOUT_MS + SLACK_MS + 2000,
      100,
    )
    console.log(
      `half-open: 20 sockets answered and released by the server ${Math.round(ms)} ms after its answers (fds ${before} -> ${fdCount(pid)})`,
    )
    await assertServing()
  })

  await t.test('500 idle connections are closed by the timeouts while normal traffic is served', async () => {
    const before = await quietFds()
    const silent: Promise<RawResult>[] = []
    for (let i = 0; i < 500; i++) silent.push(rawConnection(port, () => undefined, 30_000))
    // 50 more send one request, read the answer and then idle on the keep-alive connection.
    const kept: Promise<RawResult>[] = []
    for (let i = 0; i < 50; i++) {
      kept.push(rawConnection(port, (socket) => void socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'), 30_000))
    }
    const opened = performance.now()
    await waitFor('the server to accept all 550', () => fdCount(pid) >= before + 540, 5000 + SLACK_MS)
    const t0 = performance.now()
    await assertServing()
    const servedAt = performance.now()
    const servedMs = servedAt - t0

    const silentResults = await Promise.all(silent)
    const keptResults = await Promise.all(kept)
    const all = performance.now() - opened
    const silentMax = Math.max(...silentResults.map((r) => r.ms))
    const keptMax = Math.max(...keptResults.map((r) => r.ms))
    const silent408 = silentResults.filter((r) => r.response?.status === 408).length
    console.log(
      `idle: 500 silent closed within ${Math.round(silentMax)} ms (${silent408} with a 408), ` +
        `50 keep-alive closed within ${Math.round(keptMax)} ms, all within ${Math.round(all)} ms; ` +
        `a normal request meanwhile took ${Math.round(servedMs)} ms`,
    )
    // Order, not milliseconds: the server's headers-timeout sweep and its answer to us run in the
    // same process, so a busy machine delays both alike; a server blocked by the idle sockets answers after.
    const firstClosedAt = Math.min(...silentResults.map((r) => r.closedAt))
    assert.ok(servedAt < firstClosedAt, `normal request served while the 550 sockets idled (it took ${Math.round(servedMs)} ms)`)
    assert.ok(silentResults.every((r) => !r.gaveUp) && keptResults.every((r) => !r.gaveUp), 'the server closed every idle socket')
    assert.ok(silentMax <= HEADERS_TIMEOUT_MS + SWEEP_MS + SLACK_MS, `silent sockets closed by the headers timeout (${silentMax} ms)`)
    assert.ok(keptMax <= KEEP_ALIVE_TIMEOUT_MS + NODE_KEEP_ALIVE_BUFFER_MS + SLACK_MS, `idle keep-alive sockets closed (${keptMax} ms)`)
    assert.ok(keptResults.every((r) => r.response?.status === 200))
    await waitFor('the server fds to return to the baseline', () => fdCount(pid) <= before + 5, 5000 + SLACK_MS)
    await assertServing()
  })

  await t.test('a client that pipelines requests and never reads: bounded memory, others served, socket dropped', async () => {
    const before = await quietFds()
    const rssBefore = rssMb(pid)
    let rssPeak = rssBefore
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMb(pid))), 100)
    t.after(() => clearInterval(sampler))

    const requestText = `GET /v1/pets?limit=100 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${hostileKey}\r\n\r\n`
    const socket = net.connect({ port, host: '127.0.0.1' })
    socket.pause() // never read
    socket.on('error', () => {})
    let written = 0
    let closedAt = 0
    const started = performance.now()
    socket.on('close', () => (closedAt = performance.now()))
    t.after(() => socket.destroy())
    const pump = () => {
      while (written < 200_000 && !socket.destroyed) {
        written++
        if (!socket.write(requestText)) {
          socket.once('drain', pump)
          return
        }
      }
    }
    socket.on('connect', pump)

    // Normal traffic meanwhile, and for a while after: every request answered.
    let normal = 0
    let normalMax = 0
    while (performance.now() - started < 2000 || (closedAt === 0 && performance.now() - started < 25_000 + SLACK_MS)) {
      const t0 = performance.now()
      await assertServing()
      normalMax = Math.max(normalMax, performance.now() - t0)
      normal++
      await sleep(100)
    }
    clearInterval(sampler)
    const closedAfter = closedAt - started
    console.log(
      `never-reading client: wrote ${written} pipelined requests (${Math.round((written * requestText.length) / 1024)} KiB) ` +
        `before its socket filled; server RSS ${rssBefore.toFixed(1)} -> peak ${rssPeak.toFixed(1)} MB ` +
        `(+${(rssPeak - rssBefore).toFixed(1)}); socket dropped by the server after ${Math.round(closedAfter)} ms; ` +
        `${normal} normal requests meanwhile and after, slowest ${Math.round(normalMax)} ms`,
    )
    assert.ok(closedAt > 0, 'the server dropped the never-reading connection')
    // Dropped for its pipelining (MAX_PIPELINED requests unanswered, src/http/connection-share.ts),
    // not by the inactivity timeout (REQUEST_TIMEOUT_MS after its writes stalled), which a missing
    // cap would leave to do it: the server built at most that many answers for it.
    const metrics = await (await fetch(`${server.adminUrl}/metrics`)).text()
    assert.match(metrics, /animal_store_connections_refused_total\{listener="main",reason="pipelining"\} 1\n/)
    await waitFor('the server fds to return to the baseline', () => fdCount(pid) <= before + 5, 5000 + SLACK_MS)
  })

  await t.test('one bad client does not hold up the others: every normal request answered, none waits for a hostile one', async (t) => {
    const CONCURRENCY = 20
    const ALONE_MS = 1500
    // A hostile period covers the connection flood and the pipelined burst at its start, and the
    // sweep that answers and closes the 550 slow/idle sockets 2-3 s in.
    const HOSTILE_MS = 3500
    const hostile = startHostile(t, { port, key: hostileKey, slowloris: 50, idle: 500, neverReading: 1, paused: true, maxSeconds: 90 })
    await waitFor('the hostile client process', hostile.ready, 10_000 + SLACK_MS)
    // The normal clients keep their connections across the periods (gaps < KEEP_ALIVE_TIMEOUT_MS).
    const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY })
    t.after(() => agent.destroy())
    const load = (ms: number) => loadLoop(agent, port, key, CONCURRENCY, ms)
    await load(1000) // warm-up (JIT, caches, sockets)

    // Quiet and hostile periods alternate (quiet, hostile, quiet, hostile, quiet), so that load from
    // other processes on the machine falls on both sides alike; samples are pooled per side.
    const alone: LoadSamples[] = []
    const withHostile: LoadSamples[] = []
    for (let round = 0; round < 2; round++) {
      alone.push(await load(ALONE_MS))
      hostile.child.kill('SIGUSR1') // open the hostile sockets
      withHostile.push(await load(HOSTILE_MS))
      hostile.child.kill('SIGUSR2') // drop them
      await sleep(300)
    }
    alone.push(await load(ALONE_MS))
    const result = { alone: figures(alone), hostile: figures(withHostile) }
    console.log(
      `normal load alone ${JSON.stringify(result.alone)}\n` +
        `  with hostile clients ${JSON.stringify(result.hostile)}\n` +
        `  hostile clients: ${JSON.stringify(hostile.stats())}`,
    )
    await stopHostile(hostile.child)
    const clients = hostile.stats()
    assert.equal(result.alone.errors + result.alone.non200, 0, 'no failed normal request alone')
    assert.equal(result.hostile.errors + result.hostile.non200, 0, 'no failed normal request with hostile clients')
    // The hostile connections were there (their 408s and closing are the subtests above: a hostile
    // period of 3.5 s can end before a machine busy with other work has swept them, as a CI run
    // beside other tests saw, so they are not asserted here).
    assert.ok((clients.slowlorisOpened ?? 0) > 0 && (clients.idleOpened ?? 0) > 0, 'the hostile connections were opened')
    assert.ok((clients.neverReadingRequestsWritten ?? 0) > 0, 'the never-reading client pipelined requests')
    // A normal request that had to wait for a hostile connection would wait for its timeout (the
    // headers timeout at least). The p99 ratio with/without them is printed above, not asserted:
    // it moves with whatever else the machine runs (docs/limits.md has measured figures).
    assert.ok(
      result.hostile.p99 < HEADERS_TIMEOUT_MS,
      `p99 with hostile clients ${result.hostile.p99} ms reaches the hostile connections' timeout (${HEADERS_TIMEOUT_MS} ms)`,
    )
    await assertServing()
  })

  assert.equal(server.child.exitCode, null, 'the server is still running')
})

test('a request cut off for slowness is answered 408 and written to the access log', { timeout: 60_000 }, async (t) => {
  const dir = await useTempDir(t, 'animal-store-slow-')
  const db = `${dir}/store.db`
  const { id: keyId, key } = await createKeyViaCli(db, { name: 'slow' })
  // Short timeouts (each case takes a second or two); LOG_LEVEL info for the access lines.
  const server = await startServer(t, { dir, db, env: { LOG_LEVEL: 'info', HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '1500' } })
  const accessLines = (): Record<string, unknown>[] =>
    readFileSync(server.logFile, 'utf8')
      .split('\n')
      .filter((line) => line.includes('"msg":"request"'))
      .map((line) => JSON.parse(line))
  /** The access line `match` finds, once the server has written it (its logger flushes every 100 ms). */
  const accessLine = async (what: string, match: (line: Record<string, unknown>) => boolean) => {
    await waitFor(`the access line of ${what}`, () => accessLines().some(match), SLACK_MS)
    const { level, time, pid, ms, ...fields } = accessLines().find(match)!
    return fields
  }
  const postHead = (requestId: string) =>
    `POST /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nX-Request-Id: ${requestId}\r\n` +
    'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{'

  await t.test('a body that stops after its first byte: 408, and an access line with the key id and the client address', async () => {
    // Nothing moves after the headers: the inactivity timeout (= REQUEST_TIMEOUT_MS) expires first.
    const result = await rawConnection(server.port, (socket) => void socket.write(postHead('stalled-body')), SLACK_MS)
    assert.equal(result.gaveUp, false, 'the server closed the connection')
    assertClosingError(result.response, 408, 'request_timeout')
    assert.deepEqual(await accessLine('the stalled body', (line) => line.reqId === 'stalled-body'), {
      reqId: 'stalled-body',
      method: 'POST',
      url: '/v1/pets',
      status: 408,
      ip: '127.0.0.1',
      keyId,
      msg: 'request',
    })
  })

  await t.test('a body trickling a byte every 200 ms: 408, and an access line with the key id and the client address', async () => {
    // Always some traffic: the requestTimeout sweep cuts it off.
    const result = await rawConnection(
      server.port,
      (socket) => {
        socket.write(postHead('trickled-body'))
        return setInterval(() => socket.write(' '), 200)
      },
      SLACK_MS,
    )
    assert.equal(result.gaveUp, false, 'the server closed the connection')
    assertClosingError(result.response, 408, 'request_timeout')
    assert.deepEqual(await accessLine('the trickled body', (line) => line.reqId === 'trickled-body'), {
      reqId: 'trickled-body',
      method: 'POST',
      url: '/v1/pets',
      status: 408,
      ip: '127.0.0.1',
      keyId,
      msg: 'request',
    })
  })

  await t.test('headers never finished, or too large: 408 / 431, and an access line with the status and the client address', async () => {
    // Answered before any request object exists: a line without request id, method or URL.
    const slowHeaders = await rawConnection(server.port, (socket) => void socket.write('GET /v1/pets HTTP/1.1\r\nHost: 1'), SLACK_MS)
    assertClosingError(slowHeaders.response, 408, 'request_timeout')
    assert.deepEqual(await accessLine('the unfinished headers', (line) => line.reqId === undefined && line.status === 408), {
      status: 408,
      ip: '127.0.0.1',
      msg: 'request',
    })
    const bigHeaders = await rawConnection(
      server.port,
      (socket) => void socket.write(`GET /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
      SLACK_MS,
    )
    assertClosingError(bigHeaders.response, 431, 'headers_too_large')
    assert.deepEqual(await accessLine('the oversized headers', (line) => line.reqId === undefined && line.status === 431), {
      status: 431,
      ip: '127.0.0.1',
      msg: 'request',
    })
  })
})
