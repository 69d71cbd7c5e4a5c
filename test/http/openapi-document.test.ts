/**
 * The OpenAPI document (GET /v1/openapi.json) against things it is not generated from: the OpenAPI
 * 3.1 schema, the spec's shapes, the closed list of error codes in docs/api.md, and what the routes
 * really answer — a table of requests, one or more per status of each operation, whose answers
 * must be documented (status, body schema, headers), while every documented status is answered.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { before, describe, test } from 'node:test'
import { Validator } from '@seriousme/openapi-schema-validator'
import type { LightMyRequestResponse } from 'fastify'
import { GET_PET_DEPRECATION } from '../../src/api/pets/get.js'
import { ManualClock } from '../../src/shared/clock.js'
import { ERROR_STATUS } from '../../src/shared/errors.js'
import { StorageUnavailableError } from '../../src/shared/outages.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import { type OperationId, Oracle } from '../fuzz/oracle.js'
import type { WireResponse } from '../fuzz/transport.js'
import { bearer, buildSuiteApp, type TestApp } from '../helpers/app.js'

/** The "Errors" table of docs/api.md: code -> status, the list users read. */
function documentedErrorCodes(): Map<string, number> {
  const page = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8')
  const section = page.slice(page.indexOf('\n## Errors'), page.indexOf('\n## ', page.indexOf('\n## Errors') + 1))
  return new Map([...section.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1]!, Number(m[2])]))
}

/** An app.inject answer in the fuzz transport's shape, for the oracle. */
function wire(res: LightMyRequestResponse): WireResponse {
  const headers: Record<string, string> = {}
  const rawHeaders: Array<[string, string]> = []
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue
    const values = Array.isArray(value) ? value.map(String) : [String(value)]
    headers[name.toLowerCase()] = values.join(', ')
    for (const v of values) rawHeaders.push([name.toLowerCase(), v])
  }
  return { status: res.statusCode, headers, rawHeaders, body: res.rawPayload }
}

/** A SQLite store whose pets, orders and events fail the way `failure` says; keys still work, so requests pass the guard. */
function failingStorage(failure: () => Error): SqliteStorage {
  const storage = new SqliteStorage({ databaseUrl: ':memory:', durability: 'process' })
  const fail = async (): Promise<never> => {
    throw failure()
  }
  Object.assign(storage.pets, { listPets: fail, createPet: fail, getPet: fail })
  Object.assign(storage.orders, { placeOrder: fail, changeOrder: fail, getOrder: fail, listOrders: fail, inventory: fail })
  Object.assign(storage.events, { list: fail })
  return storage
}

