/**
 * A date that does not exist (30 February, hour 24) is a 400 naming the field in every place the
 * admin API reads a time: a key's expiresAt (create, update), the usage history's and the top
 * list's from and to, the audit log's from and to. It used to be moved (2027-02-30 became
 * 2027-03-02) and taken. The same text, written as a date that exists, is answered as before.
 */
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { assertError } from '../helpers/errors.js'
import { buildAdminSuiteApp } from './helpers.js'

// In a describe block: its hooks run in order (Node 20 runs a file's top-level before hooks at once).
describe('a date that does not exist, wherever the admin API reads a time', () => {
  let keyId: string
  const a = buildAdminSuiteApp()
  before(async () => {
    const created = await a.call('POST', '/admin/v1/keys', { plan: 'pro', name: 'dated' })
    assert.equal(created.statusCode, 201, created.body)
    keyId = created.json().apiKey.id
  })

  const FEBRUARY_30 = '2027-02-30T00:00:00Z'
  const FEBRUARY_30_TOLD = '(February 2027 has 28 days, not day 30)'

  test('expiresAt on create and on update: 400 naming expiresAt and saying why; no key made or changed, nothing in the audit log', async () => {
    const keysBefore = JSON.stringify(await a.storage.keys.listKeys())
    const auditBefore = (await a.storage.audit.list({ limit: 100 })).entries.length
    const cases: Array<[string, string]> = [
      [FEBRUARY_30, FEBRUARY_30_TOLD],
      ['2027-04-31T12:00:00+02:00', '(April 2027 has 30 days, not day 31)'],
      ['2028-12-31T24:00:00Z', '(hours go from 00 to 23, not 24)'],
      ['2027-06-01T10:00:60Z', '(seconds go from 00 to 59, not 60)'],
    ]
    for (const [expiresAt, told] of cases) {
      const message = `expiresAt must be a date and time that exists ${told}`
      const create = await a.call('POST', '/admin/v1/keys', { plan: 'free', name: 'x', expiresAt })
      assert.equal(assertError(create, 400, 'invalid_request').message, message)
      const update = await a.call('PATCH', `/admin/v1/keys/${keyId}`, { expiresAt })
      assert.equal(assertError(update, 400, 'invalid_request').message, message)
    }
    assert.equal(JSON.stringify(await a.storage.keys.listKeys()), keysBefore)
    assert.equal((await a.storage.audit.list({ limit: 100 })).entries.length, auditBefore)
    // A date that exists is taken as before.
    const good = await a.call('PATCH', `/admin/v1/keys/${keyId}`, { expiresAt: '2027-02-28T00:00:00Z' })
    assert.equal(good.statusCode, 200, good.body)
    assert.equal(good.json().expiresAt, '2027-02-28T00:00:00.000Z')
  })

  test('from and to of the usage history, the top list and the audit log: 400 naming the parameter', async () => {
    const places = [`/admin/v1/keys/${keyId}/usage/history?granularity=hour&`, '/admin/v1/usage/top?', '/admin/v1/audit-log?']
    for (const place of places) {
      for (const field of ['from', 'to']) {
        const res = await a.call('GET', `${place}${field}=${FEBRUARY_30}`)
        assert.equal(assertError(res, 400, 'invalid_request').message, `${field} must be a date and time that exists ${FEBRUARY_30_TOLD}`)
        const hour24 = await a.call('GET', `${place}${field}=2030-01-01T24:00:00Z`)
        assert.equal(
          assertError(hour24, 400, 'invalid_request').message,
          `${field} must be a date and time that exists (hours go from 00 to 23, not 24)`,
        )
      }
      // The same range, written as dates that exist, is answered.
      const res = await a.call('GET', `${place}from=2030-02-28T00:00:00Z&to=2030-03-01T00:00:00Z`)
      assert.equal(res.statusCode, 200, `${place}: ${res.body}`)
    }
  })
})
