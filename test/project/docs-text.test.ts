/**
 * The user docs (README.md, SECURITY.md, docs/) say what the service does, not how it was made: no
 * issue numbers, commit ids or benchmark bookkeeping ("second run of the day"). Raw detail of that
 * kind belongs in bench/results and the history, not in a page a newcomer reads.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { userDocs } from '../helpers/docs-pages.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const PAGES = userDocs()

/** What internal text looks like, by what it is. */
const INTERNAL: Array<[string, RegExp]> = [
  ['an issue number', /\bissues? *#?\d+|(?<![\w&/])#\d+\b|\bPR *#?\d+/i],
  ['a commit id', /\bcommit *[0-9a-f]{7,40}\b|(?<![\w-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w-])/i],
  ['benchmark bookkeeping', /\b\w+ (?:full )?run of the day\b/i],
]

/** The internal references in `text`, as `what: the text`. */
function internalReferences(text: string): string[] {
  return INTERNAL.flatMap(([what, pattern]) => {
    const global = new RegExp(pattern.source, `${pattern.flags}g`)
    return [...text.matchAll(global)].map((match) => `${what}: ${match[0]}`)
  })
}

test('the patterns find what they are for, and not an id, a UUID or a number', () => {
  assert.deepEqual(internalReferences('Targets of issue 12; see #17; fixed in commit 2e9d61a; second run of the day'), [
    'an issue number: issue 12',
    'an issue number: #17',
    'a commit id: commit 2e9d61a',
    'benchmark bookkeeping: second run of the day',
  ])
  assert.deepEqual(internalReferences('f301e76 gave 0.52'), ['a commit id: f301e76'])
  assert.deepEqual(
    internalReferences(
      'Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324", limit 1000000, key_buUydFCVu9BkR1n2, [x](#errors), &#123;',
    ),
    [],
  )
})

for (const page of PAGES) {
  test(`${page} has no issue number, commit id or benchmark bookkeeping`, () => {
    assert.deepEqual(internalReferences(readFileSync(join(ROOT, page), 'utf8')), [], `${page} speaks of how it was made`)
  })
}
