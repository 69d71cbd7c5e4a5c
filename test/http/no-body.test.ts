/**
 * Routes that take no body (route config `noBody`: the order changes, an admin revoke) accept an
 * empty body sent with `Content-Type: application/json`, as many clients send that header on
 * every POST (issue 32: it was a 400 "Request body is empty"). `{}` and no body at all are
 * accepted as before, anything else still refused; a route that needs a body still says it is empty.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildAdminTestApp } from '../admin/helpers.js'
import { bearer } from '../helpers/app.js'
import { assertError } from '../helpers/errors.js'

const JSON_TYPE = { 'content-type': 'application/json' }

test('an empty JSON body is no body on the routes that take none, and still an error where a body is needed', async (t) => {
  const admin = await buildAdminTestApp(t)
  const created = (await admin.call('POST', '/admin/v1/keys', { plan: 'pro', name: 'no body' })).json()
  const key = { ...bearer(created.key), ...JSON_TYPE }
  const api = (url: string, payload?: string) => admin.api.inject({ method: 'POST', url, headers: key, payload })

  /** An order for an animal of its own. */
  const order = async () => {
    const pet = (await api('/v1/pets', '{"name":"Rex","categoryId":1,"status":"available"}')).json()
    return (await api('/v1/store/orders', `{"petId":${pet.id}}`)).json().id as number
  }
  for (const change of ['cancel', 'complete']) {
    const res = await api(`/v1/store/orders/${await order()}/${change}`, '')
    assert.equal(res.statusCode, 200, `${change} with an empty JSON body: ${res.body}`)
  }
  // Anything but none or {} is still refused, naming the operation.
  const refused = await api(`/v1/store/orders/${await order()}/cancel`, '{"reason":"x"}')
  assertError(refused, 400, 'invalid_request')
  assert.match(refused.json().message, /cancel takes no body/)

  const revoke = await admin.app.inject({
    method: 'POST',
    url: `/admin/v1/keys/${created.apiKey.id}/revoke`,
    headers: { authorization: `Bearer ${admin.token}`, ...JSON_TYPE },
    payload: '',
  })
  assert.equal(revoke.statusCode, 200, revoke.body)
  assert.equal(revoke.json().alreadyRevoked, false)
  assert.equal(revoke.json().apiKey.state, 'revoked')

  // A route that needs a body: an empty one is still the 400 it was.
  const other = (await admin.call('POST', '/admin/v1/keys', { plan: 'pro', name: 'other' })).json()
  const empty = await admin.api.inject({ method: 'POST', url: '/v1/pets', headers: { ...bearer(other.key), ...JSON_TYPE }, payload: '' })
  assertError(empty, 400, 'invalid_request')
  assert.match(empty.json().message, /Request body is empty/)
})
