/**
 * The server process from start to stop: first-key bootstrap, secrets kept out of the log,
 * graceful SIGTERM under load, start-up configuration errors, health/readiness/metrics, request ids.
 */
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import http from 'node:http'
import net from 'node:net'
import { join } from 'node:path'
import { test } from 'node:test'
import {
  bearer,
  createKeyViaCli,
  request,
  runCli,
  runServerToExit,
  sleep,
  startServer,
  useTempDir,
  waitFor,
  waitUntilCounted,
} from '../helpers/process.js'

const ANY_KEY = /as_(?:live|test)_[0-9A-Za-z]{38}/g

test('first start prints one key once; the key works and never reaches the log', { timeout: 40_000 }, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const logFile = join(dir, 'server.log')

  const first = await startServer(t, { dir, db, logFile, env: { BOOTSTRAP_KEY: undefined } })
  const printed = [...new Set(first.stdout().match(ANY_KEY) ?? [])]
  assert.equal(printed.length, 1, `exactly one key on stdout:\n${first.stdout()}`)
  const key = printed[0]!
  assert.match(key, /^as_live_/)
  assert.match(first.stdout(), /shown only this once/)
  assert.doesNotMatch(first.stderr(), ANY_KEY)

  // The key works, and a few ways of using it (or not) leave no trace of it in the log.
  const auth = bearer(key)
  assert.equal((await request(`${first.url}/v1/pets`, { headers: auth })).status, 200)
  const created = await request(`${first.url}/v1/pets`, { method: 'POST', headers: auth, body: { name: 'Rex', categoryId: 1 } })
  assert.equal(created.status, 201, created.text)
  const bad = await request(`${first.url}/v1/pets`, { method: 'POST', headers: auth, body: { name: 'Rex', categoryId: 'one' } })
  assert.equal(bad.status, 400, bad.text)
  const badJson = await request(`${first.url}/v1/pets`, { method: 'POST', headers: auth, body: '{"name": ' })
  assert.equal(badJson.status, 400, badJson.text)
  assert.equal((await request(`${first.url}/v1/pets/999999`, { headers: auth })).status, 404)
  assert.equal((await request(`${first.url}/v1/pets?limit=0`, { headers: auth })).status, 400)
  // A wrong key: well-formed but unknown (the real key with its last character changed), and malformed.
  const wrong = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A')
  for (const k of [wrong, key + 'x', key.replace('as_live_', 'as_test_')]) {
    const res = await request(`${first.url}/v1/pets`, { headers: bearer(k) })
    assert.equal(res.status, 401, res.text)
    assert.ok(!res.text.includes(key.slice(8, -6)), 'a 401 does not echo the key')
  }
  assert.equal((await request(`${first.url}/v1/pets`, { headers: { authorization: key } })).status, 401, 'key without Bearer')
  assert.equal((await request(`${first.url}/v1/pets`)).status, 401)
  for (const res of [bad, badJson]) assert.ok(!res.text.includes(key), 'error bodies do not echo the key')

  const stopped = await first.stop('SIGTERM')
  assert.equal(stopped.code, 0, `clean exit on SIGTERM:\n${first.stderr()}`)

  // Second start on the same database: no key printed.
  const second = await startServer(t, { dir, db, logFile, env: { BOOTSTRAP_KEY: undefined } })
  assert.doesNotMatch(second.stdout(), ANY_KEY, `no key on the second start:\n${second.stdout()}`)
  assert.equal((await request(`${second.url}/v1/pets`, { headers: auth })).status, 200, 'the first key still works')
  assert.equal((await second.stop('SIGTERM')).code, 0)

  const log = await readFile(logFile, 'utf8')
  const requestLines = log.split('\n').filter((l) => l.includes('"msg":"request"'))
  assert.ok(requestLines.length >= 10, `the log has the access lines (${requestLines.length}):\n${log}`)
  assert.ok(!log.includes(key), 'the key is not in the log')
  assert.ok(!log.includes(key.slice(8, -6)), 'no part of the key beyond its prefix is in the log')
  assert.doesNotMatch(log, ANY_KEY, 'no full key of any kind in the log')
  // The access line names the key by id instead.
  assert.match(log, /"keyId":"key_[0-9A-Za-z]+"/)
})

