/**
 * The admin API and /metrics exist on the admin listener only. The main listener has no route for
 * them, so every spelling of their paths (percent-encoding, case, dot segments, double slashes,
 * absolute form), from any client address and with any credentials, is the 404 of a path that
 * does not exist, and changes nothing. (Over a real socket, from a client in a network namespace
 * of its own: test/system/admin/admin-listener.test.ts.)
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import fc from 'fast-check'
import type { InjectOptions } from 'fastify'
import { buildAdminSuiteApp } from './helpers.js'

/** `segment` spelled another way the router or a client might accept: percent-encoded letters (any hex case), letter case. */
const spelling = (segment: string) =>
  fc
    .array(fc.constantFrom('plain', 'encoded', 'ENCODED', 'upper'), { minLength: segment.length, maxLength: segment.length })
    .map((choices) =>
      [...segment]
        .map((ch, i) => {
          const hex = ch.charCodeAt(0).toString(16)
          if (choices[i] === 'encoded') return `%${hex.toLowerCase()}`
          if (choices[i] === 'ENCODED') return `%${hex.toUpperCase()}`
          return choices[i] === 'upper' ? ch.toUpperCase() : ch
        })
        .join(''),
    )

/** A request target for an operator path: its first segment spelled some way, behind prefixes that a normalising client or proxy would remove. */
const operatorTarget = fc
  .record({
    path: fc.oneof(
      fc.tuple(spelling('admin'), fc.constantFrom('/v1/keys', '/v1/audit-log', '/v1/openapi.json', '/v1/keys/key_0000000000000000', '')),
      fc.tuple(spelling('metrics'), fc.constant('')),
    ),
    prefix: fc.constantFrom('', '/', '/.', '/v1/..', '/x/..', '/%2e', '/v1/%2E%2E', '/./.'),
    absolute: fc.constantFrom('', 'http://animal-store.example', 'http://127.0.0.1:8080'),
    query: fc.constantFrom('', '?limit=1', '?x=%2Fadmin'),
  })
  .map(({ path: [first, rest], prefix, absolute, query }) => `${absolute}${prefix}/${first}${rest}${query}`)

describe('the main listener serves no operator path, in any spelling', () => {
  const t = buildAdminSuiteApp()

  /** Audit entries of changes (reads are audited too: those are left out). */
  const recordedChanges = async () =>
    ((await t.call('GET', '/admin/v1/audit-log?limit=100')).json().data as Array<{ action: string }>).filter(
      (entry) => !['key.list', 'key.read', 'key.usage', 'audit_log.list'].includes(entry.action),
    ).length

  test('a sample of spellings answers the admin listener on its own app (the generator does reach it there)', async () => {
    for (const url of ['/admin/v1/keys', '/%61dmin/v1/keys', '/admi%6E/v1/keys', 'http://x/%61dmin/v1/keys', '/metrics']) {
      const res = await t.app.inject({ url, headers: { authorization: `Bearer ${t.token}` } })
      assert.equal(res.statusCode, 200, url)
    }
  })

  test('every generated spelling, method, address and credential gets the 404 of an unknown path, and nothing changes', async () => {
    const keysBefore = (await t.call('GET', '/admin/v1/keys?limit=100')).json().data.length
    const changesBefore = await recordedChanges()
    await fc.assert(
      fc.asyncProperty(
        operatorTarget,
        fc.constantFrom<InjectOptions['method']>('GET', 'POST', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'),
        fc.constantFrom('127.0.0.1', '::1', '::ffff:127.0.0.1', '10.231.0.2', '203.0.113.9', '::ffff:10.0.0.1'),
        fc.constantFrom('admin', 'none', 'garbage'),
        async (url, method, remoteAddress, credentials) => {
          // A fresh minute per run: these requests are limited per address like any unknown path,
          // and this test is about what they are answered, not how often.
          t.clock.advance(61_000)
          const authorization =
            credentials === 'admin' ? `Bearer ${t.token}` : credentials === 'garbage' ? 'Bearer as_admin_nope' : undefined
          const res = await t.api.inject({
            method,
            url,
            remoteAddress,
            headers: { ...(authorization === undefined ? {} : { authorization }), 'content-type': 'application/json' },
            ...(method === 'POST' || method === 'PATCH'
              ? { payload: JSON.stringify({ plan: 'enterprise', name: 'x', perMinute: 1e6, perDay: 1e6 }) }
              : {}),
          })
          assert.equal(res.statusCode, 404, `${method} ${url} from ${remoteAddress}: ${res.statusCode} ${res.body}`)
          if (method !== 'HEAD') assert.equal(res.json().code, 'not_found')
        },
      ),
      { numRuns: 300, seed: 17 },
    )
    assert.equal((await t.call('GET', '/admin/v1/keys?limit=100')).json().data.length, keysBefore, 'no key was created')
    assert.equal(await recordedChanges(), changesBefore, 'no change was audited')
  })

  test("the admin API and /metrics are not in the main listener's OpenAPI document or docs", async () => {
    const doc = (await t.api.inject({ url: '/v1/openapi.json' })).body
    assert.equal(doc.includes('/admin'), false)
    assert.equal(doc.includes('/metrics'), false)
  })
})
