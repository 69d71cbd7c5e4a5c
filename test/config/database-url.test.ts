/**
 * What DATABASE_URL names, PostgreSQL or a SQLite file, is decided by one function (isPostgresUrl):
 * a copy of its test elsewhere could drift, and a store would open one engine while the limiter's
 * state file or the server lock assumed the other.
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { isPostgresUrl, sqliteFilename } from '../../src/config/config.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

test('postgres:// and postgresql:// name PostgreSQL; anything else is a SQLite file', () => {
  for (const url of ['postgres://u@h/db', 'postgresql://u@h:5432/db']) assert.equal(isPostgresUrl(url), true, url)
  for (const url of ['data/x.db', 'postgres.db', 'postgres:/x', 'sqlite:///srv/x.db', 'POSTGRES://u@h/db']) {
    assert.equal(isPostgresUrl(url), false, url)
  }
  assert.equal(sqliteFilename('sqlite:///srv/x.db'), '/srv/x.db')
  assert.equal(sqliteFilename('sqlite::memory:'), ':memory:')
  assert.equal(sqliteFilename('data/x.db'), 'data/x.db')
})

test('the test of a PostgreSQL URL is written once, in src/config', () => {
  const copies: string[] = []
  for (const folder of ['src', 'tools', 'bench', 'scripts', 'test/helpers']) {
    for (const file of readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })) {
      if (!/\.(ts|mts|mjs|js)$/.test(file)) continue
      const text = readFileSync(join(ROOT, folder, file), 'utf8')
      for (const _ of text.matchAll(/postgres\(ql\)\?:/g)) copies.push(`${folder}/${file}`)
    }
  }
  assert.equal(copies.length, 1, `one isPostgresUrl, not a regex of its own in: ${copies.join(', ')}`)
  assert.match(copies[0] ?? '', /^src\/config\//)
})
