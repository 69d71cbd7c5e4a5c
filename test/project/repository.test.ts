/**
 * The repository stands alone and keeps its promises to a newcomer: the README links nothing outside
 * it, every dependency supports the oldest Node the README promises, and an engine mismatch stops
 * `npm install` instead of warning.
 */
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import semver from 'semver'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8')
const pkg = JSON.parse(read('package.json')) as { engines: { node: string }; scripts: Record<string, string> }
const OLDEST_NODE = semver.minVersion(pkg.engines.node)!.version

test('the README and docs link only to files inside the repository, and they exist', () => {
  for (const doc of ['README.md', 'docs/architecture.md', 'docs/configuration.md', 'docs/deployment.md', 'docs/limits.md']) {
    if (!existsSync(join(ROOT, doc))) continue
    const text = read(doc)
    assert.doesNotMatch(text, /shared\/spec|\.\.\/shared/, `${doc} points outside the repository`)
    for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/i.test(target!)) continue // a URL, not a file
      const path = resolve(dirname(join(ROOT, doc)), target!)
      assert.ok(path.startsWith(ROOT), `${doc} links ${target}, outside the repository`)
      assert.ok(existsSync(path), `${doc} links ${target}, which does not exist`)
    }
  }
})

test(`every locked dependency supports Node ${OLDEST_NODE}, the oldest the README promises`, () => {
  assert.match(read('README.md'), new RegExp(`Node\\.js ≥ ${OLDEST_NODE.replace(/\.0$/, '').replace(/\./g, '\\.')}`))
  const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { engines?: { node?: string } | string[] }> }
  const unsupported = Object.entries(lock.packages)
    .map(([name, p]) => [name, Array.isArray(p.engines) ? undefined : p.engines?.node] as const)
    .filter(([, range]) => range !== undefined && !semver.satisfies(OLDEST_NODE, range))
  assert.deepEqual(unsupported, [], 'these declare a newer Node: pin a version that supports it (package.json overrides)')
})

test('an engine mismatch fails npm install rather than warning', () => {
  assert.match(read('.npmrc'), /^engine-strict\s*=\s*true$/m)
})

test('npm run dev restarts on change (watch mode)', () => {
  assert.match(pkg.scripts.dev!, /\btsx watch\b/)
})
