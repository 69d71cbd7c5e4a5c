/**
 * Key names reach operators' terminals (`keys list`): the admin API refuses control characters in
 * them, in its schema (before the key service is asked), with a 400 naming the field.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createAdminToken } from '../../src/admin/admin-tokens.js'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import type { KeyAdministration } from '../../src/keys/administration.js'
import { KeyService } from '../../src/keys/key-service.js'
import { banPolicy } from '../../src/limits/index.js'
import { MemoryLimiter } from '../../src/limits/memory/memory-limiter.js'
import { ManualClock } from '../../src/shared/clock.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import { TEST_NOW } from '../helpers/app.js'

const FORGED_ROW = 'evil\u001b[2J\u001b[H\nkey_AAAAAAAAAAAAAAAA  as_live_AAAA…  free  active  trusted'

test('the admin listener refuses a key name with a C0 or C1 control character: 400 naming name, the service never called', async (t) => {
  const config = loadConfig({ BOOTSTRAP_KEY: 'false' })
  const clock = new ManualClock(TEST_NOW)
  const storage = new SqliteStorage({ databaseUrl: ':memory:', durability: 'process' })
  const limiter = new MemoryLimiter(clock, banPolicy(config))
  const service = new KeyService({ keys: storage.keys, audit: storage.audit, limiter, env: config.env, clock })
  // The real service, with every call it gets written down.
  const calls: string[] = []
  const keyAdmin = new Proxy(service, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      return typeof value === 'function'
        ? (...args: unknown[]) => {
            calls.push(String(name))
            return value.apply(target, args)
          }
        : value
    },
  }) as KeyAdministration
  const app = await buildApp({ config, storage, limiter, clock, keyAdmin, listener: 'admin' })
  t.after(async () => {
    await app.close()
    await limiter.close()
    await storage.close()
  })
  const { token } = await createAdminToken(storage.adminTokens, 'ops')
  const call = (method: 'POST' | 'PATCH', url: string, body: unknown) =>
    app.inject({ method, url, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: body as object })

  const created = await call('POST', '/admin/v1/keys', { plan: 'free', name: 'good' })
  assert.equal(created.statusCode, 201, created.body)
  const { id } = created.json().apiKey
  calls.length = 0

  const refusal = {
    code: 'invalid_request',
    message: 'name must not contain control characters (U+0000–U+001F, U+007F–U+009F)',
    status: 400,
  }
  for (const name of [FORGED_ROW, 'tab\there', 'nul\u0000', 'del\u007f', 'csi\u009b2J', 'trailing newline\n']) {
    const create = await call('POST', '/admin/v1/keys', { plan: 'free', name })
    assert.deepEqual([create.statusCode, create.json()], [400, refusal], JSON.stringify(name))
    const update = await call('PATCH', `/admin/v1/keys/${id}`, { name })
    assert.deepEqual([update.statusCode, update.json()], [400, refusal], JSON.stringify(name))
  }
  assert.deepEqual(calls, [], 'refused by the schema, before the key service')
  // Printable text beyond ASCII is a name like any other.
  const unicode = await call('PATCH', `/admin/v1/keys/${id}`, { name: 'Zoë’s café 🐕' })
  assert.equal(unicode.json().name, 'Zoë’s café 🐕')
})