/** A POST whose body is sent in two parts, so it is in flight for as long as the test wants. */
function slowCreate(url: string, key: string, name: string) {
  const body = Buffer.from(JSON.stringify({ name, categoryId: 42, status: 'pending' }))
  const half = Math.floor(body.length / 2)
  let finish!: () => void
  const response = new Promise<{ status: number; body: string; connection: string | undefined }>((resolve, reject) => {
    const req = http.request(
      `${url}/v1/pets`,
      {
        method: 'POST',
        agent: false,
        headers: { ...bearer(key), 'content-type': 'application/json', 'content-length': String(body.length) },
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (s: string) => (text += s))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, connection: res.headers.connection }))
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.flushHeaders()
    req.write(body.subarray(0, half))
    finish = () => req.end(body.subarray(half))
  })
  return { response, finish: () => finish() }
}

interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
}

/** Parses HTTP/1.1 responses with Content-Length bodies from one socket's bytes. */
function parseResponses(raw: Buffer): RawResponse[] {
  const out: RawResponse[] = []
  let rest = raw
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n')
    if (end < 0) break
    const [statusLine, ...headerLines] = rest.subarray(0, end).toString('latin1').split('\r\n')
    const headers: Record<string, string> = {}
    for (const line of headerLines) {
      const i = line.indexOf(':')
      headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim()
    }
    const length = Number(headers['content-length'] ?? 0)
    out.push({ status: Number(statusLine!.split(' ')[1]), headers, body: rest.subarray(end + 4, end + 4 + length).toString('utf8') })
    rest = rest.subarray(end + 4 + length)
  }
  return out
}

/**
 * On one connection: a POST whose body is held back, then (once released) the rest of it with a
 * second, pipelined request behind it. Released after SIGTERM, the second request arrives while
 * the server is closing, on a connection that is not idle.
 */
function pipelined(port: number, key: string) {
  const body = Buffer.from(JSON.stringify({ name: 'pipelined', categoryId: 43 }))
  const half = Math.floor(body.length / 2)
  const socket = net.connect({ host: '127.0.0.1', port })
  const chunks: Buffer[] = []
  const done = new Promise<RawResponse[]>((resolve, reject) => {
    socket.on('data', (c: Buffer) => chunks.push(c))
    socket.on('error', reject)
    socket.on('close', () => resolve(parseResponses(Buffer.concat(chunks))))
  })
  socket.write(
    `POST /v1/pets HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${body.length}\r\nX-Request-Id: pipelined-1\r\n\r\n`,
  )
  socket.write(body.subarray(0, half))
  const finish = () =>
    socket.write(
      Buffer.concat([
        body.subarray(half),
        Buffer.from(
          `GET /v1/pets HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${key}\r\nX-Request-Id: pipelined-2\r\n\r\n`,
        ),
      ]),
    )
  return { done, finish }
}

