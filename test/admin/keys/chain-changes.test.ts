/**
 * An update of a rotation chain's current key reaches the older keys of the chain still in their
 * grace period: its scopes as its plan and limits, so an old secret never does more than the key
 * that replaced it (and cannot be changed itself: 409). Through app.inject on the admin API, on
 * SQLite and PostgreSQL: this instance applies it at once, to a key it has cached; another instance
 * (or the CLI) at its next read of the key change log. See docs/keys.md, "Rotation" and "Scopes".
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import type { ChangeContext } from '../../../src/changes/audit-log.js'
import { ChangeRecorder } from '../../../src/changes/change-recorder.js'
import { KeyService } from '../../../src/keys/key-service.js'
import { SCOPES } from '../../../src/shared/scopes.js'
import { bearer, buildTestApp } from '../../helpers/app.js'
import { STORE_ENGINES } from '../../helpers/stores.js'
import { buildAdminTestApp } from '../helpers.js'

const CLI: ChangeContext = { actor: { type: 'cli', id: 'tester' } }
const HOUR = 3600

const write = (app: FastifyInstance, key: string) =>
  app.inject({
    method: 'POST',
    url: '/v1/pets',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    payload: { name: 'Rex', categoryId: 1 },
  })

const read = (app: FastifyInstance, key: string) => app.inject({ url: '/v1/pets', headers: bearer(key) })

function assertRefused(res: { statusCode: number; body: string; headers: Record<string, unknown> }, what: string): void {
  assert.equal(res.statusCode, 403, `${what}: ${res.body}`)
  assert.equal(JSON.parse(res.body).code, 'insufficient_scope', what)
  assert.equal(res.headers['www-authenticate'], 'Bearer realm="animal-store", error="insufficient_scope", scope="pets:write"', what)
}

for (const engine of STORE_ENGINES) {
  describe(`an update of a rotated key's successor reaches its chain (${engine.name})`, () => {
    test('narrowed scopes refuse the old key in its grace period a write at once here, widened ones allow it; a plan change reaches it at once', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      const a = await buildAdminTestApp(t, { storage })
      const created = (await a.call('POST', '/admin/v1/keys', { plan: 'pro', name: 'app' })).json()
      const rotated = await a.call('POST', `/admin/v1/keys/${created.apiKey.id}/rotate`, { gracePeriodSeconds: HOUR })
      assert.equal(rotated.statusCode, 201, rotated.body)
      const [old, current] = [created.key as string, rotated.json().key as string]
      const [oldId, currentId] = [created.apiKey.id as string, rotated.json().apiKey.id as string]
      for (const key of [old, current]) assert.equal((await write(a.api, key)).statusCode, 201, 'both write, and are cached here')

      const narrowed = await a.call('PATCH', `/admin/v1/keys/${currentId}`, { scopes: ['pets:read'] })
      assert.equal(narrowed.statusCode, 200, narrowed.body)
      assertRefused(await write(a.api, old), 'the old key, at once')
      assertRefused(await write(a.api, current), 'the current key')
      for (const key of [old, current]) assert.equal((await read(a.api, key)).statusCode, 200, 'a read is still in scope')
      const oldView = (await a.call('GET', `/admin/v1/keys/${oldId}`)).json()
      assert.deepEqual([oldView.scopes, oldView.state, oldView.rotatedTo], [['pets:read'], 'active', currentId])
      assert.equal(
        (await a.call('PATCH', `/admin/v1/keys/${oldId}`, { scopes: [...SCOPES] })).statusCode,
        409,
        'the old key itself takes no change',
      )

      const widened = await a.call('PATCH', `/admin/v1/keys/${currentId}`, { scopes: ['pets:read', 'pets:write'] })
      assert.equal(widened.statusCode, 200, widened.body)
      assert.equal((await write(a.api, old)).statusCode, 201, 'the old key follows a widening too')

      // The plan reached the old key in storage before; now this instance's cache at once as well.
      assert.equal((await write(a.api, old)).headers['x-ratelimit-limit'], '300')
      assert.equal((await a.call('PATCH', `/admin/v1/keys/${currentId}`, { plan: 'business' })).statusCode, 200)
      assert.equal((await write(a.api, old)).headers['x-ratelimit-limit'], '1000', 'the old key, at once')
    })

    test('narrowed by another instance (or the CLI): the old key is refused here at the next read of the change log', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      const here = await buildTestApp(t, { storage })
      // Another instance, or the CLI: its own key service on the same store, without this instance's cache.
      const elsewhere = new KeyService({
        keys: storage.keys,
        recorder: new ChangeRecorder(storage.audit, here.clock),
        limiter: here.limiter,
        env: here.config.env,
        clock: here.clock,
      })
      const first = await elsewhere.createKey({ plan: 'pro', name: 'elsewhere' }, CLI)
      const second = await elsewhere.rotateKey(first.view.id, { graceSeconds: HOUR }, CLI)
      for (const key of [first.key, second.key]) assert.equal((await write(here.app, key)).statusCode, 201, 'cached by its first request')

      const updated = await elsewhere.updateKey(second.view.id, { scopes: ['pets:read', 'orders:read'] }, CLI)
      assert.deepEqual(updated.scopes, ['pets:read', 'orders:read'])
      assert.deepEqual((await elsewhere.getKey(first.view.id)).scopes, ['pets:read', 'orders:read'], 'the old key in storage')
      await here.domain.keyResolver.refresh()
      assertRefused(await write(here.app, first.key), 'the old key, after the change log')
      assertRefused(await write(here.app, second.key), 'the current key, after the change log')
    })
  })
}
