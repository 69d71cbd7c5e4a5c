/**
 * What a newcomer runs first works as written, in any shell: the README says, where it says to run
 * the service, that a first install may compile the SQLite driver (minutes with nothing printed),
 * and no `npx` command of the client's README stops to ask before downloading a package (in a
 * non-interactive shell, a CI job or a script, `npx tsx …` waited for an answer that never came).
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const read = (page: string) => readFileSync(`${ROOT}${page}`, 'utf8')

/** The text of a page's section, from its `## ` heading to the next one. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`)
  assert.ok(start >= 0, `no section ${heading}`)
  const end = markdown.indexOf('\n## ', start + 1)
  return markdown.slice(start, end < 0 ? undefined : end)
}

/** The `sh` blocks of a page with the paragraph before each, in order. */
function shellBlocks(markdown: string): Array<{ before: string; lines: string[] }> {
  return [...markdown.matchAll(/([^\n]*(?:\n[^\n`]+)*)\n\n```sh[^\n]*\n([\s\S]*?)\n```/g)].map((m) => ({
    before: m[1]!,
    lines: m[2]!.split('\n'),
  }))
}

const devDependencies = Object.keys(JSON.parse(read('package.json')).devDependencies ?? {})

test('the README’s "Run it" says a first install may compile better-sqlite3, and takes minutes then', () => {
  const runIt = section(read('README.md'), 'Run it')
  assert.match(runIt, /better-sqlite3/)
  assert.match(runIt, /compiled?\b/)
  assert.match(runIt, /minutes/)
})

test('every npx command of the client’s README runs without a question: --yes, or its package installed first', () => {
  let commands = 0
  for (const { before, lines } of shellBlocks(read('client/README.md'))) {
    lines.forEach((line, i) => {
      const npx = /\bnpx\s+(?:(--yes|-y)\s+)?([@\w/.-]+)/.exec(line.replace(/#.*$/, ''))
      if (npx === null) return
      commands++
      const [, yes, pkg] = npx
      if (yes !== undefined) return
      const installedHere = lines.slice(0, i).some((earlier) => new RegExp(`\\bnpm (?:install|i)\\b.*\\s${pkg}\\b`).test(earlier))
      const inTheRepository = /repository root/.test(before) && devDependencies.includes(pkg!)
      assert.ok(installedHere || inTheRepository, `\`${line.trim()}\` asks before downloading ${pkg}: install it first, or npx --yes`)
    })
  }
  assert.ok(commands >= 2, 'the README runs the example with npx')
})
