/** The public document's own words follow the configuration: the ban rule is the configured one (BAN_*). */
import assert from 'node:assert/strict'
import { type TestContext, test } from 'node:test'
import { buildTestApp } from '../helpers/app.js'

async function description(context: TestContext, env: Record<string, string> = {}): Promise<string> {
  const t = await buildTestApp(context, { env })
  const res = await t.app.inject({ url: '/v1/openapi.json' })
  assert.equal(res.statusCode, 200)
  return res.json().info.description
}

test('the document states the default ban rule', async (t) => {
  const text = await description(t)
  assert.match(
    text,
    /as many refused requests in one minute as the per-minute limit, at least 10\) starts a temporary ban: 429 `key_banned`, 60 s, doubling with each further ban within 24 h, up to one hour\./,
  )
})

test('the document states the configured ban rule when BAN_* are changed', async (t) => {
  const text = await description(t, { BAN_THRESHOLD: '5', BAN_BASE_SECONDS: '30', BAN_MAX_SECONDS: '7200' })
  assert.match(
    text,
    /\(5 refused requests in one minute\) starts a temporary ban: 429 `key_banned`, 30 s, doubling with each further ban within 24 h, up to 2 h\./,
  )
  assert.doesNotMatch(text, /60 s|one hour|at least 10/)
})

test('a ban length in minutes is written in minutes', async (t) => {
  const text = await description(t, { BAN_BASE_SECONDS: '120', BAN_MAX_SECONDS: '900' })
  assert.match(text, /`key_banned`, 2 min, doubling with each further ban within 24 h, up to 15 min\./)
})
