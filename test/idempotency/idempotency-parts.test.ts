/** Idempotency-Key records (idempotency/): the header, the in-flight rule, and the sweep of old records. */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { parseIdempotencyKey } from '../../src/idempotency/header.js'
import { InFlight } from '../../src/idempotency/in-flight.js'
import { IDEMPOTENCY_RETENTION_MS, IdempotencySweep } from '../../src/idempotency/sweep.js'
import { fingerprintOf, IdempotentCreates } from '../../src/pets/idempotent-creates.js'
import type { PetRepository } from '../../src/pets/repository.js'
import type { ManualClock } from '../../src/shared/clock.js'
import { ApiError } from '../../src/shared/errors.js'
import { buildTestApp, memoryStorage, TEST_NOW } from '../helpers/app.js'

describe('idempotency parts', () => {
  test('parseIdempotencyKey: quoted and bare forms, escapes', () => {
    assert.equal(parseIdempotencyKey(undefined), undefined)
    assert.equal(parseIdempotencyKey('abc'), 'abc')
    assert.equal(parseIdempotencyKey('"abc"'), 'abc')
    assert.equal(parseIdempotencyKey('"a\\"b\\\\c"'), 'a"b\\c')
    assert.throws(() => parseIdempotencyKey('é'), /Idempotency-Key/)
  })

  test('in flight: a second request of one scope and key is 409 until the first ends; other scopes and keys are not held', async () => {
    const inFlight = new InFlight()
    let release!: () => void
    const first = inFlight.run('scope-a', 'k', () => new Promise<string>((resolve) => (release = () => resolve('first'))))
    await assert.rejects(
      inFlight.run('scope-a', 'k', async () => 'second'),
      (error: unknown) => error instanceof ApiError && error.code === 'idempotency_conflict',
    )
    assert.equal(await inFlight.run('scope-b', 'k', async () => 'other scope'), 'other scope')
    assert.equal(await inFlight.run('scope-a', 'k2', async () => 'other key'), 'other key')
    release()
    assert.equal(await first, 'first')
    assert.equal(await inFlight.run('scope-a', 'k', async () => 'after'), 'after')
    await assert.rejects(
      inFlight.run('scope-a', 'k', async () => {
        throw new Error('failed')
      }),
      /failed/,
    )
    assert.equal(await inFlight.run('scope-a', 'k', async () => 'freed by a failure'), 'freed by a failure')
  })

  test('the sweep deletes the records past 24 hours, and only those', async (context) => {
    const t = await buildTestApp(context)
    const clock = t.clock as ManualClock
    const pets: PetRepository = t.storage.pets
    const creates = new IdempotentCreates(pets, clock)
    const sweep = new IdempotencySweep(pets, clock, (error) => assert.fail(String(error)))
    await creates.create('key-a', 'old', { name: 'Old', categoryId: 1 })
    clock.advance(1000)
    await creates.create('key-a', 'new', { name: 'New', categoryId: 1 })
    clock.advance(IDEMPOTENCY_RETENTION_MS - 1000)
    assert.equal(await sweep.run(), 0, 'exactly 24 h old: kept')
    clock.advance(1)
    assert.equal(await sweep.run(), 1)
    assert.equal((await creates.create('key-a', 'old', { name: 'Old', categoryId: 1 })).replayed, false, 'a swept key is new again')
    assert.equal((await creates.create('key-a', 'new', { name: 'New', categoryId: 1 })).replayed, true)
  })

  test('the app runs the sweep when it starts (app.ts, with the other background jobs)', async (context) => {
    const storage = memoryStorage()
    const pet = { name: 'Rex', categoryId: 1 }
    const claim = (key: string, createdAt: number) => ({ scope: 'key-a', key, fingerprint: fingerprintOf(pet), createdAt })
    await storage.pets.createPetOnce(pet, claim('expired', TEST_NOW - IDEMPOTENCY_RETENTION_MS - 1))
    await storage.pets.createPetOnce(pet, claim('kept', TEST_NOW - IDEMPOTENCY_RETENTION_MS))
    await buildTestApp(context, { storage }) // the app sweeps when it starts
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal((await storage.pets.createPetOnce(pet, claim('expired', TEST_NOW))).outcome, 'created', 'swept at start')
    assert.equal((await storage.pets.createPetOnce(pet, claim('kept', TEST_NOW))).outcome, 'replayed')
  })
})