test('SIGTERM under load: in-flight requests complete, then a clean exit', { timeout: 40_000 }, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const { key } = await createKeyViaCli(db, { plan: 'enterprise', name: 'load', perMinute: 1_000_000, perDay: 10_000_000 })
  // The in-flight requests have a key of their own, so that its count says when the server has them.
  const IN_FLIGHT_QUOTA = 100_000
  const inFlight = await createKeyViaCli(db, { plan: 'enterprise', name: 'in flight', perMinute: IN_FLIGHT_QUOTA, perDay: IN_FLIGHT_QUOTA })
  const server = await startServer(t, { dir, db })

  // Requests the server has accepted and is still reading: they must complete after SIGTERM.
  const slow = Array.from({ length: 10 }, (_, i) => slowCreate(server.url, inFlight.key, `slow-${i}`))
  for (const s of slow) s.response.catch(() => {}) // asserted below
  const pipe = pipelined(server.port, inFlight.key)
  pipe.done.catch(() => {})
  // Background load on keep-alive connections (GET) and on one connection per request (POST), each
  // request with its own X-Request-Id so the log tells which ones the server took in.
  let stopLoad = false
  const outcomes = { ok: 0, unavailable: 0, refused: 0, other: [] as string[] }
  const failedIds = new Map<string, string>()
  const answeredIds = new Set<string>() // 200/201
  const unavailable: Array<{ id: string; body: unknown; headers: Headers }> = []
  const load = Array.from({ length: 8 }, async (_, worker) => {
    for (let n = 0; !stopLoad; n++) {
      const id = `load-${worker}-${n}`
      try {
        const res =
          worker % 2 === 0
            ? await request(`${server.url}/v1/pets?limit=5`, { headers: { ...bearer(key), 'x-request-id': id }, timeoutMs: 15_000 })
            : await request(`${server.url}/v1/pets`, {
                method: 'POST',
                headers: { ...bearer(key), 'x-request-id': id, connection: 'close' },
                body: { name: 'load', categoryId: 7 },
                timeoutMs: 15_000,
              })
        if (res.status === 200 || res.status === 201) {
          outcomes.ok++
          answeredIds.add(id)
        } else if (res.status === 503) {
          outcomes.unavailable++
          unavailable.push({ id, body: res.body, headers: res.headers })
        } else outcomes.other.push(`${id}: status ${res.status}: ${res.text}`)
      } catch (error) {
        const code = (error as { cause?: { code?: string } }).cause?.code
        if (code === 'ECONNREFUSED') {
          outcomes.refused++
          return // the server is no longer listening: done
        }
        failedIds.set(id, `${String(error)} (${code})`)
        await sleep(20)
      }
    }
  })
  // Waited for, not slept: on a busy machine a fixed pause may not be enough.
  await waitUntilCounted(server.url, inFlight.key, IN_FLIGHT_QUOTA, slow.length + 1) // the slow POSTs and the pipelined one are in
  assert.ok(await waitFor(() => outcomes.ok >= 50, 20_000), `the load was being served (${outcomes.ok} answered)`)

  // The server's own deadline (close-with-grace, 10 s, then exit 1) decides, not this helper's.
  const stopped = server.stop('SIGTERM', 30_000)
  // Shutting down now (new requests get 503 or are refused), while the slow requests wait for the rest of their bodies.
  const closing = await waitFor(async () => {
    const probe = await request(`${server.url}/healthz`).catch(() => undefined)
    return probe === undefined || probe.status === 503
  }, 20_000)
  assert.ok(closing, 'the server started closing after SIGTERM')
  for (const s of slow) s.finish()
  pipe.finish()
  const results = await Promise.allSettled(slow.map((s) => s.response))
  const piped = await pipe.done
  const { code, signal, ms } = await stopped
  stopLoad = true
  await Promise.all(load)

  // The access log says which requests the server took in and answered.
  const logged = new Set<string>()
  for (const line of (await readFile(server.logFile, 'utf8')).split('\n')) {
    if (!line.includes('"msg":"request"')) continue
    logged.add((JSON.parse(line) as { reqId: string }).reqId)
  }
  const lostAfterAnswer = [...failedIds].filter(([id]) => logged.has(id))
  process.stdout.write(
    `SIGTERM under load: exit ${code} after ${ms.toFixed(0)} ms; load: ${outcomes.ok} ok, ${outcomes.unavailable} 503, ` +
      `${outcomes.refused} refused after close, ${failedIds.size} cut before the server took them in ` +
      `(${[...failedIds.values()].join('; ') || 'none'}), ${lostAfterAnswer.length} cut after\n`,
  )
  results.forEach((r, i) => {
    assert.equal(r.status, 'fulfilled', `in-flight request ${i} completed: ${r.status === 'rejected' ? String(r.reason) : ''}`)
    if (r.status === 'fulfilled') assert.equal(r.value.status, 201, `in-flight request ${i}: ${r.value.body}`)
  })
  // Exit 0 also says it drained before its 10 s deadline (which exits 1); how long it took is printed above.
  assert.equal(code, 0, `exit status 0 (signal ${signal}); stderr:\n${server.stderr()}`)
  assert.deepEqual(outcomes.other, [], 'every answer was 200/201 or 503')
  // A request the server answered (its access line is in the log) must not be cut on the client. Those
  // cut without a log line raced the close (sent on a connection the server was closing as idle, or
  // still in the kernel's accept queue); HTTP/1.1 clients retry those.
  assert.deepEqual(lostAfterAnswer, [], 'no request the server took in was cut off')
  for (const id of answeredIds) assert.ok(logged.has(id), `answered request ${id} has its access line (log flushed on exit)`)
  assert.ok(failedIds.size <= 8, `at most one cut request per load worker (${failedIds.size})`)
  // The pipelined pair: the first (in flight at SIGTERM) completes; the second, which arrived while
  // closing, is refused with a 503 in the Error shape, and the connection is closed.
  assert.equal(piped.length, 2, `two responses on the pipelined connection: ${JSON.stringify(piped)}`)
  assert.equal(piped[0]!.status, 201, piped[0]!.body)
  assert.equal(piped[1]!.status, 503, piped[1]!.body)
  assert.equal(piped[1]!.headers.connection, 'close')
  const refusedBody = JSON.parse(piped[1]!.body) as Record<string, unknown>
  assert.deepEqual(Object.keys(refusedBody).sort(), ['code', 'message', 'status'], `503 while closing: Error shape: ${piped[1]!.body}`)
  assert.equal(refusedBody.code, 'service_unavailable')
  assert.equal(refusedBody.status, 503)
  assert.equal(piped[1]!.headers['x-request-id'], 'pipelined-2', '503 while closing echoes the request id')
  // A request refused because the server is closing is an error like any other: the Error shape.
  for (const u of unavailable) {
    assert.deepEqual(
      Object.keys(u.body as object).sort(),
      ['code', 'message', 'status'],
      `503 while closing has the Error shape {code, message, status}: ${JSON.stringify(u.body)}`,
    )
    assert.equal((u.body as { status: number }).status, 503)
    assert.equal((u.body as { code: string }).code, 'service_unavailable')
    assert.equal(u.headers.get('x-request-id'), u.id, '503 while closing echoes the request id')
  }

  // What the in-flight requests created was kept.
  const again = await startServer(t, { dir, db })
  const ids = results.map((r) => (r.status === 'fulfilled' ? (JSON.parse(r.value.body) as { id: number }).id : -1))
  for (const id of ids) {
    const res = await request(`${again.url}/v1/pets/${id}`, { headers: bearer(key) })
    assert.equal(res.status, 200, res.text)
    assert.match((res.body as { name: string }).name, /^slow-\d$/)
  }
  assert.equal((await again.stop()).code, 0)
})

