/** The links the public API builds (api/common/links.ts, and the deprecation's): relative by default, never from the Host header. */
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { bearer, buildSuiteApp, buildTestApp } from '../../helpers/app.js'

describe('links', () => {
  let auth: Record<string, string>
  const t = buildSuiteApp()
  before(async () => {
    auth = bearer(await t.key({ plan: 'enterprise', perMinute: 100_000, perDay: 1_000_000 }))
  })

  test('links are relative by default and never built from the Host header; PUBLIC_BASE_URL makes them absolute', async (context) => {
    const host = { host: 'attacker.example' }
    const relative = await t.app.inject({ url: '/v1/pets/1', headers: { ...auth, ...host } })
    assert.match(relative.headers.link as string, /^<\/v1\/pets>; rel="successor-version", <\/docs#\/pets\/getPet>; rel="deprecation"/)
    const absolute = await buildTestApp(context, { env: { PUBLIC_BASE_URL: 'https://api.example.com' } })
    const key = { authorization: `Bearer ${await absolute.key()}`, ...host }
    for (let i = 0; i < 3; i++)
      await absolute.app.inject({
        method: 'POST',
        url: '/v1/pets',
        headers: { ...key, 'content-type': 'application/json' },
        payload: '{"name":"A","categoryId":1}',
      })
    const page = await absolute.app.inject({ url: '/v1/pets?limit=2', headers: key })
    assert.match(page.headers.link as string, /^<https:\/\/api\.example\.com\/v1\/pets\?limit=2&after=\d+>; rel="next"$/)
    const got = await absolute.app.inject({ url: '/v1/pets/1', headers: key })
    assert.match(got.headers.link as string, /^<https:\/\/api\.example\.com\/v1\/pets>; rel="successor-version"/)
    assert.doesNotMatch(String(page.headers.link) + String(got.headers.link), /attacker/)
  })
})
