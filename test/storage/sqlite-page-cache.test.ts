import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'

test('the page cache never serves a stale tail page, also across connections (processes)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'as-cache-'))
  const a = new SqliteStorage({ databaseUrl: join(dir, 'db.sqlite'), durability: 'process' })
  const b = new SqliteStorage({ databaseUrl: join(dir, 'db.sqlite'), durability: 'process' })
  try {
    for (let i = 0; i < 5; i++) await a.pets.createPet({ name: `p${i}`, categoryId: i, status: 'sold' })
    assert.equal((await a.pets.listPets({ limit: 10 })).length, 5)
    assert.equal((await a.pets.listPets({ limit: 10, status: 'sold' })).length, 5)
    // A write through this connection.
    await a.pets.createPet({ name: 'own', categoryId: 1, status: 'sold' })
    assert.equal((await a.pets.listPets({ limit: 10 })).length, 6)
    assert.equal((await a.pets.listPets({ limit: 10, status: 'sold' })).length, 6)
    // A write through another connection (as another worker process would).
    await b.pets.createPet({ name: 'other', categoryId: 2, status: 'sold' })
    const seen = await a.pets.listPets({ limit: 10, status: 'sold' })
    assert.deepEqual(
      seen.map((p) => p.name),
      ['p0', 'p1', 'p2', 'p3', 'p4', 'own', 'other'],
    )
    assert.equal((await a.pets.listPets({ limit: 10 })).length, 7)
    // Full pages are stable: later pets only ever get larger ids.
    const firstPage = await a.pets.listPets({ limit: 3 })
    await b.pets.createPet({ name: 'later', categoryId: 3 })
    assert.deepEqual(await a.pets.listPets({ limit: 3 }), firstPage)
    assert.equal((await a.pets.listPets({ limit: 3, afterId: 6 })).length, 2)
  } finally {
    await a.close()
    await b.close()
    rmSync(dir, { recursive: true, force: true })
  }
})
