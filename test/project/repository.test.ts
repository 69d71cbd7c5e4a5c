/**
 * The repository stands alone and keeps its promises to a newcomer: the README and docs link nothing
 * outside it and every page is reachable from the README, and every dependency supports the oldest
 * Node the README promises (npm's refusal of a newer one, and `npm run dev`, are run for real in
 * test/system/project/npm-scripts.test.ts).
 */
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import semver from 'semver'
import { userDocs } from '../helpers/docs-pages.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8')
const pkg = JSON.parse(read('package.json')) as { engines: { node: string }; scripts: Record<string, string> }
const OLDEST_NODE = semver.minVersion(pkg.engines.node)!.version

/** The pages a reader meets: README.md, SECURITY.md and every page under docs/. */
const PAGES = userDocs()

/** The files a page links to, as paths relative to the repository root (URLs and in-page anchors left out). */
function linkedFiles(doc: string): string[] {
  return [...read(doc).matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z]+:/i.test(target)) // a URL, not a file
    .map((target) => relative(ROOT, resolve(dirname(join(ROOT, doc)), target)))
}

test('the README and docs link only to files inside the repository, and they exist', () => {
  for (const doc of PAGES) {
    const text = read(doc)
    assert.doesNotMatch(text, /shared\/spec|\.\.\/shared/, `${doc} points outside the repository`)
    for (const path of linkedFiles(doc)) {
      assert.ok(!path.startsWith('..'), `${doc} links ${path}, outside the repository`)
      assert.ok(existsSync(join(ROOT, path)), `${doc} links ${path}, which does not exist`)
    }
  }
})

test('every page of docs/ and SECURITY.md can be reached from the README by its links', () => {
  const reached = new Set(['README.md'])
  const toVisit = ['README.md']
  for (let page = toVisit.pop(); page !== undefined; page = toVisit.pop()) {
    for (const path of linkedFiles(page)) {
      if (reached.has(path) || !PAGES.includes(path)) continue
      reached.add(path)
      toVisit.push(path)
    }
  }
  assert.deepEqual(
    PAGES.filter((page) => !reached.has(page)),
    [],
    'pages no link from the README leads to',
  )
})

test(`every locked dependency supports Node ${OLDEST_NODE}, the oldest the README promises`, () => {
  assert.match(read('README.md'), new RegExp(`Node\\.js ≥ ${OLDEST_NODE.replace(/\.0$/, '').replace(/\./g, '\\.')}`))
  const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { engines?: { node?: string } | string[] }> }
  const unsupported = Object.entries(lock.packages)
    .map(([name, p]) => [name, Array.isArray(p.engines) ? undefined : p.engines?.node] as const)
    .filter(([, range]) => range !== undefined && !semver.satisfies(OLDEST_NODE, range))
  assert.deepEqual(unsupported, [], 'these declare a newer Node: pin a version that supports it (package.json overrides)')
})
