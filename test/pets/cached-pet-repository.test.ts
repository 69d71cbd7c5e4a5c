import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { CachedPetRepository } from '../../src/pets/cached-pet-repository.js'
import type { IdempotentCreate, ListPetsOptions, PetRepository } from '../../src/pets/repository.js'
import type { NewPet, Pet, PetStatus } from '../../src/pets/schemas.js'

/**
 * An in-memory store that counts its reads. With `commitOrder`, it offers catalogueVersion (ids in
 * commit order) and changeVersion (changes of existing pets), as SQLite does; `setStatus` changes a
 * pet as an order does.
 */
class FakeStore implements PetRepository {
  readonly pets: Pet[] = []
  reads = 0
  version = 0
  changes = 0
  /** While set, reads wait for it: a read in flight. */
  gate: Promise<void> | undefined
  catalogueVersion?: () => number
  changeVersion?: () => number

  constructor(commitOrder: boolean) {
    if (commitOrder) {
      this.catalogueVersion = () => this.version
      this.changeVersion = () => this.changes
    }
  }

  async createPet(pet: NewPet): Promise<Pet> {
    const created = { id: this.pets.length + 1, ...pet }
    this.pets.push(created)
    this.version++
    return created
  }
  async createPetOnce(): Promise<IdempotentCreate> {
    return { outcome: 'in_flight' }
  }
  async deleteIdempotencyRecords(): Promise<number> {
    return 0
  }
  async listPets({ limit, status, afterId = 0 }: ListPetsOptions): Promise<readonly Pet[]> {
    this.reads++
    const rows = this.pets.filter((p) => p.id > afterId && (status === undefined || p.status === status)).map((p) => ({ ...p }))
    await this.gate
    return rows.slice(0, limit)
  }
  async getPet(id: number): Promise<Pet | undefined> {
    this.reads++
    const found = this.pets.find((p) => p.id === id)
    const copy = found && { ...found }
    await this.gate
    return copy
  }
  /** A committed change of an existing pet: both versions move. */
  setStatus(id: number, status: PetStatus): void {
    this.pets[id - 1]!.status = status
    this.version++
    this.changes++
  }
}

async function storeWith(n: number, commitOrder = true): Promise<FakeStore> {
  const store = new FakeStore(commitOrder)
  for (let i = 1; i <= n; i++) await store.createPet({ name: `p${i}`, categoryId: i })
  return store
}

/** A page asked for twice: the doorkeeper admits it on the second request. */
async function admitted(cached: CachedPetRepository, options: ListPetsOptions): Promise<readonly Pet[]> {
  await cached.listPets(options)
  return cached.listPets(options)
}

