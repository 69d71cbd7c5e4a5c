/** The rate-limit headers of refused requests: exhausted windows, bans, and keys whose day is the tighter limit. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { ManualClock } from '../../src/shared/clock.js'
import { bearer, buildTestApp, TEST_NOW } from '../helpers/app.js'

const NOW_S = TEST_NOW / 1000
const DAY_END_S = Date.UTC(2026, 10, 22) / 1000
const MINUTE_END_S = Math.floor(NOW_S / 60) * 60 + 60
/** The windows without a key's partition key (pk: its own test, test/admin/customers/customers.test.ts). */
const noPk = (value: unknown) => String(value).replaceAll(/;pk=:[A-Za-z0-9+/=]*:/g, '')

test('a day limit below the minute limit is a plan: the day window answers', async (context) => {
  const t = await buildTestApp(context)
  const key = bearer(await t.key({ plan: 'enterprise', perMinute: 1000, perDay: 5 }))
  for (let i = 1; i <= 5; i++) {
    const res = await t.app.inject({ url: '/v1/pets', headers: key })
    assert.equal(res.statusCode, 200)
    assert.equal(res.headers['x-ratelimit-limit'], '5', 'the tightest window is the day')
    assert.equal(res.headers['x-ratelimit-remaining'], String(5 - i))
    assert.equal(res.headers['x-ratelimit-reset'], String(DAY_END_S))
    assert.equal(noPk(res.headers['ratelimit-policy']), '"minute";q=1000;w=60, "day";q=5;w=86400')
  }
  const sixth = await t.app.inject({ url: '/v1/pets', headers: key })
  assert.equal(sixth.statusCode, 429)
  assert.equal(sixth.json().code, 'rate_limited')
  assert.equal(sixth.headers['retry-after'], String(DAY_END_S - NOW_S), 'until the UTC day ends')
  assert.equal(sixth.headers['x-ratelimit-reset'], String(DAY_END_S))
  assert.equal(noPk(sixth.headers.ratelimit), `"minute";r=995;t=${MINUTE_END_S - NOW_S}, "day";r=0;t=${DAY_END_S - NOW_S}`)
})

test('during a ban each window reports its real remaining, and the ban is an item of its own', async (context) => {
  const t = await buildTestApp(context)
  const key = bearer(await t.key({ plan: 'free' }))
  const clock = t.clock as ManualClock
  const send = () => t.app.inject({ url: '/v1/pets', headers: key })
  for (let i = 0; i < 60; i++) assert.equal((await send()).statusCode, 200)
  for (let i = 0; i < 59; i++) assert.equal((await send()).json().code, 'rate_limited')
  const started = await send()
  assert.equal(started.json().code, 'key_banned')
  assert.equal(started.headers['retry-after'], '60')
  assert.equal(started.headers['x-ratelimit-remaining'], '0')
  assert.equal(started.headers['x-ratelimit-reset'], String(NOW_S + 60))
  assert.equal(noPk(started.headers['ratelimit-policy']), '"minute";q=60;w=60, "day";q=1000;w=86400', 'the policy does not change')
  assert.equal(noPk(started.headers.ratelimit), `"minute";r=0;t=30, "day";r=940;t=${DAY_END_S - NOW_S}, "ban";r=0;t=60`)

  clock.advance(30_000) // a new minute window, still banned
  const during = await send()
  assert.equal(during.json().code, 'key_banned')
  assert.equal(during.headers['retry-after'], '30')
  assert.equal(during.headers['x-ratelimit-remaining'], '0')
  assert.equal(during.headers['x-ratelimit-reset'], String(NOW_S + 60))
  assert.equal(noPk(during.headers.ratelimit), `"minute";r=60;t=60, "day";r=940;t=${DAY_END_S - NOW_S - 30}, "ban";r=0;t=30`)
  assert.match(during.json().message, /retry after 30 s/)

  clock.advance(30_000) // the ban is over: no ban item, the windows as they are
  const after = await send()
  assert.equal(after.statusCode, 200)
  assert.equal(noPk(after.headers.ratelimit), `"minute";r=59;t=30, "day";r=939;t=${DAY_END_S - NOW_S - 60}`)
})

test('a ban that ends before the exhausted day: Retry-After and X-RateLimit-Reset wait for the day', async (context) => {
  const t = await buildTestApp(context, { env: { BAN_THRESHOLD: '3' } })
  const key = bearer(await t.key({ plan: 'enterprise', perMinute: 1000, perDay: 5 }))
  const send = () => t.app.inject({ url: '/v1/pets', headers: key })
  for (let i = 0; i < 5; i++) assert.equal((await send()).statusCode, 200)
  assert.equal((await send()).json().code, 'rate_limited')
  assert.equal((await send()).json().code, 'rate_limited')
  const banned = await send()
  assert.equal(banned.json().code, 'key_banned')
  const untilDayEnd = String(DAY_END_S - NOW_S)
  assert.equal(banned.headers['retry-after'], untilDayEnd, 'a retry at the ban end would still meet the spent day')
  assert.equal(banned.headers['x-ratelimit-reset'], String(DAY_END_S))
  assert.equal(banned.headers['x-ratelimit-limit'], '5')
  assert.match(banned.json().message, new RegExp(`retry after ${untilDayEnd} s`))
  assert.equal(noPk(banned.headers.ratelimit), `"minute";r=995;t=${MINUTE_END_S - NOW_S}, "day";r=0;t=${untilDayEnd}, "ban";r=0;t=60`)
})
