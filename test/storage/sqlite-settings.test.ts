import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { openMigrated } from '../../src/storage/sqlite/open-database.js'

test('SQLite files open in WAL mode, with the durability’s synchronous setting and a page cache of 4 MB (not the build’s 16)', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-settings-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  for (const [durability, synchronous] of [
    ['process', 1],
    ['power', 2],
  ] as const) {
    const db = openMigrated(join(dir, `${durability}.db`), durability)
    try {
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal')
      assert.equal(db.pragma('synchronous', { simple: true }), synchronous, 'NORMAL (1) or FULL (2)')
      // Negative: KiB rather than pages. What the process keeps of the file beyond it is the OS's page cache.
      assert.equal(db.pragma('cache_size', { simple: true }), -4096)
    } finally {
      db.close()
    }
  }
})
