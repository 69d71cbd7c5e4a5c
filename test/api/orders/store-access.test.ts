/**
 * Every operation of the store (api/orders/) needs an API key and is counted by the rate limits.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { bearer } from '../../helpers/app.js'
import { assertError } from '../../helpers/errors.js'
import { storeSuite } from '../../helpers/store-suite.js'

describe('the store over HTTP', () => {
  const store = storeSuite()
  const { send, newPet, place } = store

  test('every store operation needs a store.key and is counted by the rate limits', async () => {
    const free = bearer(await store.t.key({ plan: 'free', name: 'counted' }))
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
      assertError(await store.t.app.inject({ url }), 401, 'unauthorized')
    assertError(await store.t.app.inject({ method: 'POST', url: `/v1/store/orders/${id}/cancel` }), 401, 'unauthorized')
  })
})
