/** The usage history operations of the admin API (getKeyUsageHistory, listTopUsage) through app.inject. */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { TEST_NOW } from '../../helpers/app.js'
import { buildAdminSuiteApp, buildAdminTestApp } from '../helpers.js'

const MINUTE = Date.UTC(2026, 10, 21, 12, 0, 0)
const HOUR = Date.UTC(2026, 10, 21, 12, 0, 0)
const iso = (ms: number) => new Date(ms).toISOString()

describe('usage history over the admin API', () => {
  const t = buildAdminSuiteApp({ env: { BAN_THRESHOLD: '2' } })

  const createKey = async (body: Record<string, unknown>) => {
    const res = await t.call('POST', '/admin/v1/keys', body)
    assert.equal(res.statusCode, 201)
    return res.json() as { key: string; apiKey: { id: string } }
  }
  const get = (key: string, url = '/v1/pets') => t.api.inject({ url, headers: { authorization: `Bearer ${key}` } })

  test('a known mix (allowed 2xx and 4xx, 429 rate_limited, 429 key_banned) is counted per minute, before any flush', async () => {
    const { key, apiKey } = await createKey({ plan: 'enterprise', name: 'tiny', perMinute: 2, perDay: 1000 })
    const codes: string[] = []
    assert.equal((await get(key)).statusCode, 200)
    assert.equal((await get(key, '/v1/pets/0')).statusCode, 404)
    for (let i = 0; i < 4; i++) {
      const res = await get(key)
      assert.equal(res.statusCode, 429)
      codes.push(res.json().code)
    }
    const limited = codes.filter((c) => c === 'rate_limited').length
    const banned = codes.filter((c) => c === 'key_banned').length
    assert.ok(limited > 0 && banned > 0, `both refusals seen: ${codes}`)

    const res = await t.call('GET', `/admin/v1/keys/${apiKey.id}/usage/history?from=${iso(MINUTE - 120_000)}&to=${iso(MINUTE + 60_000)}`)
    assert.equal(res.statusCode, 200)
    assert.deepEqual(res.json(), {
      data: [
        { start: iso(MINUTE - 120_000), allowed: 0, rateLimited: 0, banned: 0, status2xx: 0, status4xx: 0, status5xx: 0 },
        { start: iso(MINUTE - 60_000), allowed: 0, rateLimited: 0, banned: 0, status2xx: 0, status4xx: 0, status5xx: 0 },
        { start: iso(MINUTE), allowed: 2, rateLimited: limited, banned, status2xx: 1, status4xx: 1 + limited + banned, status5xx: 0 },
      ],
    })
    // The same, stored: one flush of the main app's recorder, then the hour view.
    await t.domain.recorders.usage.flush()
    assert.equal(t.domain.recorders.usage.size, 0)
    const hours = (await t.call('GET', `/admin/v1/keys/${apiKey.id}/usage/history?granularity=hour`)).json().data
    assert.equal(hours.length, 24, 'default: the last 24 hours, zero-filled')
    assert.deepEqual(hours.at(-1), {
      start: iso(HOUR),
      allowed: 2,
      rateLimited: limited,
      banned,
      status2xx: 1,
      status4xx: 1 + limited + banned,
      status5xx: 0,
    })

    const top = (await t.call('GET', '/admin/v1/usage/top?by=rateLimited')).json()
    assert.deepEqual(top.data[0], {
      keyId: apiKey.id,
      name: 'tiny',
      plan: 'enterprise',
      requests: 2 + limited + banned,
      allowed: 2,
      rateLimited: limited,
      banned,
    })
  })

  test('the default minute range is the last 60 minutes up to the end of the current one', async () => {
    const { apiKey } = await createKey({ plan: 'free', name: 'quiet' })
    const data = (await t.call('GET', `/admin/v1/keys/${apiKey.id}/usage/history`)).json().data as Array<{ start: string }>
    assert.equal(data.length, 60)
    assert.equal(data.at(-1)?.start, iso(MINUTE))
    assert.ok(TEST_NOW >= MINUTE)
  })

  test('scope=chain sums every key of the rotation chain; scope=key the key alone', async () => {
    const first = await createKey({ plan: 'free', name: 'rotating' })
    assert.equal((await get(first.key)).statusCode, 200)
    const rotated = await t.call('POST', `/admin/v1/keys/${first.apiKey.id}/rotate`, { gracePeriodSeconds: 3600 })
    const second = rotated.json() as { key: string; apiKey: { id: string } }
    assert.equal((await get(second.key)).statusCode, 200)
    assert.equal((await get(second.key)).statusCode, 200)
    await t.domain.recorders.usage.flush()
    assert.equal((await get(first.key)).statusCode, 200, 'pending, not stored')
    const allowed = async (id: string, scope: string) =>
      (await t.call('GET', `/admin/v1/keys/${id}/usage/history?scope=${scope}&from=${iso(MINUTE)}`)).json().data[0].allowed
    assert.equal(await allowed(first.apiKey.id, 'key'), 2)
    assert.equal(await allowed(second.apiKey.id, 'key'), 2)
    assert.equal(await allowed(second.apiKey.id, 'chain'), 4)
    assert.equal(await allowed(first.apiKey.id, 'chain'), 4)
  })

  test('bad input is 400 naming the field; an unknown key is 404; reads are on the audit log', async () => {
    const { apiKey } = await createKey({ plan: 'free', name: 'bad input' })
    const history = `/admin/v1/keys/${apiKey.id}/usage/history`
    const cases: Array<[string, RegExp]> = [
      [`${history}?from=${iso(MINUTE - 1441 * 60_000)}&to=${iso(MINUTE)}`, /^from: .*at most 1440/],
      [`${history}?granularity=hour&from=2026-01-01T00:00:00Z&to=2026-11-21T00:00:00Z`, /^from: .*at most 2160/],
      [`${history}?from=${iso(MINUTE)}&to=${iso(MINUTE - 60_000)}`, /^from must be earlier than to/],
      [`${history}?from=yesterday`, /^from must be an RFC 3339 date-time/],
      [`${history}?to=2026-11-21`, /^to must be an RFC 3339 date-time/],
      [`${history}?granularity=second`, /granularity/],
      [`${history}?scope=all`, /scope/],
      [`${history}?extra=1`, /extra/],
      ['/admin/v1/usage/top?limit=0', /limit/],
      ['/admin/v1/usage/top?limit=101', /limit/],
      ['/admin/v1/usage/top?by=banned', /by/],
      ['/admin/v1/usage/top?from=2026-01-01T00:00:00Z', /^from: .*at most 2160/],
    ]
    for (const [url, message] of cases) {
      const res = await t.call('GET', url)
      assert.equal(res.statusCode, 400, url)
      assert.equal(res.json().code, 'invalid_request', url)
      assert.match(res.json().message, message, url)
    }
    const missing = await t.call('GET', '/admin/v1/keys/key_0000000000000000/usage/history')
    assert.equal(missing.statusCode, 404)
    assert.deepEqual(missing.json(), { code: 'not_found', message: 'No key with id key_0000000000000000', status: 404 })
    const audited = async () =>
      ((await t.call('GET', `/admin/v1/audit-log?keyId=${apiKey.id}`)).json().data as Array<{ action: string }>).filter(
        (e) => e.action === 'key.usage_history',
      ).length
    assert.equal(await audited(), 0, 'a refused read is not on record')
    assert.equal((await t.call('GET', `${history}?granularity=hour&scope=chain`)).statusCode, 200)
    assert.equal(await audited(), 1)
    const [entry] = (
      (await t.call('GET', `/admin/v1/audit-log?keyId=${apiKey.id}`)).json().data as Array<{ action: string; details: unknown }>
    ).filter((e) => e.action === 'key.usage_history')
    assert.deepEqual(entry?.details, { granularity: 'hour', scope: 'chain', from: iso(HOUR - 23 * 3_600_000), to: iso(HOUR + 3_600_000) })
  })

  test('top: keys with none of the measure are left out; limit applies', async () => {
    const res = await t.call('GET', '/admin/v1/usage/top?limit=1')
    assert.equal(res.statusCode, 200)
    const data = res.json().data as Array<{ requests: number }>
    assert.equal(data.length, 1)
    const all = (await t.call('GET', '/admin/v1/usage/top?by=requests&limit=100')).json().data as Array<{ requests: number; keyId: string }>
    assert.ok(all.every((k) => k.requests > 0))
    assert.deepEqual(
      all.map((k) => k.requests),
      [...all.map((k) => k.requests)].sort((a, b) => b - a),
    )
  })
})

describe('the top list with more keys pending than a SQLite statement takes parameters', () => {
  test('40,000 keys with unflushed counts: 200, with the pending counts of the keys that exist', async (context) => {
    const t = await buildAdminTestApp(context)
    const id = (await t.call('POST', '/admin/v1/keys', { plan: 'pro', name: 'busiest' })).json().apiKey.id as string
    // Keys counted by this instance and not flushed yet (a busy service; the ids of keys since deleted are not listed).
    for (let i = 0; i < 40_000; i++) t.domain.recorders.usage.record(`key_gone${String(i).padStart(12, '0')}`, 'allowed', 200, TEST_NOW)
    for (let i = 0; i < 3; i++) t.domain.recorders.usage.record(id, 'allowed', 200, TEST_NOW)
    const res = await t.call('GET', '/admin/v1/usage/top?limit=5')
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(
      (res.json().data as Array<{ keyId: string; requests: number }>).map((k) => [k.keyId, k.requests]),
      [[id, 3]],
    )
  })
})
