import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { test } from 'node:test'
import { pino } from 'pino'
import { buildApp } from '../../src/app.js'
import { ManualClock } from '../../src/clock.js'
import { loadConfig } from '../../src/config.js'
import { createApiKey } from '../../src/keys/key-service.js'
import { banPolicy } from '../../src/limits/index.js'
import { MemoryLimiter } from '../../src/limits/memory/memory-limiter.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import { TEST_NOW } from '../helpers/app.js'

test('no key reaches a log line or an error body, wherever the client puts it', async () => {
  const lines: string[] = []
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk))
      cb()
    },
  })
  const config = loadConfig({ BOOTSTRAP_KEY: 'false' })
  const storage = new SqliteStorage({ databaseUrl: ':memory:', durability: 'process' })
  const clock = new ManualClock(TEST_NOW)
  const limiter = new MemoryLimiter(clock, banPolicy(config))
  const app = await buildApp({ config, storage, limiter, clock, logger: pino({ level: 'info' }, sink) })
  await app.ready()
  try {
    const { key } = await createApiKey(storage.keys, { plan: 'free', name: 'x' }, 'production')
    const auth = { authorization: `Bearer ${key}` }
    const requests = [
      { url: '/v1/pets', headers: auth },
      { url: `/v1/pets?api_key=${key}`, headers: auth },
      { url: `/v1/pets/${key}`, headers: auth },
      { url: `/v1/${key}`, headers: auth },
      { url: '/v1/pets', headers: { authorization: `Bearer ${key}x` } },
      { url: '/v1/pets', headers: { authorization: `Basic ${key}` } },
      { url: '/v1/pets', headers: { 'x-request-id': key, ...auth } },
    ]
    for (const r of requests) {
      const res = await app.inject(r)
      assert.equal(res.body.includes(key), false, `response body for ${r.url}`)
    }
    assert.ok(lines.length >= requests.length, 'one access line per request')
    const log = lines.join('')
    assert.deepEqual(
      lines.filter((l) => l.includes(key)),
      [],
    )
    assert.equal(log.includes(key.slice(12)), false, 'not even the secret part')
    assert.match(log, /"msg":"request"/)
    assert.match(log, /"keyId":"key_/)
  } finally {
    await app.close()
    await limiter.close()
    await storage.close()
  }
})
