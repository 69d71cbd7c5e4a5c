/**
 * Files stay small enough to read at once: no hand-written source file under src/ is over 400
 * lines (a generated one, which says so on its first line and is rebuilt from its table, is not
 * read by people and is left out).
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const MAX_LINES = 400

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sources(path)
    return /\.(ts|mts|js|mjs)$/.test(entry.name) ? [path] : []
  })
}

test(`no hand-written source file under src/ is over ${MAX_LINES} lines`, () => {
  const files = sources(join(ROOT, 'src'))
  assert.ok(files.length > 50, `src/ read (${files.length} files)`)
  const long = files
    .map((path) => ({ path: relative(ROOT, path), text: readFileSync(path, 'utf8') }))
    .filter(({ text }) => !/^\/\/.*\bgenerated\b/i.test(text.split('\n', 1)[0]!))
    .map(({ path, text }) => ({ path, lines: text.split('\n').length - (text.endsWith('\n') ? 1 : 0) }))
    .filter(({ lines }) => lines > MAX_LINES)
  assert.deepEqual(long, [], 'files over the limit: split them by what they do')
})
