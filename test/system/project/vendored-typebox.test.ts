/**
 * The built service loads TypeBox as one bundled module (scripts/vendor-typebox.mjs): every
 * `import … from 'typebox'` under dist/ resolves to dist/node_modules/typebox/, which is the
 * installed version's code and exports what the package exports, building the same schemas.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { pathToFileURL } from 'node:url'
import * as installed from 'typebox'
import { ROOT } from '../helpers/process.js'

const VENDORED = join(ROOT, 'dist', 'node_modules', 'typebox')

test('dist/ imports TypeBox from its bundled copy, the installed version, with the same exports and schemas', async () => {
  // Resolved as a module of dist/ resolves it (the nearest node_modules first).
  const resolved = execFileSync(process.execPath, ['--input-type=module', '-e', "process.stdout.write(import.meta.resolve('typebox'))"], {
    cwd: join(ROOT, 'dist', 'api'),
    encoding: 'utf8',
    env: { ...process.env, NODE_V8_COVERAGE: undefined },
  })
  assert.equal(resolved, pathToFileURL(join(VENDORED, 'index.js')).href)
  // and a compiled module does import it by that name (not by a path a rewrite made).
  assert.match(readFileSync(join(ROOT, 'dist', 'shared', 'error-body.js'), 'utf8'), /from 'typebox'/)

  const version = (dir: string) => (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version
  assert.equal(version(VENDORED), version(join(ROOT, 'node_modules', 'typebox')))

  const vendored = (await import(pathToFileURL(join(VENDORED, 'index.js')).href)) as typeof installed
  assert.deepEqual(Object.keys(vendored).sort(), Object.keys(installed).sort())
  const build = (T: typeof installed.Type) =>
    T.Object({ id: T.Integer({ minimum: 1 }), tags: T.Array(T.String({ maxLength: 3 })), kind: T.Union([T.Literal('a'), T.Literal('b')]) })
  assert.deepEqual(JSON.parse(JSON.stringify(build(vendored.Type))), JSON.parse(JSON.stringify(build(installed.Type))))
})
