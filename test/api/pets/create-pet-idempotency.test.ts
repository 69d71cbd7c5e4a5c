/** POST /v1/pets with an Idempotency-Key (api/pets/create.ts, pets/idempotent-creates.ts, idempotency/) through app.inject. */
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { StorageUnavailableError } from '../../../src/shared/outages.js'
import { bearer, buildSuiteApp } from '../../helpers/app.js'

function assertError(res: { statusCode: number; body: string }, status: number, code: string, mentions?: RegExp) {
  assert.equal(res.statusCode, status, res.body)
  const body = JSON.parse(res.body)
  assert.deepEqual(body, { code, message: body.message, status })
  if (mentions) assert.match(body.message, mentions)
}

describe('POST /v1/pets with an Idempotency-Key', () => {
  let auth: Record<string, string>
  const post = (payload: unknown, key: string | undefined, headers: Record<string, string> = auth) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/pets',
      headers: { ...headers, 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }) },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    })
  const count = async (name: string) => {
    const res = await t.app.inject({ url: '/v1/pets?limit=100', headers: auth })
    return (res.json() as Array<{ name: string }>).filter((p) => p.name === name).length
  }

  const t = buildSuiteApp()
  before(async () => {
    auth = bearer(await t.key({ plan: 'enterprise', perMinute: 100_000, perDay: 1_000_000 }))
  })

  test('a retry with the same key and body replays the first answer, marked, without a second animal', async () => {
    const first = await post({ name: 'Once', categoryId: 7, status: 'available' }, 'key-once')
    assert.equal(first.statusCode, 201)
    assert.equal(first.headers['idempotent-replayed'], undefined)
    const again = await post({ name: 'Once', categoryId: 7, status: 'available' }, 'key-once')
    assert.equal(again.statusCode, 201)
    assert.equal(again.headers['idempotent-replayed'], 'true')
    assert.equal(again.body, first.body)
    assert.equal(again.headers.location, first.headers.location)
    assert.equal(await count('Once'), 1)
  })

  test('a replay after the animal was ordered is still the first answer (the animal as created); GET shows it now', async () => {
    const first = await post({ name: 'Ordered', categoryId: 3, status: 'available' }, 'key-ordered')
    const order = await t.app.inject({
      method: 'POST',
      url: '/v1/store/orders',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: { petId: first.json().id },
    })
    assert.equal(order.statusCode, 201, order.body)
    const again = await post({ name: 'Ordered', categoryId: 3, status: 'available' }, 'key-ordered')
    assert.equal(again.headers['idempotent-replayed'], 'true')
    assert.equal(again.body, first.body, 'byte for byte the first answer')
    assert.equal((await t.app.inject({ url: first.headers.location as string, headers: auth })).json().status, 'pending')
  })

  test('the body is compared canonically: key order and spacing do not matter; quoted and bare keys are the same key', async () => {
    const first = await post('{"name":"Canon","categoryId":9007199254740993}', '"canon-1"')
    assert.equal(first.statusCode, 201, first.body)
    const again = await post('{ "categoryId" : 9007199254740993 ,\n "name":"Canon" }', 'canon-1')
    assert.equal(again.headers['idempotent-replayed'], 'true')
    assert.equal(again.body, first.body)
    assert.match(again.body, /"categoryId":9007199254740993[,}]/)
    assert.equal(await count('Canon'), 1)
  })

  test('the same key with another body is 422 idempotency_key_reused, and nothing is created', async () => {
    assert.equal((await post({ name: 'First', categoryId: 1 }, 'reused-key')).statusCode, 201)
    for (const other of [
      { name: 'Second', categoryId: 1 },
      { name: 'First', categoryId: 2 },
      { name: 'First', categoryId: 1, status: 'sold' },
    ]) {
      assertError(await post(other, 'reused-key'), 422, 'idempotency_key_reused', /different request body/)
    }
    assert.equal(await count('Second'), 0)
    assert.equal(await count('First'), 1)
  })

  test('keys are scoped per customer: an unrelated API key has keys of its own', async () => {
    const other = bearer(await t.key({ plan: 'enterprise', perMinute: 100_000, perDay: 1_000_000 }))
    const a = await post({ name: 'Scoped', categoryId: 1 }, 'shared-key')
    const b = await post({ name: 'Scoped', categoryId: 1 }, 'shared-key', other)
    assert.equal(b.statusCode, 201)
    assert.equal(b.headers['idempotent-replayed'], undefined)
    assert.notEqual(b.json().id, a.json().id)
  })

  test('a retry sent with the successor of a rotated key replays the first answer: the scope follows the rotation chain', async () => {
    const cli = { actor: { type: 'cli' as const, id: 'tester' } }
    const first = await t.domain.services.keys.createKey(
      { plan: 'enterprise', name: 'rotating', perMinute: 100_000, perDay: 1_000_000 },
      cli,
    )
    const created = await post({ name: 'Rotated', categoryId: 3 }, 'before-rotation', bearer(first.key))
    assert.equal(created.statusCode, 201)
    const rotated = await t.domain.services.keys.rotateKey(first.view.id, { graceSeconds: 3600 }, cli)
    const retry = await post({ name: 'Rotated', categoryId: 3 }, 'before-rotation', bearer(rotated.key))
    assert.equal(retry.statusCode, 201, retry.body)
    assert.equal(retry.headers['idempotent-replayed'], 'true')
    assert.equal(retry.headers.location, created.headers.location)
    assert.equal(retry.body, created.body, 'the same answer')
    assertError(await post({ name: 'Other', categoryId: 3 }, 'before-rotation', bearer(rotated.key)), 422, 'idempotency_key_reused')
    const again = await post({ name: 'Rotated', categoryId: 3 }, 'before-rotation', bearer(first.key))
    assert.equal(again.headers['idempotent-replayed'], 'true', 'the old key, in its grace period, too')
    assert.equal(await count('Rotated'), 1, 'one animal')
  })

  test('without a key, two identical creates are two animals (unchanged)', async () => {
    await post({ name: 'Twice', categoryId: 1 }, undefined)
    await post({ name: 'Twice', categoryId: 1 }, undefined)
    assert.equal(await count('Twice'), 2)
  })

  test('an invalid Idempotency-Key is 400 naming the header, and creates nothing', async () => {
    // 'one, two' is how Node hands over a header sent twice.
    const invalid = ['', ' ', 'a b', 'k'.repeat(256), '"unterminated', '"a"b"', '""', '"a\\b"', 'tab\there', 'one, two']
    for (const key of invalid) {
      assertError(await post({ name: 'Bad key', categoryId: 1 }, key), 400, 'invalid_request', /Idempotency-Key/)
    }
    assert.equal(await count('Bad key'), 0)
    for (const key of ['k'.repeat(255), `"${'k'.repeat(255)}"`, '"with\\"quote\\"and\\\\"', "!#$%&'*+-.^_`|~:/?=@[]{}()<>,;"]) {
      const res = await post({ name: 'Good key', categoryId: 1 }, key)
      assert.equal(res.statusCode, 201, `${key}: ${res.body}`)
    }
  })

  test('a request that fails validation records nothing: the key still works for a valid body', async () => {
    assertError(await post({ name: '', categoryId: 1 }, 'after-400'), 400, 'invalid_request', /name/)
    const res = await post({ name: 'After 400', categoryId: 1 }, 'after-400')
    assert.equal(res.statusCode, 201)
    assert.equal(res.headers['idempotent-replayed'], undefined)
  })

  test('a second request while the first is in flight is 409 idempotency_conflict with Retry-After; after it, a replay', async () => {
    const original = t.storage.pets.createPetOnce.bind(t.storage.pets)
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    t.storage.pets.createPetOnce = async (pet, claim) => {
      await gate
      return original(pet, claim)
    }
    try {
      const first = post({ name: 'Slow', categoryId: 1 }, 'in-flight')
      await new Promise((resolve) => setTimeout(resolve, 20))
      const second = await post({ name: 'Slow', categoryId: 1 }, 'in-flight')
      assertError(second, 409, 'idempotency_conflict', /still being processed/)
      assert.equal(second.headers['retry-after'], '1')
      release()
      assert.equal((await first).statusCode, 201)
    } finally {
      t.storage.pets.createPetOnce = original
    }
    const third = await post({ name: 'Slow', categoryId: 1 }, 'in-flight')
    assert.equal(third.headers['idempotent-replayed'], 'true')
    assert.equal(await count('Slow'), 1)
  })

  test('a store that reports the key in flight elsewhere (another instance) is 409 too', async () => {
    const original = t.storage.pets.createPetOnce
    t.storage.pets.createPetOnce = async () => ({ outcome: 'in_flight' })
    try {
      assertError(await post({ name: 'Elsewhere', categoryId: 1 }, 'elsewhere'), 409, 'idempotency_conflict')
    } finally {
      t.storage.pets.createPetOnce = original
    }
  })

  test('a replay whose animal is not in the store is 500 internal_error, not a crash, and frees the key', async () => {
    const original = t.storage.pets.createPetOnce
    t.storage.pets.createPetOnce = async () => ({ outcome: 'pet_missing', petId: 42 })
    try {
      assertError(await post({ name: 'Vanished', categoryId: 1 }, 'vanished'), 500, 'internal_error')
    } finally {
      t.storage.pets.createPetOnce = original
    }
    const retry = await post({ name: 'Vanished', categoryId: 1 }, 'vanished')
    assert.equal(retry.statusCode, 201)
  })

  test('a storage failure is 503 and frees the key for the retry', async () => {
    const original = t.storage.pets.createPetOnce
    t.storage.pets.createPetOnce = async () => {
      throw new StorageUnavailableError(new Error('down'))
    }
    try {
      assertError(await post({ name: 'Outage', categoryId: 1 }, 'outage'), 503, 'service_unavailable')
    } finally {
      t.storage.pets.createPetOnce = original
    }
    const retry = await post({ name: 'Outage', categoryId: 1 }, 'outage')
    assert.equal(retry.statusCode, 201)
    assert.equal(retry.headers['idempotent-replayed'], undefined)
  })

  test('the OpenAPI document describes the header, the replay marker and the two codes', async () => {
    const doc = (await t.app.inject({ url: '/v1/openapi.json' })).json()
    const op = doc.paths['/pets'].post
    const param = op.parameters.find((p: { name: string }) => p.name === 'Idempotency-Key')
    assert.deepEqual([param.in, param.required], ['header', false])
    assert.match(param.description, /255 visible ASCII/)
    assert.ok(op.responses['201'].headers['Idempotent-Replayed'])
    assert.match(op.responses['409'].description, /idempotency_conflict/)
    assert.match(op.responses['422'].description, /idempotency_key_reused/)
    assert.ok(doc.components.schemas.Error.properties.code.enum.includes('idempotency_conflict'))
  })
})
