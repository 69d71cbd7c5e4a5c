import assert from 'node:assert/strict'
import { describe, type TestContext, test } from 'node:test'
import fc from 'fast-check'
import {
  AnimalStoreClient,
  ApiError,
  type AttemptEvent,
  NetworkError,
  type RetryPolicy,
  UnexpectedResponseError,
} from '../../client/src/index.js'
import { apiError, type FlakyServer, pet, type Step, startFlakyServer, VirtualClock } from './flaky-server.js'

const KEY = 'as_live_0000000000000000000000000000000000aaaaaa'
const POLICY: RetryPolicy = { maxRetries: 5, baseDelayMs: 250, maxDelayMs: 20_000, deadlineMs: 60_000, attemptTimeoutMs: 2_000 }

async function setup(t: TestContext, options: { retry?: Partial<RetryPolicy>; random?: () => number } = {}) {
  const server = await startFlakyServer(t)
  const clock = new VirtualClock()
  const events: AttemptEvent[] = []
  const client = new AnimalStoreClient({
    baseUrl: server.baseUrl,
    apiKey: KEY,
    retry: { ...POLICY, ...options.retry },
    clock,
    random: options.random ?? Math.random,
    onAttempt: (e) => events.push(e),
  })
  return { server, clock, client, events }
}

/** Every request of one create carried the same Idempotency-Key (and there was one). */
function assertOneKey(server: FlakyServer): string {
  const keys = new Set(server.received.map((r) => r.headers['idempotency-key']))
  assert.equal(keys.size, 1, `keys: ${[...keys].join(', ')}`)
  const [key] = keys
  assert.match(String(key), /^"[0-9a-f-]{36}"$/)
  return String(key)
}

const httpDate = (ms: number) => new Date(ms).toUTCString()

