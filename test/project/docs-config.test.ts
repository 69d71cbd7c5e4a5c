/**
 * What the README and docs/ say of the configuration is what the code does: a default they name is
 * the schema's, and a start that fails exits with status 2.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { CONFIG_SCHEMA, type ConfigVariable } from '../../src/config/config.js'
import { userDocs } from '../helpers/docs-pages.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
/** Every user-facing page but the generated reference (test/config/config.test.ts checks that one against the schema). */
const DOCS = userDocs().filter((page) => page !== 'docs/configuration.md')
const read = (doc: string) => readFileSync(`${ROOT}${doc}`, 'utf8')

test('a default the docs name for a variable, in a table row of its own, is the schema’s default', () => {
  let checked = 0
  for (const doc of DOCS) {
    for (const row of read(doc).split('\n')) {
      const name = /^\| `([A-Z_]+)` \|/.exec(row)?.[1]
      if (name === undefined || !(name in CONFIG_SCHEMA.properties)) continue
      const schema = CONFIG_SCHEMA.properties[name as ConfigVariable] as { default?: unknown }
      // "`1000` (default)", "the default `http://…`", "default `8080`"
      for (const match of row.matchAll(/`([^`]+)` \(default\)|\bdefault `([^`]+)`/g)) {
        const claimed = match[1] ?? match[2]
        checked++
        assert.ok(
          schema.default !== undefined && String(schema.default) === claimed,
          `${doc}: ${name}'s default is ${schema.default === undefined ? 'unset' : `\`${schema.default}\``}, not \`${claimed}\`:\n${row}`,
        )
      }
    }
  }
  assert.ok(checked > 0, 'the deployment guide names some defaults')
})

test('the docs say a start that fails exits with status 2', () => {
  let checked = 0
  for (const doc of DOCS) {
    for (const [sentence, status] of read(doc).matchAll(/\bstart[^.]*?\bexits? (?:with status )?(\d)\b/g)) {
      checked++
      assert.equal(status, '2', `${doc}: ${sentence}`)
    }
  }
  // Without sentences to check (reworded past the pattern) the loop above would pass on nothing.
  assert.ok(checked > 0, 'the deployment guide says what status a failed start exits with')
})
