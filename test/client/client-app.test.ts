import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { before, describe, test } from 'node:test'
import { AnimalStoreClient, ApiError, type AttemptEvent, type Pet, UnexpectedResponseError } from '../../client/src/index.js'
import { buildSuiteApp } from '../helpers/app.js'
import { startFlakyServer } from './flaky-server.js'

/** The client against the real app on a loopback port (in-process; the manual clock holds time still). */
describe('client against the app', () => {
  let client: AnimalStoreClient
  let baseUrl: string
  let key: string
  const events: AttemptEvent[] = []

  const t = buildSuiteApp()
  before(async () => {
    // The default configuration: relative Link headers.
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/v1`
    key = await t.key({ plan: 'enterprise', perMinute: 100_000, perDay: 1_000_000 })
    client = new AnimalStoreClient({ baseUrl, apiKey: key, onAttempt: (e) => events.push(e) })
  })

  test('createPet, getPet and listPets round-trip typed values', async () => {
    const created = await client.createPet({ name: 'Rex', categoryId: 7, status: 'available' })
    assert.deepEqual({ ...created, id: 0 }, { id: 0, name: 'Rex', categoryId: 7, status: 'available' })
    assert.equal(typeof created.id, 'number')
    assert.deepEqual(await client.getPet(created.id), created)
    const listed = await client.listPets({ status: 'available', limit: 100 })
    assert.ok(listed.some((p) => p.id === created.id))
    assert.ok(listed.every((p) => p.status === 'available'))
  })

  test('int64 categoryId beyond 2^53 is exact both ways (bigint)', async () => {
    for (const categoryId of [2n ** 63n - 1n, -(2n ** 63n), 2n ** 53n + 1n]) {
      const created = await client.createPet({ name: 'Big', categoryId })
      assert.equal(created.categoryId, categoryId)
      assert.equal((await client.getPet(created.id)).categoryId, categoryId)
    }
    const safe = await client.createPet({ name: 'Small', categoryId: 2n ** 53n - 1n })
    assert.equal(safe.categoryId, 2 ** 53 - 1, 'a safe integer comes back as a number')
  })

  test('allPets walks every page by Link rel="next", each animal once, in order', async () => {
    const names = new Set<string>()
    for (let i = 0; i < 23; i++) names.add((await client.createPet({ name: `walk-${i}`, categoryId: 3, status: 'sold' })).name)
    const pages: Pet[][] = []
    for await (const page of client.pages({ status: 'sold', limit: 5 })) pages.push(page)
    const walked = pages.flat()
    assert.deepEqual(
      pages.map((p) => p.length),
      [5, 5, 5, 5, 3],
    )
    assert.deepEqual(
      walked.map((p) => p.name),
      [...names],
    )
    const ids = walked.map((p) => Number(p.id))
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => a - b),
    )
    const flat: Pet[] = []
    for await (const pet of client.allPets({ status: 'sold', limit: 7 })) flat.push(pet)
    assert.deepEqual(flat, walked)
  })

  test('errors from the app are typed, with status, code, message and the request id', async () => {
    events.length = 0
    const missing = await client.getPet(999_999_999).catch((e: unknown) => e)
    assert.ok(missing instanceof ApiError)
    assert.deepEqual([missing.status, missing.code], [404, 'not_found'])
    assert.match(missing.message, /999999999/)
    assert.equal(missing.requestId, events.at(-1)!.headers!.get('x-request-id'))
    const invalid = await client.createPet({ name: '', categoryId: 1 }).catch((e: unknown) => e)
    assert.ok(invalid instanceof ApiError && invalid.code === 'invalid_request' && invalid.status === 400)
    assert.match(invalid.message, /name/)
    const badKey = new AnimalStoreClient({ baseUrl, apiKey: 'as_live_nope' })
    const unauthorized = await badKey.listPets().catch((e: unknown) => e)
    assert.ok(unauthorized instanceof ApiError && unauthorized.code === 'unauthorized' && unauthorized.attempts === 1)
  })

  test('the deprecated getPet answers with its deprecation headers (seen through onAttempt)', async () => {
    const created = await client.createPet({ name: 'Old', categoryId: 1 })
    events.length = 0
    await client.getPet(created.id)
    assert.match(String(events.at(-1)!.headers!.get('sunset')), /2030/)
  })

  test('a 429 from the app carries when to retry; a wait beyond the deadline is surfaced, not slept', async () => {
    const free = new AnimalStoreClient({ baseUrl, apiKey: await t.key({ plan: 'free' }), retry: { deadlineMs: 1_000 } })
    for (let i = 0; i < 60; i++) await free.listPets({ limit: 1 })
    // The app's manual clock stands at hh:mm:30: Retry-After 30 s, beyond the 1 s deadline.
    const started = performance.now()
    const limited = await free.listPets().catch((e: unknown) => e)
    assert.ok(limited instanceof ApiError && limited.code === 'rate_limited', String(limited))
    const waitMs = limited.retryAfterMs()!
    assert.ok(waitMs > 28_000 && waitMs <= 30_000, `retry after ${waitMs} ms`)
    assert.equal(limited.attempts, 1)
    assert.ok(performance.now() - started < 1_000)
  })

  test('rateLimit: the key and its windows, typed, not counted, and answered while the key is limited', async () => {
    const apiKey = await t.key({ plan: 'enterprise', perMinute: 3, perDay: 1000 })
    const limited = new AnimalStoreClient({ baseUrl, apiKey, retry: { deadlineMs: 1_000 } })
    for (let i = 0; i < 3; i++) await limited.listPets({ limit: 1 })
    const status = await limited.rateLimit()
    assert.equal(status.key.plan, 'enterprise')
    assert.match(status.key.prefix, /^as_test_|^as_live_/)
    assert.deepEqual(
      status.windows.map((w) => [w.name, w.limit, w.used, w.remaining]),
      [
        ['minute', 3, 3, 0],
        ['day', 1000, 3, 997],
      ],
    )
    assert.equal(status.ban, null)
    assert.equal(status.budget.remaining, 2)
    assert.equal((await limited.rateLimit()).windows[1]!.used, 3, 'not counted')
  })
})

describe('client paging links', () => {
  test('relative and absolute next links are followed; another origin and a loop are refused', async (t) => {
    const server = await startFlakyServer(t)
    const client = new AnimalStoreClient({ baseUrl: server.baseUrl, apiKey: 'as_live_x' })
    const origin = new URL(server.baseUrl).origin
    const page = (ids: number[], link?: string) => ({
      status: 200,
      body: ids.map((id) => ({ id, name: `p${id}`, categoryId: 1 })),
      ...(link && { headers: { link } }),
    })
    server.script([
      page([1, 2], '</v1/pets?after=2>; rel="next"'),
      page([3], `<${origin}/v1/pets?after=3>; rel=next, <${origin}/docs>; rel="deprecation"`),
      page([4], '<pets?after=4>; title="x;y"; rel="prefetch next"'),
      page([5]),
    ])
    const ids: number[] = []
    for await (const pet of client.allPets({ limit: 2 })) ids.push(Number(pet.id))
    assert.deepEqual(ids, [1, 2, 3, 4, 5])
    assert.deepEqual(
      server.received.map((r) => r.url),
      ['/v1/pets?limit=2', '/v1/pets?after=2', '/v1/pets?after=3', '/v1/pets?after=4'],
    )
    assert.ok(server.received.every((r) => r.headers.authorization === 'Bearer as_live_x'))

    server.script([page([1], '<https://elsewhere.example/v1/pets?after=1>; rel="next"')])
    await assert.rejects(async () => {
      for await (const _ of client.allPets()) void _
    }, UnexpectedResponseError)
    assert.equal(server.received.length, 1, 'nothing was sent to the other origin')

    server.script([page([1], '</v1/pets?after=1>; rel="next"')])
    await assert.rejects(async () => {
      for await (const _ of client.allPets()) void _
    }, /repeats/)
  })
})