describe('client retries against a scripted flaky server', () => {
  test('503s, then a 201: one create, the same Idempotency-Key on every attempt, full-jitter waits under the cap', async (t) => {
    const { server, clock, client } = await setup(t, { random: () => 0.999 })
    server.script([
      apiError(503, 'service_unavailable'),
      apiError(503, 'service_unavailable'),
      apiError(503, 'service_unavailable'),
      pet(41),
    ])
    const created = await client.createPet({ name: 'Rex', categoryId: 1 })
    assert.equal(created.id, 41)
    assert.equal(server.received.length, 4)
    assertOneKey(server)
    assert.deepEqual(
      server.received.map((r) => r.body),
      Array(4).fill('{"name":"Rex","categoryId":1}'),
    )
    // Retry n waits in [0, min(cap, base * 2^n)); random 0.999 puts each wait just under its ceiling.
    assert.deepEqual(
      clock.sleeps.map((s) => s.ms),
      [249, 499, 999],
    )
  })

  test('two creates use two different keys', async (t) => {
    const { server, client } = await setup(t)
    server.script([pet(1)])
    await client.createPet({ name: 'A', categoryId: 1 })
    const first = assertOneKey(server)
    server.script([pet(2)])
    await client.createPet({ name: 'B', categoryId: 1 })
    assert.notEqual(assertOneKey(server), first)
  })

  test("the caller's own Idempotency-Key is sent (as the draft's quoted string) and reused", async (t) => {
    const { server, client } = await setup(t)
    server.script(['drop', pet(7)])
    await client.createPet({ name: 'Rex', categoryId: 1 }, { idempotencyKey: 'order-17/"x"' })
    assert.deepEqual(
      server.received.map((r) => r.headers['idempotency-key']),
      ['"order-17/\\"x\\""', '"order-17/\\"x\\""'],
    )
    await assert.rejects(client.createPet({ name: 'Rex', categoryId: 1 }, { idempotencyKey: 'has space' }), TypeError)
    await assert.rejects(client.createPet({ name: 'Rex', categoryId: 1 }, { idempotencyKey: 'k'.repeat(256) }), TypeError)
  })

  test('dropped connections are retried: a create with the same key, a list as is', async (t) => {
    const { server, client } = await setup(t)
    server.script(['drop', 'drop', pet(9)])
    assert.equal((await client.createPet({ name: 'Rex', categoryId: 1 })).id, 9)
    assert.equal(server.received.length, 3)
    assertOneKey(server)
    server.script(['drop', { status: 200, body: [] }])
    assert.deepEqual(await client.listPets(), [])
    assert.equal(server.received.length, 2)
  })

  test('409 idempotency_conflict (the first attempt still in flight) is retried with the same key; 422 idempotency_key_reused is not', async (t) => {
    const { server, client, clock } = await setup(t)
    server.script(['drop', apiError(409, 'idempotency_conflict', { 'retry-after': '1' }), pet(3)])
    assert.equal((await client.createPet({ name: 'Rex', categoryId: 1 })).id, 3)
    assertOneKey(server)
    // Retry-After counts from the answer's arrival; the sleep starts a few ms later, after reading it.
    assert.ok(clock.sleeps[1]!.ms >= 1000 - 50, `waited ${clock.sleeps[1]!.ms} ms after the 409`)
    server.script([apiError(422, 'idempotency_key_reused')])
    const error = await client.createPet({ name: 'Rex', categoryId: 1 }).catch((e: unknown) => e)
    assert.ok(error instanceof ApiError && error.code === 'idempotency_key_reused' && error.status === 422)
    assert.equal(server.received.length, 1)
  })

  test('Retry-After: 0 forever: a bounded number of attempts (maxRetries + 1), never a spin', async (t) => {
    const { server, client, clock } = await setup(t)
    server.script([apiError(429, 'rate_limited', { 'retry-after': '0' })])
    const error = await client.listPets().catch((e: unknown) => e)
    assert.ok(error instanceof ApiError)
    assert.equal(error.code, 'rate_limited')
    assert.equal(error.attempts, POLICY.maxRetries + 1)
    assert.equal(server.received.length, POLICY.maxRetries + 1)
    assert.equal(clock.sleeps.length, POLICY.maxRetries)
  })

  test('a huge Retry-After is surfaced at once with when to retry; nothing sleeps past the deadline', async (t) => {
    const { server, clock } = await setup(t)
    let client!: AnimalStoreClient
    for (const huge of ['86400', '99999999999999999999']) {
      // A fresh client each time: one that saw the first 429 would not even send (see below).
      client = new AnimalStoreClient({ baseUrl: server.baseUrl, apiKey: KEY, retry: POLICY, clock })
      server.script([apiError(429, 'rate_limited', { 'retry-after': huge })])
      const before = clock.now()
      const error = await client.createPet({ name: 'Rex', categoryId: 1 }).catch((e: unknown) => e)
      assert.ok(error instanceof ApiError)
      assert.equal(error.code, 'rate_limited')
      assert.equal(error.status, 429)
      assert.equal(error.attempts, 1)
      assert.equal(server.received.length, 1)
      assert.ok(error.retryAt instanceof Date && Number.isFinite(error.retryAt.getTime()))
      assert.ok(error.retryAfterMs(before)! >= 86_400_000)
      assert.equal(clock.sleeps.length, 0)
    }
    // The client remembers the exhausted window: the next call fails without a request.
    server.script([pet(1)])
    const again = await client.listPets().catch((e: unknown) => e)
    assert.ok(again instanceof ApiError && again.code === 'rate_limited' && again.attempts === 0)
    assert.equal(server.received.length, 0)
  })

  test('Retry-After as an HTTP date is waited out, then the retry passes', async (t) => {
    const { server, client, clock } = await setup(t)
    const date = httpDate(clock.now() + 30_000)
    server.script([apiError(429, 'rate_limited', { 'retry-after': date }), pet(5)])
    assert.equal((await client.createPet({ name: 'Rex', categoryId: 1 })).id, 5)
    assert.equal(clock.sleeps.length, 1)
    // Until the date (whole seconds, so 29-30 s after it was written), from when the client read it
    // (the clock also moves with the round trip's real time), plus at most the first jitter step (250 ms).
    const { ms, at } = clock.sleeps[0]!
    const until = Date.parse(date) - at
    assert.ok(until > 28_000 && ms >= until && ms < until + 250, `slept ${ms}, ${until} ms before the date`)
    assertOneKey(server)
  })

  test('garbage Retry-After: X-RateLimit-Reset is used; without it, exponential backoff', async (t) => {
    const { server, client, clock } = await setup(t)
    const reset = Math.ceil(clock.now() / 1000) + 10
    server.script([apiError(429, 'rate_limited', { 'retry-after': 'soon', 'x-ratelimit-reset': String(reset) }), { status: 200, body: [] }])
    await client.listPets()
    const { ms, at } = clock.sleeps[0]!
    assert.ok(at + ms >= reset * 1000 && ms < reset * 1000 - at + 250, `slept ${ms}`)

    for (const garbage of ['soon', '-5', '1.5', '0x10', 'Tomorrow', '2026-11-21T12:00:00Z', '']) {
      server.script([apiError(429, 'rate_limited', { 'retry-after': garbage }), { status: 200, body: [] }])
      const slept = clock.sleeps.length
      await client.listPets()
      assert.equal(clock.sleeps.length, slept + 1)
      assert.ok(clock.sleeps.at(-1)!.ms < POLICY.baseDelayMs, `${JSON.stringify(garbage)}: slept ${clock.sleeps.at(-1)!.ms}`)
    }
  })

  test('key_banned is surfaced at once, and later calls fail without a request until the ban ends', async (t) => {
    const { server, client, clock } = await setup(t)
    server.script([apiError(429, 'key_banned', { 'retry-after': '120' }), pet(1)])
    const error = await client.createPet({ name: 'Rex', categoryId: 1 }).catch((e: unknown) => e)
    assert.ok(error instanceof ApiError)
    assert.equal(error.code, 'key_banned')
    assert.equal(error.attempts, 1)
    assert.ok(Math.abs(error.retryAfterMs(clock.now())! - 120_000) < 1000)
    for (let i = 0; i < 5; i++) {
      const again = await client.listPets().catch((e: unknown) => e)
      assert.ok(again instanceof ApiError && again.code === 'key_banned' && again.attempts === 0)
    }
    assert.equal(server.received.length, 1)
    assert.equal(clock.sleeps.length, 0)
    await clock.sleep(121_000)
    assert.equal((await client.createPet({ name: 'Rex', categoryId: 1 })).id, 1)
  })

  test('the deadline: a retry that cannot start in time is not waited for', async (t) => {
    const { server, client, clock } = await setup(t)
    server.script([apiError(503, 'service_unavailable', { 'retry-after': '20' })])
    const started = clock.now()
    const error = await client.createPet({ name: 'Rex', categoryId: 1 }, { deadlineMs: 45_000 }).catch((e: unknown) => e)
    assert.ok(error instanceof ApiError && error.code === 'service_unavailable')
    // Each wait is max(Retry-After 20 s, jitter) = 20 s: attempts at 0, 20 and 40 s fit in 45 s, one at 60 s does not.
    assert.equal(server.received.length, 3)
    for (const s of clock.sleeps) assert.ok(s.at + s.ms <= started + 45_000)
    assert.ok(clock.now() - started <= 45_000)
    assertOneKey(server)
  })

  test('a server that never answers: the call ends at its deadline with a NetworkError (real time)', { timeout: 30_000 }, async (t) => {
    const { server, client } = await setup(t)
    server.script(['hang'])
    const started = performance.now()
    const error = await client.listPets({}, { deadlineMs: 300 }).catch((e: unknown) => e)
    const elapsed = performance.now() - started
    assert.ok(error instanceof NetworkError, String(error))
    assert.equal(error.timedOut, true)
    // Not before the deadline; that it ends at all (rather than hanging) is the test's timeout.
    assert.ok(elapsed >= 250, `${elapsed} ms`)
    assert.ok(server.received.length >= 1)
  })

  test('a caller abort ends a call during its backoff', async (t) => {
    const server = await startFlakyServer(t)
    // Real time here: the abort must interrupt a real wait.
    const client = new AnimalStoreClient({
      baseUrl: server.baseUrl,
      apiKey: KEY,
      // The backoff must be long and certain to be waited: a fixed draw (half of the cap) well inside
      // the deadline. (A random draw near the cap ran past the deadline, so the 503 was thrown at once.)
      retry: { ...POLICY, baseDelayMs: 60_000, maxDelayMs: 60_000, deadlineMs: 300_000 },
      random: () => 0.5,
    })
    server.script([apiError(503, 'service_unavailable')])
    const controller = new AbortController()
    const started = performance.now()
    setTimeout(() => controller.abort(new Error('caller gave up')), 100)
    await assert.rejects(client.listPets({}, { signal: controller.signal }), /caller gave up/)
    assert.ok(performance.now() - started < 5_000)
  })

  test('errors that retrying cannot fix are thrown after one attempt, typed', async (t) => {
    const { server, client } = await setup(t)
    for (const [status, code] of [
      [400, 'invalid_request'],
      [401, 'unauthorized'],
      [404, 'not_found'],
      [500, 'internal_error'],
    ] as const) {
      server.script([apiError(status, code, { 'x-request-id': 'req-42' })])
      const error = await client.listPets().catch((e: unknown) => e)
      assert.ok(error instanceof ApiError, String(error))
      assert.deepEqual(
        [error.status, error.code, error.message, error.requestId, error.attempts],
        [status, code, `scripted ${code}`, 'req-42', 1],
      )
      assert.equal(server.received.length, 1)
    }
  })

  test("answers that are not the service's are UnexpectedResponseError", async (t) => {
    const { server, client } = await setup(t)
    for (const step of [
      { status: 502, body: '<html>bad gateway</html>' },
      { status: 400, body: { code: 'no_such_code', message: 'x', status: 400 } },
      { status: 200, body: '{"not":"an array"}' },
      { status: 200, body: 'not json' },
    ] satisfies Step[]) {
      server.script([step])
      await assert.rejects(client.listPets(), UnexpectedResponseError)
    }
  })

  test('the request id the client sends is the one errors carry when the server sends none back', async (t) => {
    const { server, client } = await setup(t)
    server.script([apiError(404, 'not_found')])
    const error = await client.listPets().catch((e: unknown) => e)
    assert.ok(error instanceof ApiError)
    assert.equal(error.requestId, server.received[0]!.headers['x-request-id'])
    assert.match(String(error.requestId), /^[0-9a-f-]{36}$/)
  })

  test('any script of faults: bounded attempts, within the deadline, one key per create, a typed outcome', async (t) => {
    const server = await startFlakyServer(t)
    const fault = fc.oneof(
      fc.constant<Step>('drop'),
      fc.constant(apiError(503, 'service_unavailable')),
      fc
        .constantFrom('0', '1', '30', '86400', '99999999999', 'garbage', '', 'Wed, 21 Oct 2015 07:28:00 GMT')
        .map((v) => apiError(429, 'rate_limited', { 'retry-after': v })),
      fc.constant(apiError(429, 'rate_limited')),
      fc.constant(apiError(429, 'key_banned', { 'retry-after': '60' })),
    )
    await fc.assert(
      fc.asyncProperty(
        fc.array(fault, { maxLength: 8 }),
        fc.boolean(),
        fc.integer({ min: 1_000, max: 120_000 }),
        async (faults, succeeds, deadlineMs) => {
          const clock = new VirtualClock()
          const client = new AnimalStoreClient({ baseUrl: server.baseUrl, apiKey: KEY, retry: POLICY, clock })
          server.script([...faults, succeeds ? pet(1) : apiError(503, 'service_unavailable')])
          const started = clock.now()
          const outcome = await client.createPet({ name: 'Rex', categoryId: 1 }, { deadlineMs }).catch((e: unknown) => e)
          assert.ok(server.received.length >= 1 && server.received.length <= POLICY.maxRetries + 1)
          for (const s of clock.sleeps) assert.ok(s.at + s.ms <= started + deadlineMs, 'a sleep ran past the deadline')
          assertOneKey(server)
          if (outcome instanceof Error) assert.ok(outcome instanceof ApiError || outcome instanceof NetworkError, String(outcome))
          else assert.equal((outcome as { id: number }).id, 1)
        },
      ),
      { numRuns: 150 },
    )
  })
})
