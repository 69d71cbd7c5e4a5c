/**
 * Admin token roles through app.inject: a `read` token may call every read of the admin API and
 * is refused every change with 403 forbidden_role (before its body is read), changing nothing; an
 * `admin` token may do everything. The changes are found in the served admin document, so a
 * change operation added later is covered without a word here.
 */
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { createAdminToken } from '../../src/admin-tokens/admin-tokens.js'
import { isAdminRead } from '../../src/auth/admin-token-credential.js'
import { buildAdminSuiteApp } from '../admin/helpers.js'

/**
 * The admin operations that are reads although their method takes a body (route config
 * `adminRead: true`): named here, so that a new one is a decision this test is told of.
 */
const READS_BY_CONFIG = ['lookupKey']

type Operation = { method: string; path: string; operationId: string; responses: Record<string, unknown> }

describe('admin token roles', () => {
  const t = buildAdminSuiteApp()
  let reader: string
  let operations: Operation[]
  let keyId: string
  let customerId: string
  let endpointId: string
  before(async () => {
    reader = (await createAdminToken(t.storage.adminTokens, { name: 'auditor', role: 'read' })).token
    keyId = (await t.call('POST', '/admin/v1/keys', { plan: 'free', name: 'seen' })).json().apiKey.id
    customerId = (await t.call('POST', '/admin/v1/customers', { plan: 'free', name: 'seen' })).json().id
    endpointId = (await t.call('POST', '/admin/v1/webhook-endpoints', { url: 'https://93.184.215.14/hook', events: ['*'] })).json().endpoint
      .id
    const doc = (await t.call('GET', '/admin/v1/openapi.json')).json()
    operations = Object.entries(doc.paths as Record<string, Record<string, Omit<Operation, 'method' | 'path'>>>).flatMap(
      ([path, methods]) => Object.entries(methods).map(([method, op]) => ({ ...op, method: method.toUpperCase(), path })),
    )
  })

  /** A path of the document with its parameters filled in: an existing key, customer and webhook endpoint, an order id, a delivery id. */
  const url = (path: string) =>
    `/admin/v1${path
      .replace('{keyId}', keyId)
      .replace('{orderId}', '1')
      .replace('{customerId}', customerId)
      .replace('{endpointId}', endpointId)
      .replace('{deliveryId}', 'dlv_0000000000000000')}`
  const asReader = (method: string, path: string, payload?: string) =>
    t.app.inject({
      method: method as 'GET',
      url: path,
      headers: { authorization: `Bearer ${reader}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(payload === undefined ? {} : { payload }),
    })

  test('every change operation of the document refuses a read token: 403 forbidden_role naming the role and the operation', async () => {
    const changes = operations.filter((o) => o.method !== 'GET' && o.method !== 'HEAD' && !READS_BY_CONFIG.includes(o.operationId))
    assert.ok(changes.length >= 5, changes.map((o) => o.operationId).join())
    const keysBefore = (await t.call('GET', '/admin/v1/keys?limit=100')).body
    for (const op of changes) {
      const res = await asReader(op.method, url(op.path), '{}')
      const why = `${op.method} ${op.path}: ${res.body}`
      assert.equal(res.statusCode, 403, why)
      assert.equal(res.json().code, 'forbidden_role', why)
      assert.equal(
        res.json().message,
        `This admin token has the role read: it may read but not change (${op.method} /admin/v1${op.path})`,
        why,
      )
      assert.ok(op.responses['403'], `${why}: the 403 is documented`)
    }
    // Nothing changed: the same keys, and no change of the reader in the audit log.
    assert.equal((await t.call('GET', '/admin/v1/keys?limit=100')).body, keysBefore)
    const audit = (await t.call('GET', '/admin/v1/audit-log?kind=change&limit=100')).json().data as Array<{ actor: { name?: string } }>
    assert.equal(
      audit.some((e) => e.actor.name === 'auditor'),
      false,
    )
  })

  test('the reads that are POSTs (adminRead: true) let a read token through, and document no 403', async () => {
    const listed = operations.filter((o) => READS_BY_CONFIG.includes(o.operationId))
    assert.deepEqual(listed.map((o) => o.operationId).sort(), [...READS_BY_CONFIG].sort(), 'each is in the document')
    for (const op of listed) {
      const res = await asReader(op.method, url(op.path), JSON.stringify({ prefix: 'as_live_Zzzz' }))
      assert.equal(res.statusCode, 200, `${op.operationId}: ${res.body}`)
      assert.equal(op.responses['403'], undefined, `${op.operationId} documents no 403`)
    }
  })

  test('every read operation of the document lets a read token through, and none documents a 403', async () => {
    const reads = operations.filter((o) => o.method === 'GET')
    assert.ok(reads.length >= 8)
    for (const op of reads) {
      const res = await asReader('GET', url(op.path))
      assert.notEqual(res.statusCode, 403, `${op.path}: ${res.body}`)
      assert.ok(res.statusCode === 200 || res.statusCode === 404, `${op.path}: ${res.statusCode} ${res.body}`)
      assert.equal(op.responses['403'], undefined, op.path)
    }
  })

  test('the refusal comes before the body is read or validated: malformed JSON is still 403, not 400', async () => {
    const res = await asReader('POST', '/admin/v1/keys', '{"plan":')
    assert.equal(res.statusCode, 403, res.body)
    assert.equal(res.json().code, 'forbidden_role')
  })

  test('an admin token (and one made without a role) may change', async () => {
    const res = await t.call('POST', '/admin/v1/keys', { plan: 'free', name: 'by admin' })
    assert.equal(res.statusCode, 201, res.body)
  })

  test('a read is a GET or HEAD, or a route whose config says adminRead: true', () => {
    assert.equal(isAdminRead('GET', {}), true)
    assert.equal(isAdminRead('HEAD', {}), true)
    for (const method of ['POST', 'PATCH', 'PUT', 'DELETE']) assert.equal(isAdminRead(method, {}), false, method)
    assert.equal(isAdminRead('POST', { adminRead: true }), true)
  })
})
