import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { CachedPetRepository } from '../../src/pets/cached-pet-repository.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'

// The page cache is CachedPetRepository's (test/pets/cached-pet-repository.test.ts); these run it on
// the SQLite store, whose catalogueVersion must see commits of this connection and of others.

test('the page cache never serves a stale tail page, also across connections (processes)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'as-cache-'))
  const a = new SqliteStorage({ databaseUrl: join(dir, 'db.sqlite'), durability: 'process' })
  const b = new SqliteStorage({ databaseUrl: join(dir, 'db.sqlite'), durability: 'process' })
  const cached = new CachedPetRepository(a.pets)
  try {
    for (let i = 0; i < 5; i++) await a.pets.createPet({ name: `p${i}`, categoryId: i, status: 'sold' })
    // Twice each: a page is cached from its second request on, and the checks below are about cached pages.
    for (let i = 0; i < 2; i++) {
      assert.equal((await cached.listPets({ limit: 10 })).length, 5)
      assert.equal((await cached.listPets({ limit: 10, status: 'sold' })).length, 5)
    }
    assert.equal(await cached.listPets({ limit: 10 }), await cached.listPets({ limit: 10 }), 'served from the cache')
    // A write through this connection.
    await a.pets.createPet({ name: 'own', categoryId: 1, status: 'sold' })
    assert.equal((await cached.listPets({ limit: 10 })).length, 6)
    assert.equal((await cached.listPets({ limit: 10, status: 'sold' })).length, 6)
    // A write through another connection (as another worker process would).
    await b.pets.createPet({ name: 'other', categoryId: 2, status: 'sold' })
    const seen = await cached.listPets({ limit: 10, status: 'sold' })
    assert.deepEqual(
      seen.map((p) => p.name),
      ['p0', 'p1', 'p2', 'p3', 'p4', 'own', 'other'],
    )
    assert.equal((await cached.listPets({ limit: 10 })).length, 7)
    // Full pages are stable: later pets only ever get larger ids.
    await cached.listPets({ limit: 3 })
    const firstPage = await cached.listPets({ limit: 3 })
    await b.pets.createPet({ name: 'later', categoryId: 3 })
    assert.equal(await cached.listPets({ limit: 3 }), firstPage, 'a full page stays cached across writes')
    assert.equal((await cached.listPets({ limit: 3, afterId: 6 })).length, 2)
  } finally {
    await a.close()
    await b.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a page is cached from its second request on; a scan that asks for each page once caches nothing', async () => {
  const storage = new SqliteStorage({ databaseUrl: ':memory:', durability: 'process' })
  const cached = new CachedPetRepository(storage.pets)
  try {
    await Promise.all(Array.from({ length: 2010 }, (_, i) => storage.pets.createPet({ name: `p${i}`, categoryId: i })))
    const once = await cached.listPets({ limit: 5 })
    const twice = await cached.listPets({ limit: 5 })
    assert.notEqual(twice, once, 'the first request is not cached')
    assert.deepEqual(twice, once)
    assert.equal(await cached.listPets({ limit: 5 }), twice, 'the second request was')
    // A shared page is frozen (the list route keeps answers for frozen pages only).
    assert.deepEqual([Object.isFrozen(once), Object.isFrozen(twice)], [false, true])
    // A scan over more distinct (full) pages than the doorkeeper remembers, round and round: never a cached page.
    const scan = async () => {
      const pages: unknown[] = []
      for (let after = 0; after < 2000; after++) pages.push(await cached.listPets({ limit: 2, afterId: after }))
      return pages
    }
    await scan()
    const second = await scan()
    // Had the second round admitted its pages, the third would get those very arrays back.
    const third = await scan()
    assert.equal(third.filter((page, i) => page === second[i]).length, 0)
    assert.deepEqual(third, second)
  } finally {
    await storage.close()
  }
})
