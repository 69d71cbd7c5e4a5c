/**
 * The admin listener trusts no X-Forwarded-For, whatever TRUST_PROXY says: TRUST_PROXY names the
 * main listener's proxies. Before, TRUST_PROXY=loopback applied to the admin listener too, so any
 * local process chose its own client address per request and guessed admin tokens without ever
 * meeting the per-address limit (300 wrong tokens from 300 forged addresses: 300 x 401, no 429).
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { buildAdminSuiteApp } from './helpers.js'

const GUESSES = 300
/** Calls without a valid token are limited per client address at the Free plan's 60 a minute. */
const PER_MINUTE = 60

/** A distinct made-up client address per request (10.0.x.y). */
const forged = (i: number) => `10.0.${Math.floor(i / 250)}.${(i % 250) + 1}`

describe('TRUST_PROXY=loopback: forwarded addresses', () => {
  const t = buildAdminSuiteApp({ env: { TRUST_PROXY: 'loopback' } })

  test(`${GUESSES} wrong admin tokens, each from another forged X-Forwarded-For, are limited as the one peer that sent them`, async () => {
    const statuses: number[] = []
    for (let i = 0; i < GUESSES; i++) {
      const res = await t.app.inject({
        url: '/admin/v1/keys',
        remoteAddress: '127.0.0.1',
        headers: { authorization: `Bearer as_admin_guess${i}`, 'x-forwarded-for': forged(i) },
      })
      statuses.push(res.statusCode)
    }
    const answered = statuses.filter((status) => status === 401).length
    assert.equal(answered, PER_MINUTE, `${PER_MINUTE} guesses answered, the rest limited (got ${answered} x 401)`)
    assert.deepEqual(
      statuses.slice(PER_MINUTE).filter((status) => status !== 429),
      [],
      'every guess after them is 429 (limited, then banned)',
    )
  })

  test('the main listener still takes the client address from its trusted proxy', async () => {
    const statuses: number[] = []
    for (let i = 0; i < PER_MINUTE + 10; i++) {
      const res = await t.api.inject({ url: '/v1/pets', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': forged(1000 + i) } })
      statuses.push(res.statusCode)
    }
    assert.deepEqual([...new Set(statuses)], [401], 'each forwarded address is a window of its own: none is limited')
  })
})
