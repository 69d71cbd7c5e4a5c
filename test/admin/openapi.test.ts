/**
 * The admin API's own OpenAPI document (/admin/v1/openapi.json): a valid OpenAPI 3.1 document,
 * every admin operation in it and nothing else, answers that match it; and the public document
 * (/v1/openapi.json, /docs) that knows nothing of the admin API.
 */
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { Validator } from '@seriousme/openapi-schema-validator'
import type { Options as AjvOptions } from 'ajv'
import { Ajv2020 } from 'ajv/dist/2020.js'
import type { LightMyRequestResponse } from 'fastify'
import { OpenAPIBackend, SetMatchType } from 'openapi-backend'
import { createAdminToken } from '../../src/admin-tokens/admin-tokens.js'
import { StorageUnavailableError } from '../../src/shared/outages.js'
import { buildAdminSuiteApp } from './helpers.js'

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

function ajv2020(opts: AjvOptions) {
  const ajv = new Ajv2020({ ...opts, strict: false, allErrors: true })
  ajv.addFormat('date-time', RFC3339)
  ajv.addFormat('int64', { type: 'number', validate: (v: number) => Number.isInteger(v) })
  return ajv
}

describe('admin OpenAPI document', () => {
  let doc: any
  let api: OpenAPIBackend
  const t = buildAdminSuiteApp()
  before(async () => {
    const res = await t.call('GET', '/admin/v1/openapi.json')
    assert.equal(res.statusCode, 200, res.body)
    doc = res.json()
    api = new OpenAPIBackend({
      definition: structuredClone(doc),
      apiRoot: '/admin/v1',
      strict: true,
      validate: true,
      quick: false,
      customizeAjv: (_original, opts) => ajv2020(opts as AjvOptions) as never,
    })
    await api.init()
  })

  test('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(doc)
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2))
    assert.equal(doc.openapi, '3.1.0')
    assert.deepEqual(doc.servers, [{ url: '/admin/v1', description: 'This server (the address this document was loaded from)' }])
    assert.deepEqual(doc.security, [{ adminToken: [] }])
  })

  test('has every admin operation and nothing of the public API', () => {
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods as Record<string, { operationId: string }>).map(([m, op]) => `${m.toUpperCase()} ${path} ${op.operationId}`),
    )
    assert.deepEqual(operations.sort(), [
      'DELETE /webhook-endpoints/{endpointId} deleteWebhookEndpoint',
      'GET /admin-tokens listAdminTokens',
      'GET /audit-log listAuditLog',
      'GET /customers listCustomers',
      'GET /customers/{customerId} getCustomer',
      'GET /customers/{customerId}/usage/history getCustomerUsageHistory',
      'GET /events listAnyEvents',
      'GET /keys listKeys',
      'GET /keys/{keyId} getKey',
      'GET /keys/{keyId}/usage getKeyUsage',
      'GET /keys/{keyId}/usage/history getKeyUsageHistory',
      'GET /orders listAnyOrders',
      'GET /orders/{orderId} getAnyOrder',
      'GET /token getAdminToken',
      'GET /usage/top listTopUsage',
      'GET /webhook-endpoints listWebhookEndpoints',
      'GET /webhook-endpoints/{endpointId} getWebhookEndpoint',
      'GET /webhook-endpoints/{endpointId}/deliveries listWebhookDeliveries',
      'GET /webhook-endpoints/{endpointId}/deliveries/{deliveryId} getWebhookDelivery',
      'PATCH /customers/{customerId} updateCustomer',
      'PATCH /keys/{keyId} updateKey',
      'PATCH /webhook-endpoints/{endpointId} updateWebhookEndpoint',
      'POST /admin-tokens createAdminToken',
      'POST /admin-tokens/{tokenId}/revoke revokeAdminToken',
      'POST /customers createCustomer',
      'POST /keys createKey',
      'POST /keys/lookup lookupKey',
      'POST /keys/{keyId}/revoke revokeKey',
      'POST /keys/{keyId}/rotate rotateKey',
      'POST /orders/{orderId}/cancel cancelAnyOrder',
      'POST /webhook-endpoints createWebhookEndpoint',
      'POST /webhook-endpoints/{endpointId}/deliveries/{deliveryId}/retry retryWebhookDelivery',
      'POST /webhook-endpoints/{endpointId}/replay replayWebhookEndpoint',
      'POST /webhook-endpoints/{endpointId}/rotate-secret rotateWebhookEndpointSecret',
    ])
    const schemas = Object.keys(doc.components.schemas).sort()
    assert.equal(schemas.includes('Pet'), false)
    assert.ok(schemas.includes('AdminKey') && schemas.includes('Error') && schemas.includes('AuditEntry'), schemas.join())
    assert.equal(doc.components.schemas.CreateKey.additionalProperties, false)
    assert.equal(doc.components.schemas.UpdateKey.additionalProperties, false)
  })

  test('the public document and /docs know nothing of the admin API', async () => {
    const pub = (await t.api.inject({ url: '/v1/openapi.json' })).json()
    assert.deepEqual(
      Object.keys(pub.paths).filter((p) => p.includes('admin') || p.startsWith('/keys') || p.startsWith('/audit')),
      [],
    )
    assert.deepEqual(Object.keys(pub.components.schemas).sort(), [
      'Error',
      'Event',
      'EventType',
      'Inventory',
      'NewOrder',
      'NewPet',
      'Order',
      'OrderStatus',
      'Pet',
      'PetStatus',
      'RateLimitStatus',
    ])
    assert.equal(JSON.stringify(pub).includes('as_admin_'), false)
    assert.equal((await new Validator().validate(pub)).valid, true)
  })

  test('answers match the document: status, body schema, headers', async () => {
    const created = await t.call('POST', '/admin/v1/keys', { plan: 'pro', name: 'doc', metadata: { a: [1, 'b'] } })
    const id = created.json().apiKey.id as string
    const { token: reader } = await createAdminToken(t.storage.adminTokens, { name: 'doc reader', role: 'read' })
    // A second read token, revoked by the case below (the first is used by the 403 cases after it).
    const readerId = (await createAdminToken(t.storage.adminTokens, { name: 'doc reader 2', role: 'read' })).record.id
    for (let i = 0; i < 3; i++) await t.call('POST', '/admin/v1/keys', { plan: 'free', name: `doc ${i}` })
    // A public address as the host: no name to resolve.
    const hook = await t.call('POST', '/admin/v1/webhook-endpoints', { url: 'https://93.184.215.14/hook', events: ['*'] })
    const hookId = hook.json().endpoint.id as string
    const hooks = '/admin/v1/webhook-endpoints'
    let deliveryId = ''
    const cases: Array<[string, string, number, () => Promise<LightMyRequestResponse>]> = [
      ['createKey', 'POST', 201, async () => created],
      ['createKey', 'POST', 400, () => t.call('POST', '/admin/v1/keys', { plan: 'gold', name: 'x' })],
      ['createKey', 'POST', 401, () => t.app.inject({ method: 'POST', url: '/admin/v1/keys', payload: {} })],
      ['createKey', 'POST', 415, () => t.call('POST', '/admin/v1/keys', 'plan=free', { 'content-type': 'text/plain' })],
      ['createKey', 'POST', 413, () => t.call('POST', '/admin/v1/keys', { plan: 'free', name: 'x', metadata: { b: 'x'.repeat(17_000) } })],
      ['listKeys', 'GET', 200, () => t.call('GET', '/admin/v1/keys?limit=2')],
      ['listKeys', 'GET', 400, () => t.call('GET', '/admin/v1/keys?limit=0')],
      ['getKey', 'GET', 200, () => t.call('GET', `/admin/v1/keys/${id}`)],
      ['getKey', 'GET', 404, () => t.call('GET', '/admin/v1/keys/key_0000000000000000')],
      ['getKey', 'GET', 400, () => t.call('GET', '/admin/v1/keys/x')],
      ['updateKey', 'PATCH', 200, () => t.call('PATCH', `/admin/v1/keys/${id}`, { name: 'doc 2', metadata: null })],
      ['updateKey', 'PATCH', 400, () => t.call('PATCH', `/admin/v1/keys/${id}`, { nope: 1 })],
      ['updateKey', 'PATCH', 404, () => t.call('PATCH', '/admin/v1/keys/key_0000000000000000', { name: 'x' })],
      ['getKeyUsage', 'GET', 200, () => t.call('GET', `/admin/v1/keys/${id}/usage`)],
      ['getKeyUsageHistory', 'GET', 200, () => t.call('GET', `/admin/v1/keys/${id}/usage/history?granularity=hour&scope=chain`)],
      ['getKeyUsageHistory', 'GET', 400, () => t.call('GET', `/admin/v1/keys/${id}/usage/history?from=x`)],
      ['getKeyUsageHistory', 'GET', 404, () => t.call('GET', '/admin/v1/keys/key_0000000000000000/usage/history')],
      ['listTopUsage', 'GET', 200, () => t.call('GET', '/admin/v1/usage/top?by=rateLimited&limit=5')],
      ['listTopUsage', 'GET', 400, () => t.call('GET', '/admin/v1/usage/top?limit=0')],
      ['rotateKey', 'POST', 201, () => t.call('POST', `/admin/v1/keys/${id}/rotate`, { gracePeriodSeconds: 60 })],
      ['rotateKey', 'POST', 400, () => t.call('POST', `/admin/v1/keys/${id}/rotate`, { gracePeriodSeconds: 10 ** 6 })],
      ['updateKey', 'PATCH', 409, () => t.call('PATCH', `/admin/v1/keys/${id}`, { name: 'after the rotation' })],
      ['rotateKey', 'POST', 409, () => t.call('POST', `/admin/v1/keys/${id}/rotate`, { gracePeriodSeconds: 60 })],
      ['revokeKey', 'POST', 200, () => t.call('POST', `/admin/v1/keys/${id}/revoke`)],
      ['revokeKey', 'POST', 404, () => t.call('POST', '/admin/v1/keys/key_0000000000000000/revoke')],
      ['listAuditLog', 'GET', 200, () => t.call('GET', '/admin/v1/audit-log?limit=2')],
      ['getAdminToken', 'GET', 200, () => t.call('GET', '/admin/v1/token')],
      ['listAdminTokens', 'GET', 200, () => t.call('GET', '/admin/v1/admin-tokens?limit=1')],
      ['listAdminTokens', 'GET', 400, () => t.call('GET', '/admin/v1/admin-tokens?limit=0')],
      ['createAdminToken', 'POST', 201, () => t.call('POST', '/admin/v1/admin-tokens', { name: 'doc colleague', role: 'read' })],
      ['createAdminToken', 'POST', 400, () => t.call('POST', '/admin/v1/admin-tokens', { name: 'x', role: 'owner' })],
      [
        'createAdminToken',
        'POST',
        403,
        () => t.app.inject({ method: 'POST', url: '/admin/v1/admin-tokens', headers: { authorization: `Bearer ${reader}` } }),
      ],
      ['revokeAdminToken', 'POST', 200, () => t.call('POST', `/admin/v1/admin-tokens/${readerId}/revoke`)],
      ['revokeAdminToken', 'POST', 404, () => t.call('POST', '/admin/v1/admin-tokens/adm_0000000000000000/revoke')],
      ['revokeAdminToken', 'POST', 409, () => t.call('POST', `/admin/v1/admin-tokens/${t.tokenId}/revoke`)],
      [
        'createKey',
        'POST',
        403,
        () => t.app.inject({ method: 'POST', url: '/admin/v1/keys', headers: { authorization: `Bearer ${reader}` } }),
      ],
      ['createWebhookEndpoint', 'POST', 201, async () => hook],
      ['createWebhookEndpoint', 'POST', 400, () => t.call('POST', hooks, { url: 'https://127.0.0.1/hook', events: ['*'] })],
      ['listWebhookEndpoints', 'GET', 200, () => t.call('GET', `${hooks}?limit=1`)],
      ['listWebhookEndpoints', 'GET', 400, () => t.call('GET', `${hooks}?state=gone`)],
      ['getWebhookEndpoint', 'GET', 200, () => t.call('GET', `${hooks}/${hookId}`)],
      ['getWebhookEndpoint', 'GET', 404, () => t.call('GET', `${hooks}/we_0000000000000000`)],
      [
        'listWebhookDeliveries',
        'GET',
        200,
        async () => {
          // The key events since the endpoint was made, their deliveries claimed by hand (the test app sends nothing: WEBHOOK_DELIVERY=off).
          await t.storage.webhookDeliveries.claimDue(Date.now(), 100, Date.now() + 60_000)
          const res = await t.call('GET', `${hooks}/${hookId}/deliveries?limit=1`)
          deliveryId = res.json().data[0]?.id
          return res
        },
      ],
      ['listWebhookDeliveries', 'GET', 400, () => t.call('GET', `${hooks}/${hookId}/deliveries?limit=0`)],
      ['listWebhookDeliveries', 'GET', 404, () => t.call('GET', `${hooks}/we_0000000000000000/deliveries`)],
      ['getWebhookDelivery', 'GET', 200, () => t.call('GET', `${hooks}/${hookId}/deliveries/${deliveryId}`)],
      ['getWebhookDelivery', 'GET', 400, () => t.call('GET', `${hooks}/${hookId}/deliveries/x`)],
      ['getWebhookDelivery', 'GET', 404, () => t.call('GET', `${hooks}/${hookId}/deliveries/dlv_0000000000000000`)],
      ['retryWebhookDelivery', 'POST', 202, () => t.call('POST', `${hooks}/${hookId}/deliveries/${deliveryId}/retry`)],
      ['retryWebhookDelivery', 'POST', 404, () => t.call('POST', `${hooks}/${hookId}/deliveries/dlv_0000000000000000/retry`)],
      ['replayWebhookEndpoint', 'POST', 202, () => t.call('POST', `${hooks}/${hookId}/replay`, { since: '2026-11-21T00:00:00Z' })],
      ['replayWebhookEndpoint', 'POST', 400, () => t.call('POST', `${hooks}/${hookId}/replay`, { since: 'yesterday' })],
      [
        'replayWebhookEndpoint',
        'POST',
        404,
        () => t.call('POST', `${hooks}/we_0000000000000000/replay`, { since: '2026-11-21T00:00:00Z' }),
      ],
      ['updateWebhookEndpoint', 'PATCH', 200, () => t.call('PATCH', `${hooks}/${hookId}`, { enabled: false })],
      ['replayWebhookEndpoint', 'POST', 409, () => t.call('POST', `${hooks}/${hookId}/replay`, { since: '2026-11-21T00:00:00Z' })],
      ['retryWebhookDelivery', 'POST', 409, () => t.call('POST', `${hooks}/${hookId}/deliveries/${deliveryId}/retry`)],
      ['updateWebhookEndpoint', 'PATCH', 400, () => t.call('PATCH', `${hooks}/${hookId}`, { events: ['nope'] })],
      ['rotateWebhookEndpointSecret', 'POST', 200, () => t.call('POST', `${hooks}/${hookId}/rotate-secret`, {})],
      ['rotateWebhookEndpointSecret', 'POST', 404, () => t.call('POST', `${hooks}/we_0000000000000000/rotate-secret`, {})],
      [
        'deleteWebhookEndpoint',
        'DELETE',
        403,
        () => t.app.inject({ method: 'DELETE', url: `${hooks}/${hookId}`, headers: { authorization: `Bearer ${reader}` } }),
      ],
      ['deleteWebhookEndpoint', 'DELETE', 204, () => t.call('DELETE', `${hooks}/${hookId}`)],
      ['deleteWebhookEndpoint', 'DELETE', 404, () => t.call('DELETE', `${hooks}/${hookId}`)],
      ['listAuditLog', 'GET', 400, () => t.call('GET', '/admin/v1/audit-log?limit=x')],
      ['listAuditLog', 'GET', 401, () => t.app.inject({ url: '/admin/v1/audit-log', headers: { authorization: 'Bearer as_live_x' } })],
      ['listKeys', 'GET', 500, () => failing(new Error('disk on fire'))],
      ['listKeys', 'GET', 503, () => failing(new StorageUnavailableError(new Error('ECONNREFUSED')))],
    ]
    /** listKeys while the store fails with `error` (after authentication and limiting, as a real outage would). */
    async function failing(error: Error) {
      const pageKeys = t.storage.keys.pageKeys
      t.storage.keys.pageKeys = async () => {
        throw error
      }
      try {
        return await t.call('GET', '/admin/v1/keys')
      } finally {
        t.storage.keys.pageKeys = pageKeys
      }
    }
    for (const [operationId, method, status, ask] of cases) {
      const res = await ask()
      const why = `${operationId} ${status}: ${res.body.slice(0, 300)}`
      assert.equal(res.statusCode, status, why)
      const documented =
        doc.paths[Object.keys(doc.paths).find((p) => doc.paths[p][method.toLowerCase()]?.operationId === operationId)!][
          method.toLowerCase()
        ].responses[String(status)]
      assert.ok(documented, `${why}: status documented`)
      if (status === 204) assert.equal(res.body, '', `${why}: no body`)
      else {
        const body = api.validator.validateResponse(res.json(), operationId, status)
        assert.equal(body.valid, true, `${why}: ${JSON.stringify(body.errors)}`)
      }
      for (const name of Object.keys(documented.headers ?? {})) {
        if (['Link', 'WWW-Authenticate', 'Retry-After'].includes(name)) continue
        assert.ok(res.headers[name.toLowerCase()] !== undefined, `${why}: header ${name}`)
      }
      const headers = api.validator.validateResponseHeaders(res.headers as Record<string, string>, operationId, {
        statusCode: status,
        setMatchType: SetMatchType.Any,
      })
      assert.equal(headers.valid, true, `${why}: ${JSON.stringify(headers.errors)}`)
    }
  })
})
