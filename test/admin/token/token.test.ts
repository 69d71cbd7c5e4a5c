/** GET /admin/v1/token through app.inject: the caller's own token, its name and role, never the secret. */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createAdminToken } from '../../../src/admin-tokens/admin-tokens.js'
import { buildAdminSuiteApp } from '../helpers.js'

describe('admin API: GET /token', () => {
  const t = buildAdminSuiteApp()

  test('answers the presenting token: id, name, prefix, role (admin for a token made without one)', async () => {
    const res = await t.call('GET', '/admin/v1/token')
    assert.equal(res.statusCode, 200, res.body)
    const body = res.json()
    assert.equal(body.id, t.tokenId)
    assert.equal(body.name, 'test token')
    assert.equal(body.role, 'admin')
    assert.equal(body.prefix, t.token.slice(0, 13))
    assert.match(body.createdAt, /^\d{4}-\d\d-\d\dT/)
    assert.equal(res.body.includes(t.token.slice(13)), false)
  })

  test('a read token sees itself as read; no token is 401', async () => {
    const { token, record } = await createAdminToken(t.storage.adminTokens, { name: 'auditor', role: 'read' })
    const res = await t.app.inject({ url: '/admin/v1/token', headers: { authorization: `Bearer ${token}` } })
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual({ id: res.json().id, name: res.json().name, role: res.json().role }, { id: record.id, name: 'auditor', role: 'read' })
    assert.equal((await t.app.inject({ url: '/admin/v1/token' })).statusCode, 401)
  })
})