describe('OpenAPI document', () => {
  let doc: any
  const t = buildSuiteApp({ env: { PUBLIC_BASE_URL: 'http://127.0.0.1:9999', ANIMAL_STORE_ENV: 'staging' } })
  before(async () => {
    const res = await t.app.inject({ url: '/v1/openapi.json' })
    assert.equal(res.statusCode, 200)
    doc = res.json()
  })

  test('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(doc)
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2))
    assert.equal(doc.openapi, '3.1.0')
    assert.equal(doc.info.version, '1.0.0')
  })

  // Issue 32: production and staging are listed only when configured. Their made-up defaults
  // (api.animal-store.example) were offered in the docs console and every "Try it out" on them failed.
  test('lists the relative server first, then the public address, each with /v1; no unconfigured made-up hosts', () => {
    const urls = doc.servers.map((s: { url: string }) => s.url)
    assert.deepEqual(urls, ['/v1', 'http://127.0.0.1:9999/v1'])
  })

  test('every error response has one example per code, each with that status, a code of that status and a real message', () => {
    let checked = 0
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        for (const [status, response] of Object.entries<any>(op.responses)) {
          if (Number(status) < 400) continue
          const examples = Object.values<any>(response.content['application/json'].examples ?? {})
          assert.ok(examples.length > 0, `${method} ${path} ${status} has examples`)
          for (const { value } of examples) {
            assert.equal(value.status, Number(status), `${method} ${path} ${status}`)
            assert.equal(
              ERROR_STATUS[value.code as keyof typeof ERROR_STATUS],
              Number(status),
              `${method} ${path} ${status}: ${value.code}`,
            )
            assert.ok(value.message.length > 10 && value.message !== 'string', value.message)
            checked++
          }
        }
      }
    }
    assert.ok(checked > 20, String(checked))
  })

  test("headers' placeholders are in code spans, so Markdown does not swallow <limit> as a tag", () => {
    const headers = doc.paths['/pets'].get.responses['200'].headers
    for (const name of ['RateLimit-Policy', 'RateLimit']) {
      const text: string = headers[name].description
      for (const placeholder of text.match(/<[^>]+>/g) ?? []) {
        const before = text.slice(0, text.indexOf(placeholder))
        assert.equal((before.match(/`/g) ?? []).length % 2, 1, `${name}: ${placeholder} inside backticks`)
      }
    }
  })

  test('has the catalogue and the store, getPet deprecated, bearer security', () => {
    assert.deepEqual(Object.keys(doc.paths).sort(), [
      '/events',
      '/pets',
      '/pets/{petId}',
      '/rate_limit',
      '/store/inventory',
      '/store/orders',
      '/store/orders/{orderId}',
      '/store/orders/{orderId}/cancel',
      '/store/orders/{orderId}/complete',
    ])
    assert.equal(doc.paths['/pets'].get.operationId, 'listPets')
    assert.equal(doc.paths['/pets'].post.operationId, 'createPet')
    assert.equal(doc.paths['/pets/{petId}'].get.operationId, 'getPet')
    assert.equal(doc.paths['/pets/{petId}'].get.deprecated, true)
    assert.deepEqual(doc.security, [{ bearerAuth: [] }])
    assert.equal(doc.components.securitySchemes.bearerAuth.scheme, 'bearer')
  })

  test('schemas are the spec shapes; int64 fields are documented as such', () => {
    const { Pet, NewPet, PetStatus } = doc.components.schemas
    assert.deepEqual(PetStatus.enum, ['available', 'pending', 'sold'])
    assert.deepEqual(NewPet.required.sort(), ['categoryId', 'name'])
    assert.equal(NewPet.additionalProperties, false)
    assert.equal(Pet.properties.id.format, 'int64')
    assert.equal(Pet.properties.categoryId.format, 'int64')
    const limit = doc.paths['/pets'].get.parameters.find((p: { name: string }) => p.name === 'limit')
    assert.deepEqual([limit.schema.minimum, limit.schema.maximum, limit.schema.default], [1, 100, 20])
    // Real examples, which the console's "Try it out" fills in (not values made up from the patterns).
    assert.deepEqual([NewPet.properties.name.example, NewPet.properties.categoryId.example], ['Rex', 7])
    assert.deepEqual([Pet.properties.id.example, Pet.properties.name.example, Pet.properties.categoryId.example], [1, 'Rex', 7])
    assert.ok(doc.info.description.includes('`node dist/cli.js keys create --plan free --name NAME`'), 'how to get a key')
  })

  test("the Error schema's codes are docs/api.md's closed list, which the service's table agrees with", () => {
    const documented = documentedErrorCodes()
    assert.ok(documented.size >= 10, `docs/api.md's Errors table parsed (${documented.size} codes)`)
    const { Error: ErrorSchema } = doc.components.schemas
    assert.deepEqual(ErrorSchema.required.sort(), ['code', 'message', 'status'])
    assert.deepEqual([...ErrorSchema.properties.code.enum].sort(), [...documented.keys()].sort())
    assert.deepEqual(
      Object.entries(ERROR_STATUS).sort(),
      [...documented.entries()].sort(),
      'src/http/errors.ts and docs/api.md: same codes, same statuses',
    )
    for (const code of documented.keys()) assert.match(doc.info.description, new RegExp(`\`${code}\``), `the description explains ${code}`)
  })

  describe('every answer of an operation is documented, and every documented status is answered', () => {
    const failing = buildSuiteApp(async () => ({ storage: failingStorage(() => new Error('disk on fire')) }))
    const unavailable = buildSuiteApp(async () => ({
      storage: failingStorage(() => new StorageUnavailableError(new Error('ECONNREFUSED'))),
    }))
    const sunset = buildSuiteApp(async () => ({ clock: new ManualClock(GET_PET_DEPRECATION.sunset + 1000) }))
    let oracle: Oracle
    before(async () => {
      oracle = await Oracle.create(doc)
    })

    test('the table of cases', async () => {
      const key = bearer(await t.key({ plan: 'pro' }))
      const json = { 'content-type': 'application/json' }
      const pet = (
        await t.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...key, ...json }, payload: '{"name":"Rex","categoryId":1}' })
      ).json()
      /** A key whose quota is one request: the second one is 429. */
      const spent = async (app: TestApp, first: { method: 'GET' | 'POST'; url: string; payload?: string }) => {
        const headers = { ...bearer(await app.key({ plan: 'enterprise', perMinute: 1, perDay: 1 })), ...json }
        await app.app.inject({ ...first, headers })
        return headers
      }
      const list =
        (app: TestApp, url: string, headers: Record<string, string> = key) =>
        () =>
          app.app.inject({ url, headers })
      const create =
        (app: TestApp, payload: string, headers: Record<string, string> = { ...key, ...json }) =>
        () =>
          app.app.inject({ method: 'POST', url: '/v1/pets', headers, payload })
      const getPet =
        (app: TestApp, url: string, headers: Record<string, string> = key) =>
        () =>
          app.app.inject({ url, headers })
      /** The same read again with the ETag of its 200 in If-None-Match: 304. */
      const unchanged = (url: string) => async () => {
        const etag = (await t.app.inject({ url, headers: key })).headers.etag as string
        return t.app.inject({ url, headers: { ...key, 'if-none-match': etag } })
      }
      const keyFor = async (app: TestApp) => bearer(await app.key({ plan: 'pro' }))
      /** Keys without the scopes of the pets' and the store's operations: 403 insufficient_scope. */
      const ordersOnly = bearer(await t.key({ plan: 'pro', scopes: ['orders:read', 'orders:write'] }))
      const petsOnly = bearer(await t.key({ plan: 'pro', scopes: ['pets:read', 'pets:write'] }))
      /** The same Idempotency-Key once more with another body: 422. */
      const reused = async () => {
        const headers = { ...key, ...json, 'idempotency-key': 'openapi-reused' }
        await t.app.inject({ method: 'POST', url: '/v1/pets', headers, payload: '{"name":"First","categoryId":1}' })
        return create(t, '{"name":"Second","categoryId":1}', headers)
      }
      /** Two requests with one Idempotency-Key at once: the second, while the first is in flight, is 409. */
      const concurrent = () => async () => {
        const headers = { ...key, ...json, 'idempotency-key': 'openapi-in-flight' }
        const [, second] = await Promise.all([
          create(t, '{"name":"Twin","categoryId":1}', headers)(),
          create(t, '{"name":"Twin","categoryId":1}', headers)(),
        ])
        return second
      }

      type Case = [OperationId, string, number, () => Promise<LightMyRequestResponse>]
      /** The store's operations: an order placed, read, cancelled and completed, and each refusal. */
      const storeCases = async (): Promise<Case[]> => {
        const ask =
          (app: TestApp, method: 'GET' | 'POST', url: string, headers: Record<string, string> = key, payload?: string) =>
          () =>
            app.app.inject({ method, url, headers, payload })
        const withJson = { ...key, ...json }
        const available = async () =>
          (
            await t.app.inject({
              method: 'POST',
              url: '/v1/pets',
              headers: withJson,
              payload: '{"name":"Stock","categoryId":1,"status":"available"}',
            })
          ).json().id as number
        const place = async () =>
          (
            await t.app.inject({ method: 'POST', url: '/v1/store/orders', headers: withJson, payload: `{"petId":${await available()}}` })
          ).json().id as number
        const [toPlace, taken] = [await available(), await available()]
        await t.app.inject({ method: 'POST', url: '/v1/store/orders', headers: withJson, payload: `{"petId":${taken}}` })
        const [toRead, toCancel, toComplete] = [await place(), await place(), await place()]
        const big = JSON.stringify({ a: 'x'.repeat(17 * 1024) })
        const text = { ...key, 'content-type': 'text/plain' }
        const failingKey = async (app: TestApp) => ({ ...(await keyFor(app)), ...json })
        const cases: Case[] = [
          ['placeOrder', 'an available animal', 201, ask(t, 'POST', '/v1/store/orders', withJson, `{"petId":${toPlace}}`)],
          ['placeOrder', 'no petId', 400, ask(t, 'POST', '/v1/store/orders', withJson, '{}')],
          ['placeOrder', 'no key', 401, ask(t, 'POST', '/v1/store/orders', json, `{"petId":${toPlace}}`)],
          ['placeOrder', 'a key without orders:write', 403, ask(t, 'POST', '/v1/store/orders', { ...petsOnly, ...json }, '{"petId":1}')],
          ['placeOrder', 'an animal already held', 409, ask(t, 'POST', '/v1/store/orders', withJson, `{"petId":${taken}}`)],
          ['placeOrder', 'a body over 16 KiB', 413, ask(t, 'POST', '/v1/store/orders', withJson, big)],
          ['placeOrder', 'text/plain', 415, ask(t, 'POST', '/v1/store/orders', text, 'petId=1')],
          ['placeOrder', 'no such animal', 422, ask(t, 'POST', '/v1/store/orders', withJson, '{"petId":999999}')],
          [
            'placeOrder',
            'a spent key',
            429,
            ask(t, 'POST', '/v1/store/orders', await spent(t, { method: 'GET', url: '/v1/store/inventory' }), '{"petId":1}'),
          ],
          ['placeOrder', 'a failing store', 500, ask(failing, 'POST', '/v1/store/orders', await failingKey(failing), '{"petId":1}')],
          [
            'placeOrder',
            'an unavailable store',
            503,
            ask(unavailable, 'POST', '/v1/store/orders', await failingKey(unavailable), '{"petId":1}'),
          ],
          ['listOrders', 'a page', 200, ask(t, 'GET', '/v1/store/orders?limit=2')],
          ['listOrders', 'an unchanged page', 304, unchanged('/v1/store/orders?limit=2')],
          ['listOrders', 'a bad limit', 400, ask(t, 'GET', '/v1/store/orders?limit=0')],
          ['listOrders', 'no key', 401, ask(t, 'GET', '/v1/store/orders', {})],
          ['listOrders', 'a key without orders:read', 403, ask(t, 'GET', '/v1/store/orders', petsOnly)],
          ['listOrders', 'a spent key', 429, ask(t, 'GET', '/v1/store/orders', await spent(t, { method: 'GET', url: '/v1/store/orders' }))],
          ['listOrders', 'a failing store', 500, ask(failing, 'GET', '/v1/store/orders', await keyFor(failing))],
          ['listOrders', 'an unavailable store', 503, ask(unavailable, 'GET', '/v1/store/orders', await keyFor(unavailable))],
          ['getOrder', 'an order', 200, ask(t, 'GET', `/v1/store/orders/${toRead}`)],
          ['getOrder', 'an unchanged order', 304, unchanged(`/v1/store/orders/${toRead}`)],
          ['getOrder', 'an orderId that is no integer', 400, ask(t, 'GET', '/v1/store/orders/abc')],
          ['getOrder', 'no key', 401, ask(t, 'GET', `/v1/store/orders/${toRead}`, {})],
          ['getOrder', 'a key without orders:read', 403, ask(t, 'GET', `/v1/store/orders/${toRead}`, petsOnly)],
          ['getOrder', 'no such order', 404, ask(t, 'GET', '/v1/store/orders/999999')],
          [
            'getOrder',
            'a spent key',
            429,
            ask(t, 'GET', `/v1/store/orders/${toRead}`, await spent(t, { method: 'GET', url: '/v1/store/orders' })),
          ],
          ['getOrder', 'a failing store', 500, ask(failing, 'GET', '/v1/store/orders/1', await keyFor(failing))],
          ['getOrder', 'an unavailable store', 503, ask(unavailable, 'GET', '/v1/store/orders/1', await keyFor(unavailable))],
          ['getInventory', 'the counts', 200, ask(t, 'GET', '/v1/store/inventory')],
          ['getInventory', 'unchanged counts', 304, unchanged('/v1/store/inventory')],
          ['getInventory', 'an unknown query parameter', 400, ask(t, 'GET', '/v1/store/inventory?x=1')],
          ['getInventory', 'no key', 401, ask(t, 'GET', '/v1/store/inventory', {})],
          ['getInventory', 'a key without orders:read', 403, ask(t, 'GET', '/v1/store/inventory', petsOnly)],
          [
            'getInventory',
            'a spent key',
            429,
            ask(t, 'GET', '/v1/store/inventory', await spent(t, { method: 'GET', url: '/v1/store/inventory' })),
          ],
          ['getInventory', 'a failing store', 500, ask(failing, 'GET', '/v1/store/inventory', await keyFor(failing))],
          ['getInventory', 'an unavailable store', 503, ask(unavailable, 'GET', '/v1/store/inventory', await keyFor(unavailable))],
        ]
        for (const [operation, change, order] of [
          ['cancelOrder', 'cancel', toCancel],
          ['completeOrder', 'complete', toComplete],
        ] as const) {
          const url = `/v1/store/orders/${order}/${change}`
          cases.push(
            [operation, 'a placed order', 200, ask(t, 'POST', url)],
            [operation, 'a body that is not {}', 400, ask(t, 'POST', url, withJson, '{"a":1}')],
            [operation, 'no key', 401, ask(t, 'POST', url, {})],
            [operation, 'a key without orders:write', 403, ask(t, 'POST', url, petsOnly)],
            [operation, 'no such order', 404, ask(t, 'POST', `/v1/store/orders/999999/${change}`)],
            [operation, 'an order no longer placed', 409, ask(t, 'POST', url)],
            [operation, 'a body over 16 KiB', 413, ask(t, 'POST', url, withJson, big)],
            [operation, 'text/plain', 415, ask(t, 'POST', url, text, 'x')],
            [operation, 'a spent key', 429, ask(t, 'POST', url, await spent(t, { method: 'GET', url: '/v1/store/inventory' }))],
            [operation, 'a failing store', 500, ask(failing, 'POST', `/v1/store/orders/1/${change}`, await keyFor(failing))],
            [operation, 'an unavailable store', 503, ask(unavailable, 'POST', `/v1/store/orders/1/${change}`, await keyFor(unavailable))],
          )
        }
        return cases
      }
      /** getRateLimit: not counted, so its 429 is a key whose quota and own budget are both spent. It reads no store. */
      const rateLimitCases = async (): Promise<Case[]> => {
        const read =
          (app: TestApp, headers: Record<string, string> = key, url = '/v1/rate_limit') =>
          () =>
            app.app.inject({ url, headers })
        const spentBoth = await spent(t, { method: 'GET', url: '/v1/pets' })
        await read(t, spentBoth)()
        return [
          ['getRateLimit', 'the key and its windows', 200, read(t)],
          ['getRateLimit', 'an unknown query parameter', 400, read(t, key, '/v1/rate_limit?x=1')],
          ['getRateLimit', 'no key', 401, read(t, {})],
          ['getRateLimit', 'a spent key past its budget', 429, read(t, spentBoth)],
        ]
      }
      const cases: Case[] = [
        ['listPets', 'a page', 200, list(t, '/v1/pets?limit=1')],
        ['listPets', 'an unchanged page', 304, unchanged('/v1/pets?limit=1')],
        ['listPets', 'a bad limit', 400, list(t, '/v1/pets?limit=0')],
        ['listPets', 'no key', 401, list(t, '/v1/pets', {})],
        ['listPets', 'a key without pets:read', 403, list(t, '/v1/pets', ordersOnly)],
        ['listPets', 'a spent key', 429, list(t, '/v1/pets', await spent(t, { method: 'GET', url: '/v1/pets' }))],
        ['listPets', 'a failing store', 500, list(failing, '/v1/pets', await keyFor(failing))],
        ['listPets', 'an unavailable store', 503, list(unavailable, '/v1/pets', await keyFor(unavailable))],
        ['createPet', 'a new animal', 201, create(t, '{"name":"Tom","categoryId":2,"status":"sold"}')],
        ['createPet', 'a missing name', 400, create(t, '{"categoryId":2}')],
        ['createPet', 'no key', 401, create(t, '{"name":"Tom","categoryId":2}', json)],
        ['createPet', 'a key without pets:write', 403, create(t, '{"name":"Tom","categoryId":2}', { ...ordersOnly, ...json })],
        ['createPet', 'an Idempotency-Key still in flight', 409, concurrent()],
        ['createPet', 'an Idempotency-Key reused with another body', 422, await reused()],
        ['createPet', 'a body over 16 KiB', 413, create(t, JSON.stringify({ name: 'x'.repeat(17 * 1024), categoryId: 1 }))],
        ['createPet', 'text/plain', 415, create(t, 'name=Tom', { ...key, 'content-type': 'text/plain' })],
        [
          'createPet',
          'a spent key',
          429,
          create(
            t,
            '{"name":"Tom","categoryId":2}',
            await spent(t, { method: 'POST', url: '/v1/pets', payload: '{"name":"Tom","categoryId":2}' }),
          ),
        ],
        ['createPet', 'a failing store', 500, create(failing, '{"name":"Tom","categoryId":2}', { ...(await keyFor(failing)), ...json })],
        [
          'createPet',
          'an unavailable store',
          503,
          create(unavailable, '{"name":"Tom","categoryId":2}', { ...(await keyFor(unavailable)), ...json }),
        ],
        ['getPet', 'an animal', 200, getPet(t, `/v1/pets/${pet.id}`)],
        ['getPet', 'an unchanged animal', 304, unchanged(`/v1/pets/${pet.id}`)],
        ['getPet', 'a petId that is no integer', 400, getPet(t, '/v1/pets/abc')],
        ['getPet', 'no key', 401, getPet(t, `/v1/pets/${pet.id}`, {})],
        ['getPet', 'a key without pets:read', 403, getPet(t, `/v1/pets/${pet.id}`, ordersOnly)],
        ['getPet', 'no such animal', 404, getPet(t, '/v1/pets/999999')],
        ['getPet', 'after the sunset', 410, getPet(sunset, '/v1/pets/1', await keyFor(sunset))],
        ['getPet', 'a spent key', 429, getPet(t, `/v1/pets/${pet.id}`, await spent(t, { method: 'GET', url: `/v1/pets/${pet.id}` }))],
        ['getPet', 'a failing store', 500, getPet(failing, '/v1/pets/1', await keyFor(failing))],
        ['getPet', 'an unavailable store', 503, getPet(unavailable, '/v1/pets/1', await keyFor(unavailable))],
        ...(await storeCases()),
        ...(await rateLimitCases()),
        ['listEvents', 'a page', 200, list(t, '/v1/events?limit=2')],
        ['listEvents', 'a type not in the list', 400, list(t, '/v1/events?type=order.shipped')],
        ['listEvents', 'no key', 401, list(t, '/v1/events', {})],
        ['listEvents', 'order events without orders:read', 403, list(t, '/v1/events?type=order.placed', petsOnly)],
        ['listEvents', 'a spent key', 429, list(t, '/v1/events', await spent(t, { method: 'GET', url: '/v1/events' }))],
        ['listEvents', 'a failing store', 500, list(failing, '/v1/events', await keyFor(failing))],
        ['listEvents', 'an unavailable store', 503, list(unavailable, '/v1/events', await keyFor(unavailable))],
      ]
      // Every operation of the document, with its method and documented statuses: an operation
      // added to the API is expected here without editing a list (it fails until it has its cases).
      const methods = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options'])
      const operations = new Map<OperationId, { method: string; statuses: string[] }>()
      for (const item of Object.values(doc.paths) as Array<Record<string, { operationId: string; responses: object }>>) {
        for (const [method, op] of Object.entries(item)) {
          if (methods.has(method))
            operations.set(op.operationId, { method: method.toUpperCase(), statuses: Object.keys(op.responses).sort() })
        }
      }
      assert.ok(operations.size >= 9, `the document's operations: ${[...operations.keys()].join(', ')}`)
      const answered = new Map<OperationId, Set<string>>()
      for (const [operation, why, status, ask] of cases) {
        const res = await ask()
        assert.equal(res.statusCode, status, `${operation}, ${why}: ${res.body}`)
        const documented = operations.get(operation)
        assert.ok(documented, `${operation} is an operation of the document`)
        assert.deepEqual(
          oracle.conformance(operation, documented.method, wire(res)),
          [],
          `${operation}, ${why}: the ${status} answer as documented`,
        )
        answered.set(operation, (answered.get(operation) ?? new Set()).add(String(status)))
      }
      for (const [operation, { statuses }] of operations) {
        assert.deepEqual(
          [...(answered.get(operation) ?? [])].sort(),
          statuses,
          `${operation}: the statuses answered are the documented ones`,
        )
      }
    })
  })
})
