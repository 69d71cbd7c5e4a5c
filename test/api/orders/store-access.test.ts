/**
 * Every operation of the store (api/orders/) needs an API key and is counted by the rate limits.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { bearer, openTestApp, type TestApp } from '../../helpers/app.js'
import { assertError } from '../../helpers/errors.js'

type Headers = Record<string, string>
const JSON_TYPE = { 'content-type': 'application/json' }

describe('the store over HTTP', () => {
  let t: TestApp
  let key: Headers
  before(async () => {
    t = await openTestApp()
    key = bearer(await t.key({ plan: 'enterprise', perMinute: 100_000, perDay: 1_000_000 }))
  })
  after(() => t.close())

  const send = (method: 'GET' | 'POST', url: string, payload?: unknown, headers: Headers = key) =>
    t.app.inject({ method, url, headers: payload === undefined ? headers : { ...headers, ...JSON_TYPE }, payload: payload as string })
  const newPet = async (status?: string): Promise<number> =>
    (await send('POST', '/v1/pets', { name: 'Rex', categoryId: 7, ...(status ? { status } : {}) })).json().id
  const place = (petId: unknown, headers: Headers = key) => send('POST', '/v1/store/orders', { petId }, headers)

  test('every store operation needs a key and is counted by the rate limits', async () => {
    const free = bearer(await t.key({ plan: 'free', name: 'counted' }))
    const petId = await newPet('available')
    const answers = [
      await send('GET', '/v1/store/inventory', undefined, free),
      await send('GET', '/v1/store/orders', undefined, free),
      await place(petId, free),
    ]
    const id = answers[2]!.json().id
    answers.push(await send('GET', `/v1/store/orders/${id}`, undefined, free))
    answers.push(await send('POST', `/v1/store/orders/${id}/cancel`, undefined, free))
    answers.push(await send('POST', `/v1/store/orders/${id}/complete`, undefined, free))
    assert.deepEqual(
      answers.map((r) => r.headers['x-ratelimit-remaining']),
      ['59', '58', '57', '56', '55', '54'],
    )
    for (const url of ['/v1/store/inventory', '/v1/store/orders', `/v1/store/orders/${id}`])
      assertError(await t.app.inject({ url }), 401, 'unauthorized')
    assertError(await t.app.inject({ method: 'POST', url: `/v1/store/orders/${id}/cancel` }), 401, 'unauthorized')
  })
})
