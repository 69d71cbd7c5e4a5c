/**
 * Query strings follow one rule on every operation of both OpenAPI documents (public and admin):
 * an unknown parameter is 400 naming it, also where the operation declares no parameter, and
 * nothing is created or changed; a parameter given twice is 400 with one sentence, whatever its
 * type. The operations are read from the documents, so a new one cannot be left out.
 */

import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { createAdminToken } from '../../src/admin-tokens/admin-tokens.js'
import { buildAdminSuiteApp } from '../admin/helpers.js'
import { bearer } from '../helpers/app.js'
import { assertError } from '../helpers/errors.js'
import { createApiKey } from '../helpers/keys.js'

interface Operation {
  operationId: string
  method: string
  parameters?: Array<{ name: string; in: string; schema: { enum?: string[]; type?: string; minimum?: number; pattern?: string } }>
}

type Document = { paths: Record<string, Record<string, Operation>> }

/** Every operation of a document, with its path. */
const operationsOf = (doc: Document) =>
  Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ ...op, method: method.toUpperCase(), path })),
  )

/** A value the parameter's schema accepts. */
function validValue(schema: NonNullable<Operation['parameters']>[number]['schema']): string {
  if (schema.enum) return schema.enum[0]!
  if (schema.type === 'integer') return String(schema.minimum ?? 1)
  if (schema.pattern?.startsWith('^key_')) return 'key_0000000000000000'
  return 'acme'
}

