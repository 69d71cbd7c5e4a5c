import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createAdminToken } from '../src/admin-tokens/admin-tokens.js'
import { banPolicy } from '../src/limits/index.js'
import { MemoryLimiter } from '../src/limits/memory/memory-limiter.js'
import { buildService } from '../src/service.js'
import { ManualClock } from '../src/shared/clock.js'
import { memoryStorage, TEST_NOW, testConfig } from './helpers/app.js'

/** Makes `target.close()` note `name` in `order` before closing. */
function noteClose(order: string[], name: string, target: { close(): Promise<unknown> }): void {
  const close = target.close.bind(target)
  Object.assign(target, {
    close: async () => {
      order.push(name)
      return close()
    },
  })
}

test('a test service keeps its limiter state in memory only (no state file shared between test files)', () => {
  assert.equal(testConfig().limiterStateFile, undefined)
  assert.equal(testConfig({ LIMITER_STATE_FILE: '/tmp/x.json' }).limiterStateFile, '/tmp/x.json', 'a test can still ask for one')
})

test('the admin app is built once, beside the main app, over the same domain', async () => {
  const config = testConfig()
  const service = await buildService(config, { clock: new ManualClock(TEST_NOW), storage: memoryStorage() })
  try {
    const admin = await service.admin()
    assert.equal(await service.admin(), admin, 'built on first call only')
    assert.notEqual(admin, service.app)
    const { token } = await createAdminToken(service.domain.storage.adminTokens, 'test token')
    const created = await admin.inject({
      method: 'POST',
      url: '/admin/v1/keys',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ plan: 'free', name: 'acme' }),
    })
    assert.equal(created.statusCode, 201, created.body)
    const pets = await service.app.inject({ url: '/v1/pets', headers: { authorization: `Bearer ${created.json().key}` } })
    assert.equal(pets.statusCode, 200, 'a key the admin app creates works on the main app at once')
    assert.equal((await admin.inject({ url: '/v1/pets' })).statusCode, 404, 'the admin app serves no public route')
    assert.equal((await service.app.inject({ url: '/admin/v1/keys' })).statusCode, 404, 'the main app serves no admin route')
  } finally {
    await service.close()
  }
})

test('close() closes both apps, then stops the jobs (their last batches written), then closes the limiter, then storage', async () => {
  const config = testConfig()
  const clock = new ManualClock(TEST_NOW)
  const storage = memoryStorage()
  const limiter = new MemoryLimiter(clock, banPolicy(config))
  const order: string[] = []
  noteClose(order, 'storage', storage)
  noteClose(order, 'limiter', limiter)
  const service = await buildService(config, { clock, storage, limiter })
  assert.equal(service.domain.storage, storage)
  assert.equal(service.domain.limiter, limiter)
  noteClose(order, 'main app', service.app)
  noteClose(order, 'admin app', await service.admin())
  const { daemon } = service.domain.jobs
  const stop = daemon.stop.bind(daemon)
  daemon.stop = async () => {
    order.push('jobs')
    await stop()
  }
  await service.close()
  assert.deepEqual(order.slice(0, 2).sort(), ['admin app', 'main app'])
  assert.deepEqual(order.slice(2), ['jobs', 'limiter', 'storage'])
})