test('a bad configuration stops the start with status 2 and names the variable', { timeout: 120_000 }, async (t) => {
  const dir = await useTempDir(t)
  const cases: Array<[string, string]> = [
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DURABILITY', 'maybe'],
    ['LOG_LEVEL', 'loud'],
    ['KEY_REFRESH_MS', '10'],
    ['BOOTSTRAP_KEY', 'perhaps'],
    ['ANIMAL_STORE_ENV', 'dev'],
    ['DATABASE_URL', 'mysql://db/x'],
  ]
  const results = await Promise.all(cases.map(([name, value]) => runServerToExit({ dir, env: { [name]: value } })))
  cases.forEach(([name, value], i) => {
    const r = results[i]!
    assert.equal(r.code, 2, `${name}=${value}: exit 2 (got ${r.code}/${r.signal}); stderr: ${r.stderr}`)
    assert.match(r.stderr, new RegExp(`configuration error: ${name}\\b`), `${name}=${value}: stderr names the variable`)
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace')
  })
  // The same through the CLI's serve command.
  const viaCli = await runCli(['serve'], { db: join(dir, 'cli.db'), env: { PORT: 'abc' } })
  assert.equal(viaCli.code, 2, viaCli.stderr)
  assert.match(viaCli.stderr, /PORT/)
})