describe('query strings on every operation', () => {
  let publicDoc: Document
  let adminDoc: Document
  let apiKey: string
  let keyId: string
  let customerId: string
  /** A valid request for each operation, but for its query string. */
  let requests: Record<string, { url: string; body?: unknown }>

  const t = buildAdminSuiteApp()
  before(async () => {
    apiKey = (await createApiKey(t.storage.keys, { plan: 'pro', name: 'caller' }, t.config.env)).key
    const created = await t.call('POST', '/admin/v1/keys', { plan: 'free', name: 'target' })
    keyId = created.json().apiKey.id
    customerId = (await t.call('POST', '/admin/v1/customers', { plan: 'free', name: 'customer' })).json().id
    const revocableTokenId = (await createAdminToken(t.storage.adminTokens, { name: 'revocable', role: 'read' })).record.id
    // A public address as the host: no name to resolve.
    const hook = { url: 'https://93.184.215.14/hook', events: ['*'] }
    const endpointId = (await t.call('POST', '/admin/v1/webhook-endpoints', hook)).json().endpoint.id as string
    const pet = await t.api.inject({
      method: 'POST',
      url: '/v1/pets',
      headers: { ...bearer(apiKey), 'content-type': 'application/json' },
      payload: '{"name":"Rex","categoryId":7}',
    })
    const json = { ...bearer(apiKey), 'content-type': 'application/json' }
    const forSale = await t.api.inject({
      method: 'POST',
      url: '/v1/pets',
      headers: json,
      payload: '{"name":"Max","categoryId":7,"status":"available"}',
    })
    const order = await t.api.inject({ method: 'POST', url: '/v1/store/orders', headers: json, payload: `{"petId":${forSale.json().id}}` })
    publicDoc = (await t.api.inject({ url: '/v1/openapi.json' })).json()
    adminDoc = (await t.call('GET', '/admin/v1/openapi.json')).json()
    requests = {
      listPets: { url: '/v1/pets' },
      createPet: { url: '/v1/pets', body: { name: 'Rex', categoryId: 7, status: 'available' } },
      getPet: { url: `/v1/pets/${pet.json().id}` },
      placeOrder: { url: '/v1/store/orders', body: { petId: forSale.json().id } },
      listOrders: { url: '/v1/store/orders' },
      getOrder: { url: `/v1/store/orders/${order.json().id}` },
      cancelOrder: { url: `/v1/store/orders/${order.json().id}/cancel` },
      completeOrder: { url: `/v1/store/orders/${order.json().id}/complete` },
      getInventory: { url: '/v1/store/inventory' },
      getRateLimit: { url: '/v1/rate_limit' },
      listEvents: { url: '/v1/events' },
      createKey: { url: '/admin/v1/keys', body: { plan: 'free', name: 'new' } },
      listKeys: { url: '/admin/v1/keys' },
      lookupKey: { url: '/admin/v1/keys/lookup', body: { prefix: 'as_live_AbCd' } },
      getKey: { url: `/admin/v1/keys/${keyId}` },
      updateKey: { url: `/admin/v1/keys/${keyId}`, body: { name: 'renamed' } },
      rotateKey: { url: `/admin/v1/keys/${keyId}/rotate`, body: { gracePeriodSeconds: 60 } },
      revokeKey: { url: `/admin/v1/keys/${keyId}/revoke` },
      getKeyUsage: { url: `/admin/v1/keys/${keyId}/usage` },
      getKeyUsageHistory: { url: `/admin/v1/keys/${keyId}/usage/history` },
      listTopUsage: { url: '/admin/v1/usage/top' },
      listAuditLog: { url: '/admin/v1/audit-log' },
      listAnyEvents: { url: '/admin/v1/events' },
      listAnyOrders: { url: '/admin/v1/orders' },
      getAnyOrder: { url: `/admin/v1/orders/${order.json().id}` },
      cancelAnyOrder: { url: `/admin/v1/orders/${order.json().id}/cancel` },
      getAdminToken: { url: '/admin/v1/token' },
      createCustomer: { url: '/admin/v1/customers', body: { plan: 'pro', name: 'new' } },
      listCustomers: { url: '/admin/v1/customers' },
      getCustomer: { url: `/admin/v1/customers/${customerId}` },
      updateCustomer: { url: `/admin/v1/customers/${customerId}`, body: { name: 'renamed' } },
      getCustomerUsageHistory: { url: `/admin/v1/customers/${customerId}/usage/history` },
      listAdminTokens: { url: '/admin/v1/admin-tokens' },
      createAdminToken: { url: '/admin/v1/admin-tokens', body: { name: 'colleague', role: 'read' } },
      revokeAdminToken: { url: `/admin/v1/admin-tokens/${revocableTokenId}/revoke` },
      createWebhookEndpoint: { url: '/admin/v1/webhook-endpoints', body: hook },
      listWebhookEndpoints: { url: '/admin/v1/webhook-endpoints' },
      getWebhookEndpoint: { url: `/admin/v1/webhook-endpoints/${endpointId}` },
      updateWebhookEndpoint: { url: `/admin/v1/webhook-endpoints/${endpointId}`, body: { enabled: false } },
      deleteWebhookEndpoint: { url: `/admin/v1/webhook-endpoints/${endpointId}` },
      rotateWebhookEndpointSecret: { url: `/admin/v1/webhook-endpoints/${endpointId}/rotate-secret`, body: {} },
      listWebhookDeliveries: { url: `/admin/v1/webhook-endpoints/${endpointId}/deliveries` },
      getWebhookDelivery: { url: `/admin/v1/webhook-endpoints/${endpointId}/deliveries/dlv_0000000000000000` },
      retryWebhookDelivery: { url: `/admin/v1/webhook-endpoints/${endpointId}/deliveries/dlv_0000000000000000/retry` },
      replayWebhookEndpoint: { url: `/admin/v1/webhook-endpoints/${endpointId}/replay`, body: { since: '2026-11-21T00:00:00Z' } },
    }
  })

  /** Every operation of both documents, with a way to send its valid request plus `query`. */
  function everyOperation() {
    const all = [
      ...operationsOf(publicDoc).map((op) => ({ ...op, admin: false, path: `/v1${op.path}` })),
      ...operationsOf(adminDoc).map((op) => ({ ...op, admin: true, path: `/admin/v1${op.path}` })),
    ]
    assert.deepEqual(all.map((op) => op.operationId).sort(), Object.keys(requests).sort(), 'a valid request for every operation')
    return all.map((op) => {
      const { url, body } = requests[op.operationId]!
      const send = (query: string): Promise<LightMyRequestResponse> => {
        const options: InjectOptions = { method: op.method as InjectOptions['method'], url: `${url}?${query}` }
        if (!op.admin) {
          options.headers = { ...bearer(apiKey), ...(body === undefined ? {} : { 'content-type': 'application/json' }) }
          if (body !== undefined) options.payload = JSON.stringify(body)
          return t.api.inject(options)
        }
        return t.call(op.method as InjectOptions['method'], `${url}?${query}`, body)
      }
      return { ...op, send }
    })
  }

  /** What the refused requests must leave as it was: animals, orders, keys and the audit log. */
  const state = async () =>
    JSON.stringify([
      await t.storage.pets.listPets({ limit: 1000 }),
      await t.storage.orders.listOrders({ limit: 1000 }),
      await t.storage.keys.listKeys(),
      await t.storage.audit.list({ limit: 100 }),
    ])

  test('an unknown parameter is 400 naming it on every operation, public and admin, and nothing is created or changed', async () => {
    const before = await state()
    for (const op of everyOperation()) {
      const res = await op.send('dryRun=1')
      assertError(res, 400, 'invalid_request', /^unknown query parameter 'dryRun'$/)
    }
    assert.equal(await state(), before, 'no animal created, no key created or changed, no audit entry')
    // The findings as reported: a create with ?dryRun=1 and getPet with a listing's parameter.
    assertError(
      await t.api.inject({
        method: 'POST',
        url: '/v1/pets?dryRun=1',
        headers: { ...bearer(apiKey), 'content-type': 'application/json' },
        payload: '{"name":"Rex","categoryId":7}',
      }),
      400,
      'invalid_request',
      "unknown query parameter 'dryRun'",
    )
    assertError(
      await t.api.inject({ url: `${requests.getPet!.url}?limit=5`, headers: bearer(apiKey) }),
      400,
      'invalid_request',
      "unknown query parameter 'limit'",
    )
    assert.equal(await state(), before)
  })

  test('a parameter given twice is 400 "must be given once", for every parameter of every operation', async () => {
    let checked = 0
    for (const op of everyOperation()) {
      for (const parameter of (op.parameters ?? []).filter((p) => p.in === 'query')) {
        const value = encodeURIComponent(validValue(parameter.schema))
        const res = await op.send(`${parameter.name}=${value}&${parameter.name}=${value}`)
        assertError(res, 400, 'invalid_request', `query parameter ${parameter.name} must be given once`)
        checked++
      }
    }
    assert.ok(checked >= 8, `the parameters of listPets, listKeys and listAuditLog (${checked})`)
  })

  test('a repeated parameter is named beside the other problems of the query, each once', async () => {
    const res = await t.api.inject({ url: '/v1/pets?status=sold&status=pending&limit=0&extra=1&extra=2', headers: bearer(apiKey) })
    assertError(
      res,
      400,
      'invalid_request',
      "3 problems: query parameter status must be given once; unknown query parameter 'extra'; query parameter limit must be an integer from 1 to 100 written in plain decimal",
    )
  })
})
