import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { CheckedPetRepository } from '../../src/pets/checked-pet-repository.js'
import type { IdempotentCreate, ListPetsOptions, PetChanges, PetRepository } from '../../src/pets/repository.js'
import type { NewPet, Pet, PetStatus } from '../../src/pets/schemas.js'

/** A gate: reads and checks that meet it wait until it is opened, after they have read the store. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void
  const wait = new Promise<void>((resolve) => {
    open = resolve
  })
  return { wait, open }
}

/**
 * An in-memory store that tells of its commits when asked, as PostgreSQL does: a mark is the
 * number of commits so far, and petChangesSince answers the lowest id among the pets written by
 * the commits after it. `commit` may write a pet with a lower id than pets already committed
 * (ids are not given in commit order there).
 */
class FakeStore implements PetRepository {
  readonly pets = new Map<number, Pet>()
  /** The pet id each commit wrote, in commit order. */
  readonly commits: number[] = []
  reads = 0
  checks = 0
  failChecks = false
  readGate: Promise<void> | undefined
  checkGate: Promise<void> | undefined

  async createPet(pet: NewPet): Promise<Pet> {
    return this.commit({ id: this.pets.size + 1, ...pet })
  }
  async createPetOnce(): Promise<IdempotentCreate> {
    return { outcome: 'in_flight' }
  }
  async deleteIdempotencyRecords(): Promise<number> {
    return 0
  }
  async listPets({ limit, status, afterId = 0 }: ListPetsOptions): Promise<readonly Pet[]> {
    this.reads++
    const rows = [...this.pets.values()]
      .filter((p) => p.id > afterId && (status === undefined || p.status === status))
      .sort((a, b) => Number(a.id) - Number(b.id))
      .slice(0, limit)
      .map((p) => ({ ...p }))
    await this.readGate
    return rows
  }
  async getPet(id: number): Promise<Pet | undefined> {
    this.reads++
    const found = this.pets.get(id)
    const copy = found && { ...found }
    await this.readGate
    return copy
  }
  async petChangesSince(mark: string | undefined): Promise<PetChanges> {
    this.checks++
    if (this.failChecks) throw new Error('connection terminated')
    const since = mark === undefined ? this.commits.length : Number(mark)
    const written = this.commits.slice(since)
    const answer = { mark: String(this.commits.length), lowestId: written.length === 0 ? undefined : Math.min(...written) }
    await this.checkGate
    return answer
  }
  /** A committed write of a pet: a create, or a change of its status (`id` an existing pet's). */
  commit(pet: Pet): Pet {
    this.pets.set(Number(pet.id), pet)
    this.commits.push(Number(pet.id))
    return pet
  }
  setStatus(id: number, status: PetStatus): void {
    this.commit({ ...this.pets.get(id)!, status })
  }
}

async function storeWith(n: number): Promise<FakeStore> {
  const store = new FakeStore()
  for (let i = 1; i <= n; i++) await store.createPet({ name: `p${i}`, categoryId: i, status: 'available' })
  return store
}

/** A page asked for until it is kept (the first read only marks the cache; the doorkeeper admits the second request's page). */
async function kept(cached: CheckedPetRepository, options: ListPetsOptions): Promise<readonly Pet[]> {
  for (let i = 0; i < 4; i++) {
    const page = await cached.listPets(options)
    if (Object.isFrozen(page)) return page
  }
  assert.fail('the page was never kept')
}

const names = (pets: readonly Pet[]) => pets.map((p) => p.name)