describe('CachedPetRepository', () => {
  test('a found pet is read once, then shared frozen; a miss is read every time', async () => {
    const store = await storeWith(1)
    const cached = new CachedPetRepository(store)
    assert.equal(await cached.getPet(2), undefined)
    assert.equal(await cached.getPet(2), undefined)
    assert.equal(store.reads, 2, 'a miss is not kept: the id may be created later')
    await store.createPet({ name: 'late', categoryId: 2 })
    assert.equal((await cached.getPet(2))?.name, 'late')
    const first = await cached.getPet(1)
    const second = await cached.getPet(1)
    assert.equal(second, first)
    assert.ok(Object.isFrozen(first))
    assert.equal(store.reads, 4)
  })

  test('a full page is kept across inserts (ids come in commit order); a tail page only until the next commit', async () => {
    const store = await storeWith(3)
    const cached = new CachedPetRepository(store)
    const full = await admitted(cached, { limit: 2 })
    const tail = await admitted(cached, { limit: 10 })
    assert.ok(Object.isFrozen(full) && Object.isFrozen(tail))
    const reads = store.reads
    assert.equal(await cached.listPets({ limit: 2 }), full)
    assert.equal(await cached.listPets({ limit: 10 }), tail)
    assert.equal(store.reads, reads, 'both served from the cache')
    await store.createPet({ name: 'p4', categoryId: 4 })
    assert.equal(await cached.listPets({ limit: 2 }), full, 'the full page survives the commit')
    assert.deepEqual(
      (await cached.listPets({ limit: 10 })).map((p) => p.name),
      ['p1', 'p2', 'p3', 'p4'],
    )
  })

  test('a store that cannot tell its commits and changes (PostgreSQL) has every page and pet read', async () => {
    const store = await storeWith(3, false)
    const cached = new CachedPetRepository(store)
    for (let i = 0; i < 3; i++) assert.equal((await cached.listPets({ limit: 2 })).length, 2)
    assert.equal(store.reads, 3)
    assert.equal((await cached.getPet(1))?.name, 'p1')
    store.pets[0]!.status = 'sold' // another instance's change, which this one cannot learn of
    assert.equal((await cached.getPet(1))?.status, 'sold')
    assert.equal(store.reads, 5, 'pets are not kept either')
  })

  test('a tail page read before a commit is not kept under the newer version', async () => {
    const store = await storeWith(2)
    const cached = new CachedPetRepository(store)
    await cached.listPets({ limit: 10 })
    let open!: () => void
    store.gate = new Promise((resolve) => {
      open = resolve
    })
    const old = cached.listPets({ limit: 10 }) // admitted by the doorkeeper, read at the old version
    store.gate = undefined
    await store.createPet({ name: 'p3', categoryId: 3 })
    assert.equal((await cached.listPets({ limit: 10, status: 'sold' })).length, 0) // moves the tail version on
    open()
    assert.equal((await old).length, 2)
    assert.deepEqual(
      (await cached.listPets({ limit: 10 })).map((p) => p.name),
      ['p1', 'p2', 'p3'],
    )
  })

  describe('a change of an existing pet (changeVersion)', () => {
    test('drops every pet and page: the next reads show the change', async () => {
      const store = await storeWith(3)
      const cached = new CachedPetRepository(store)
      await cached.getPet(2)
      const full = await admitted(cached, { limit: 2 })
      const filtered = await admitted(cached, { limit: 2, status: 'sold' })
      assert.equal(await cached.listPets({ limit: 2 }), full)
      assert.equal((await cached.getPet(2))?.status, undefined)
      const reads = store.reads
      store.setStatus(2, 'sold')
      assert.equal((await cached.getPet(2))?.status, 'sold')
      assert.deepEqual(
        (await cached.listPets({ limit: 2 })).map((p) => p.status),
        [undefined, 'sold'],
      )
      assert.notEqual(await cached.listPets({ limit: 2, status: 'sold' }), filtered)
      assert.deepEqual(
        (await cached.listPets({ limit: 2, status: 'sold' })).map((p) => p.id),
        [2],
      )
      assert.equal(store.reads, reads + 4, 'each read again once after the change')
      assert.equal((await cached.getPet(1))?.status, undefined)
      assert.equal((await cached.getPet(1))?.status, undefined)
      assert.equal(store.reads, reads + 5, 'and kept again until the next change')
    })

    test('a change alone (no insert) is seen, even when it is the only commit since', async () => {
      const store = await storeWith(1)
      const cached = new CachedPetRepository(store)
      await cached.getPet(1)
      assert.equal((await cached.getPet(1))?.status, undefined)
      store.setStatus(1, 'pending')
      assert.equal((await cached.getPet(1))?.status, 'pending')
    })

    test('a read in flight when a change commits is not kept', async () => {
      const store = await storeWith(2)
      const cached = new CachedPetRepository(store)
      await cached.listPets({ limit: 2 })
      let open!: () => void
      store.gate = new Promise((resolve) => {
        open = resolve
      })
      const pet = cached.getPet(1)
      const page = cached.listPets({ limit: 2 })
      store.gate = undefined
      store.setStatus(1, 'sold')
      assert.equal((await cached.getPet(2))?.status, undefined) // sees the change: drops what was kept
      open()
      assert.equal((await pet)?.status, undefined, 'read before the change')
      assert.equal((await page)[0]!.status, undefined)
      assert.equal((await cached.getPet(1))?.status, 'sold')
      assert.equal((await cached.listPets({ limit: 2 }))[0]!.status, 'sold')
    })
  })

  test('pages are bounded by the pets they hold', async () => {
    const store = await storeWith(250)
    const cached = new CachedPetRepository(store)
    // 150 full pages of 100 pets (15,000 pets) through a cache of 10,000: the oldest go.
    for (let after = 0; after < 150; after++) await admitted(cached, { limit: 100, afterId: after })
    const reads = store.reads
    await cached.listPets({ limit: 100, afterId: 149 })
    assert.equal(store.reads, reads, 'the newest page is kept')
    await cached.listPets({ limit: 100, afterId: 0 })
    assert.equal(store.reads, reads + 1, 'the oldest was dropped')
  })

  test('empty pages are bounded too: each counts as one pet', async () => {
    const store = await storeWith(1)
    const cached = new CachedPetRepository(store)
    // Past the end of the catalogue every afterId is an empty tail page of its own.
    for (let after = 1; after <= 10_001; after++) await admitted(cached, { limit: 10, afterId: after })
    const reads = store.reads
    await cached.listPets({ limit: 10, afterId: 10_001 })
    assert.equal(store.reads, reads, 'the newest empty page is kept')
    await cached.listPets({ limit: 10, afterId: 1 })
    assert.equal(store.reads, reads + 1, 'the oldest was dropped')
  })
})
