/** The licence: MIT, declared by both packages, and carried by the client's tarball. */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8')

test('the repository is MIT-licensed, and both package.json files say so', () => {
  assert.match(read('LICENSE'), /^MIT License\n\nCopyright \(c\) 2026 Animal Store contributors\n/)
  for (const file of ['package.json', 'client/package.json']) assert.equal(JSON.parse(read(file)).license, 'MIT', file)
})

test("the client's tarball carries the repository's LICENSE", async () => {
  // Without scripts: the file list, not a build. npm_config_* from `npm run` would point npm elsewhere.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)))
  const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: join(ROOT, 'client'),
    env,
  })
  const [{ files }] = JSON.parse(stdout) as [{ files: { path: string }[] }]
  assert.ok(
    files.some((file) => file.path === 'LICENSE'),
    `LICENSE is packed: ${files.map((file) => file.path).join(', ')}`,
  )
  assert.equal(read('client/LICENSE'), read('LICENSE'), 'client/LICENSE is a copy of LICENSE')
})