describe('CheckedPetRepository', () => {
  test('a kept page is answered after a check, without reading the store', async () => {
    const store = await storeWith(3)
    const cached = new CheckedPetRepository(store)
    const page = await kept(cached, { limit: 2 })
    const { reads, checks } = store
    assert.equal(await cached.listPets({ limit: 2 }), page)
    assert.equal(store.reads, reads)
    assert.equal(store.checks, checks + 1, 'one check per answer from the cache')
  })

  test('a write above a full page keeps it; one at or below its last id drops it; a tail page goes with any write', async () => {
    const store = await storeWith(4)
    const cached = new CheckedPetRepository(store)
    const full = await kept(cached, { limit: 2 })
    const tail = await kept(cached, { limit: 10, afterId: 2 })
    store.setStatus(3, 'sold')
    assert.equal(await cached.listPets({ limit: 2 }), full, 'pet 3 is above the page')
    assert.notEqual(await cached.listPets({ limit: 10, afterId: 2 }), tail)
    assert.equal((await cached.listPets({ limit: 10, afterId: 2 }))[0]!.status, 'sold')
    store.setStatus(2, 'pending')
    assert.equal((await cached.listPets({ limit: 2 }))[1]!.status, 'pending')
  })

  test('a lower id committed after higher ones drops the full pages above it', async () => {
    const store = new FakeStore()
    store.commit({ id: 2, name: 'p2', categoryId: 2 })
    store.commit({ id: 3, name: 'p3', categoryId: 3 })
    const cached = new CheckedPetRepository(store)
    assert.deepEqual(names(await kept(cached, { limit: 2 })), ['p2', 'p3'])
    store.commit({ id: 1, name: 'p1', categoryId: 1 }) // its id was given first, its commit came last
    assert.deepEqual(names(await cached.listPets({ limit: 2 })), ['p1', 'p2'])
  })

  test('a request does not take the answer of a check that began before it: it waits for the next', async () => {
    const store = await storeWith(3)
    const cached = new CheckedPetRepository(store)
    await kept(cached, { limit: 2 })
    const pause = gate()
    store.checkGate = pause.wait
    const early = cached.listPets({ limit: 2 }) // its check reads the store now, and waits
    await new Promise((resolve) => setImmediate(resolve))
    store.checkGate = undefined
    store.setStatus(1, 'sold') // acknowledged before the next request arrives
    const late = cached.listPets({ limit: 2 })
    pause.open()
    assert.equal((await early)[0]!.status, 'available', 'the early request may have the page as its check found it')
    assert.equal((await late)[0]!.status, 'sold')
  })

  test('requests that wait together share one check', async () => {
    const store = await storeWith(3)
    const cached = new CheckedPetRepository(store)
    await kept(cached, { limit: 2 })
    const checks = store.checks
    const answers = await Promise.all(Array.from({ length: 20 }, () => cached.listPets({ limit: 2 })))
    assert.ok(store.checks - checks <= 2, `${store.checks - checks} checks for 20 requests`)
    assert.ok(answers.every((a) => a === answers[0]))
  })

  test('a read in flight when a check drops what it would hold is not kept', async () => {
    const store = await storeWith(3)
    const cached = new CheckedPetRepository(store)
    await kept(cached, { limit: 1, afterId: 2 }) // a kept page, for the check below
    await cached.listPets({ limit: 2 }) // seen once: the next read of this page would be kept
    const pause = gate()
    store.readGate = pause.wait
    const old = cached.listPets({ limit: 2 }) // reads pet 1 as available, then waits
    store.readGate = undefined
    store.setStatus(1, 'sold')
    await cached.listPets({ limit: 1, afterId: 2 }) // a check: it reports pet 1
    pause.open()
    assert.equal((await old)[0]!.status, 'available')
    assert.ok(!Object.isFrozen(await old), 'not kept')
    assert.equal((await cached.listPets({ limit: 2 }))[0]!.status, 'sold')
  })

  test('pets found by id are kept and dropped with the pages', async () => {
    const store = await storeWith(2)
    const cached = new CheckedPetRepository(store)
    await cached.getPet(1) // marks the cache
    await new Promise((resolve) => setImmediate(resolve))
    const pet = await cached.getPet(1)
    assert.ok(Object.isFrozen(pet))
    assert.equal(await cached.getPet(1), pet)
    assert.equal(await cached.getPet(9), undefined, 'a miss is not kept')
    store.setStatus(1, 'sold')
    assert.equal((await cached.getPet(1))?.status, 'sold')
  })

  test('a failed check drops everything; pages are kept again after one succeeds', async () => {
    const store = await storeWith(3)
    const cached = new CheckedPetRepository(store)
    const page = await kept(cached, { limit: 2 })
    store.failChecks = true
    store.setStatus(1, 'sold')
    assert.equal((await cached.listPets({ limit: 2 }))[0]!.status, 'sold', 'read from the store')
    store.failChecks = false
    const again = await kept(cached, { limit: 2 })
    assert.notEqual(again, page)
    assert.equal(again[0]!.status, 'sold')
  })
})
