/**
 * Key names reach operators' terminals (`keys list`): the admin API refuses control characters in
 * them, in its schema (before the key service is asked), with a 400 naming the field.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createAdminToken } from '../../../src/admin-tokens/admin-tokens.js'
import { buildApp } from '../../../src/app.js'
import { loadConfig } from '../../../src/config/config.js'
import { buildDomain } from '../../../src/domain.js'
import { banPolicy } from '../../../src/limits/index.js'
import { MemoryLimiter } from '../../../src/limits/memory/memory-limiter.js'
import { ManualClock } from '../../../src/shared/clock.js'
import { SqliteStorage } from '../../../src/storage/sqlite/sqlite-storage.js'
import { TEST_NOW } from '../../helpers/app.js'
import { buildAdminTestApp } from '../helpers.js'

const FORGED_ROW = 'evil\u001b[2J\u001b[H\nkey_AAAAAAAAAAAAAAAA  as_live_AAAA…  free  active  trusted'

test('the admin listener refuses a key name with a C0 or C1 control character: 400 naming name, the service never called', async (t) => {
  const config = loadConfig({ BOOTSTRAP_KEY: 'false' })
  const clock = new ManualClock(TEST_NOW)
  const storage = new SqliteStorage({ databaseUrl: ':memory:', durability: 'process' })
  const limiter = new MemoryLimiter(clock, banPolicy(config))
  const domain = await buildDomain(config, { storage, limiter, clock })
  // The domain's key service, with every call it gets written down.
  const calls: string[] = []
  const keys = new Proxy(domain.services.keys, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      return typeof value === 'function'
        ? (...args: unknown[]) => {
            calls.push(String(name))
            return value.apply(target, args)
          }
        : value
    },
  })
  // The admin listener's app alone, over the domain with the recording service.
  const app = await buildApp({ ...domain, services: { ...domain.services, keys } }, { listener: 'admin' })
  t.after(async () => {
    await app.close()
    await domain.close()
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

test('a key name with a text-direction or invisible character is refused: 400 naming name and the character as U+XXXX', async (t) => {
  const a = await buildAdminTestApp(t)
  const created = await a.call('POST', '/admin/v1/keys', { plan: 'free', name: 'good' })
  assert.equal(created.statusCode, 201, created.body)
  const { id } = created.json().apiKey
  const cases: Array<[string, string]> = [
    // Shown as "live" by anything that honours the override.
    ['\u202eevil', 'U+202E'],
    ['\u2066isolate\u2069', 'U+2066'],
    ['zero\u200bwidth', 'U+200B'],
    ['\ufeffbom', 'U+FEFF'],
    ['soft\u00adhyphen', 'U+00AD'],
    ['line\u2028separator', 'U+2028'],
    ['tag\u{e0041}', 'U+E0041'],
    ['mark\u200e', 'U+200E'],
  ]
  for (const [name, character] of cases) {
    const message = `name must not contain ${character} (no text-direction or invisible characters)`
    const create = await a.call('POST', '/admin/v1/keys', { plan: 'free', name })
    assert.deepEqual([create.statusCode, create.json()], [400, { code: 'invalid_request', message, status: 400 }], JSON.stringify(name))
    const update = await a.call('PATCH', `/admin/v1/keys/${id}`, { name })
    assert.deepEqual([update.statusCode, update.json()], [400, { code: 'invalid_request', message, status: 400 }], JSON.stringify(name))
  }
  const keys = await a.storage.keys.listKeys()
  assert.deepEqual(
    keys.map((k) => k.name),
    ['good'],
  )
  // The joiners Persian, the Indic scripts and emoji need are kept, as are the variation selectors.
  for (const name of ['می\u200cخواهم', '👨\u200d👩\u200d👧', '☕\ufe0f']) {
    const update = await a.call('PATCH', `/admin/v1/keys/${id}`, { name })
    assert.equal(update.statusCode, 200, update.body)
    assert.equal(update.json().name, name)
  }
  // The document says so.
  const doc = (await a.call('GET', '/admin/v1/openapi.json')).json()
  assert.match(
    doc.components.schemas.CreateKey.properties.name.description,
    /no text-direction or invisible characters \(U\+00AD, .*U\+202E/,
  )
})
