/**
 * The pages a reader meets name files that exist: every path in backticks in the README, SECURITY.md
 * and docs/ that starts with a folder of the repository (`src/app.ts`, `test/fuzz/`), or with a
 * folder of src/ and names a file or a folder (`keys/api-key.ts`, `usage/`: architecture.md writes
 * src/'s files so). A file that moves takes its mentions with it (docs/configuration.md's in its
 * generator, scripts/config-docs.mjs). The READMEs of bench/, client/ and deploy/ write their own
 * files from their folder; the tests they name, from the root, are checked too.
 */
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { userDocs } from '../helpers/docs-pages.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const PAGES = userDocs()

const folders = (dir: string) =>
  readdirSync(join(ROOT, dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
/** Folders of the checkout that are not the repository's: built, installed or written at run time. */
const NOT_TRACKED = new Set(['node_modules', 'dist', 'data', 'coverage'])
const ROOT_FOLDERS = new Set(folders('.').filter((name) => !name.startsWith('.') && !NOT_TRACKED.has(name)))
const SRC_FOLDERS = new Set(folders('src'))

/** A file name (with an extension) or a folder (a trailing slash), as the last part of a path. */
const FILE_OR_FOLDER = /(\.[a-z]{1,5}|\/)$/

/**
 * The paths of `text` that name a file or folder of the repository, relative to its root: what
 * starts with a root folder as it is, what starts with a folder of src/ under src/. Patterns
 * (`*`, `<file>`, `…`) and anything else (URLs, API paths, media types) are not file names.
 */
function fileReferences(text: string): string[] {
  const paths: string[] = []
  for (const [, token] of text.matchAll(/`([^`\s]+)`/g)) {
    const path = token!.replace(/#.*$/, '').replace(/:\d+$/, '')
    if (/[*<>{}$…]|^[a-z+]+:|^\.{0,2}\//.test(path)) continue
    const first = path.split('/')[0]!
    if (!path.includes('/')) continue
    if (ROOT_FOLDERS.has(first)) paths.push(path)
    else if (SRC_FOLDERS.has(first) && FILE_OR_FOLDER.test(path)) paths.push(`src/${path}`)
  }
  return paths
}

test('fileReferences finds paths from the root and from src/, and not URLs, API paths or patterns', () => {
  assert.deepEqual(
    fileReferences(
      'see `src/app.ts`, `test/fuzz/`, `keys/api-key.ts`, `usage/`, `limits/redis/consume.lua#L3`, `docs/api.md`; ' +
        'not `/v1/pets`, `usage/top`, `storage/sqlite`, `https://x.example/src/a.ts`, `application/json`, ' +
        '`docs/images/console-*.png`, `config.ts`, `dist/server.js`, `data/animal-store.db`',
    ),
    ['src/app.ts', 'test/fuzz/', 'src/keys/api-key.ts', 'src/usage/', 'src/limits/redis/consume.lua', 'docs/api.md'],
  )
})

/** Pages that write their own folder's files relative to it: only their test paths are from the root. */
const FOLDER_READMES = ['bench/README.md', 'client/README.md', 'deploy/README.md']

for (const page of FOLDER_READMES) {
  test(`every test file ${page} names exists`, () => {
    const tests = fileReferences(readFileSync(join(ROOT, page), 'utf8')).filter((path) => path.startsWith('test/'))
    assert.ok(tests.length > 0, `${page} names no test: the check would see nothing`)
    assert.deepEqual(
      tests.filter((path) => !existsSync(join(ROOT, path))),
      [],
      `${page} names tests that do not exist`,
    )
  })
}

for (const page of PAGES) {
  test(`every file ${page} names exists`, () => {
    const missing = fileReferences(readFileSync(join(ROOT, page), 'utf8')).filter((path) => !existsSync(join(ROOT, path)))
    assert.deepEqual(missing, [], `${page} names files that do not exist`)
  })
}