test('healthz, readyz, metrics and request ids', { timeout: 30_000 }, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const normal = await createKeyViaCli(db, { plan: 'pro', name: 'normal' })
  const tiny = await createKeyViaCli(db, { plan: 'enterprise', name: 'tiny', perMinute: 2, perDay: 2 })
  const server = await startServer(t, { dir, db })

  const health = await request(`${server.url}/healthz`)
  assert.equal(health.status, 200)
  assert.deepEqual(health.body, { status: 'ok' })
  const ready = await request(`${server.url}/readyz`)
  assert.equal(ready.status, 200, ready.text)
  assert.match(ready.headers.get('content-type') ?? '', /application\/json/)
  const readyBody = ready.body as { status: string; checks: { database: { engine: string; status: string } } }
  assert.equal(readyBody.status, 'ready')
  assert.deepEqual(readyBody.checks.database, { engine: 'sqlite', status: 'up' })

  assert.equal((await request(`${server.url}/v1/pets`, { headers: bearer(normal.key) })).status, 200)
  assert.equal((await request(`${server.url}/v1/pets`)).status, 401)
  const statuses: number[] = []
  for (let i = 0; i < 4; i++) statuses.push((await request(`${server.url}/v1/pets`, { headers: bearer(tiny.key) })).status)
  assert.deepEqual(statuses, [200, 200, 429, 429])

  const metrics = await request(`${server.adminUrl}/metrics`)
  assert.equal(metrics.status, 200)
  assert.match(metrics.headers.get('content-type') ?? '', /text\/plain/)
  const lines = metrics.text.split('\n')
  const requestsLine = (status: number) =>
    lines.find(
      (l) =>
        l.startsWith('animal_store_http_requests_total{') &&
        l.includes('route="/v1/pets"') &&
        l.includes(`status="${status}"`) &&
        l.includes('method="GET"'),
    )
  assert.ok(requestsLine(200), `a GET /v1/pets 200 series:\n${metrics.text}`)
  assert.match(requestsLine(200)!, / 3$/, 'three 200s counted')
  assert.ok(requestsLine(401), 'a 401 series')
  assert.match(requestsLine(429)!, / 2$/, 'two 429s counted')
  assert.ok(
    lines.some((l) => /^animal_store_rate_limited_total\{code="rate_limited"\} 2$/.test(l)),
    'two requests counted as rate limited',
  )
  assert.ok(!metrics.text.includes(normal.key) && !metrics.text.includes(tiny.key), 'no key in metrics')

  // X-Request-Id: a safe client id is echoed; an unsafe one is replaced.
  const safe = 'client-req_42.abc:XYZ'
  const echoed = await request(`${server.url}/healthz`, { headers: { 'x-request-id': safe } })
  assert.equal(echoed.headers.get('x-request-id'), safe)
  const onError = await request(`${server.url}/v1/pets`, { headers: { 'x-request-id': safe } })
  assert.equal(onError.status, 401)
  assert.equal(onError.headers.get('x-request-id'), safe, 'echoed on errors too')
  for (const unsafe of ['has spaces in it', 'a'.repeat(300), '<script>', 'x"y']) {
    const res = await request(`${server.url}/healthz`, { headers: { 'x-request-id': unsafe } })
    const id = res.headers.get('x-request-id')
    assert.ok(id, 'a request id is always returned')
    assert.notEqual(id, unsafe, `unsafe id ${JSON.stringify(unsafe.slice(0, 20))} replaced`)
    assert.match(id, /^[0-9a-f-]{36}$/)
  }
  const generated = (await request(`${server.url}/healthz`)).headers.get('x-request-id')
  assert.match(generated ?? '', /^[0-9a-f-]{36}$/, 'one is generated when none is sent')

  assert.equal((await server.stop()).code, 0)
  const log = await readFile(server.logFile, 'utf8')
  assert.match(log, new RegExp(`"reqId":"${safe.replace(/\./g, '\\.')}"`), "the safe id is the log line's reqId")
  assert.ok(!log.includes('has spaces in it'), 'the unsafe id is not logged')
})

test('SHUTDOWN_DRAIN_MS: after SIGTERM /readyz is 503 while every request is still served, then a clean exit', {
  timeout: 40_000,
}, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const { key } = await createKeyViaCli(db, { plan: 'pro', name: 'drain' })
  const server = await startServer(t, { dir, db, env: { SHUTDOWN_DRAIN_MS: '3000' } })
  assert.equal((await request(`${server.url}/readyz`)).status, 200)
  const signalled = performance.now()
  const stopped = server.stop('SIGTERM', 30_000)
  const draining = await waitFor(async () => (await request(`${server.url}/readyz`)).status === 503, 2_500, 20)
  assert.ok(draining, '/readyz answers 503 soon after SIGTERM')
  const readyz = await request(`${server.url}/readyz`)
  assert.deepEqual(readyz.body, { status: 'draining' })
  // Still serving, on new connections too, while the balancer takes the instance out.
  const created = await request(`${server.url}/v1/pets`, { method: 'POST', headers: bearer(key), body: { name: 'late', categoryId: 1 } })
  assert.equal(created.status, 201, created.text)
  const servedWithin = performance.now() - signalled
  const { code, ms } = await stopped
  assert.equal(code, 0, server.stderr())
  process.stdout.write(
    `drain: a 201 ${servedWithin.toFixed(0)} ms after SIGTERM; exit ${code} after ${ms.toFixed(0)} ms (SHUTDOWN_DRAIN_MS=3000)\n`,
  )
  assert.ok(servedWithin < ms, 'served during the drain, before the exit')
  const log = await readFile(join(dir, 'server.log'), 'utf8')
  assert.match(log, /draining: \/readyz answers 503/)
})
