/**
 * The CLI loads what its command needs and nothing more: `keys list` on SQLite reads the database,
 * so it must not load the HTTP framework, the schema library, the metrics client or the drivers of
 * engines it does not use (TypeBox alone was a third of a second of every command's start). A loader
 * hook records each package the service's own modules import.
 */
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { pathToFileURL } from 'node:url'
import { runCli, useTempDir } from '../helpers/process.js'

test('keys list on SQLite loads no framework, schema, metrics, Redis or PostgreSQL package', async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const log = join(dir, 'packages.txt')
  writeFileSync(log, '')
  writeFileSync(
    join(dir, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs'
export async function resolve(specifier, context, next) {
  const ours = /\\/(src|dist)\\//.test(context.parentURL ?? '') && !/node_modules/.test(context.parentURL ?? '')
  if (ours && !specifier.startsWith('.') && !specifier.startsWith('node:')) appendFileSync(${JSON.stringify(log)}, specifier + '\\n')
  return next(specifier, context)
}
`,
  )
  const register = join(dir, 'register.mjs')
  writeFileSync(
    register,
    `import { register } from 'node:module'\nregister(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)})\n`,
  )

  const created = await runCli(['keys', 'create', '--plan', 'free', '--name', 'a'], { db })
  assert.equal(created.code, 0, created.stderr)
  const nodeOptions = `${process.env.NODE_OPTIONS ?? ''} --import ${pathToFileURL(register).href}`.trim()
  const listed = await runCli(['keys', 'list'], { db, env: { NODE_OPTIONS: nodeOptions } })
  assert.equal(listed.code, 0, listed.stderr)
  const packages = new Set(readFileSync(log, 'utf8').split('\n').filter(Boolean))
  assert.ok(packages.has('better-sqlite3'), `the hook sees the store's package (saw: ${[...packages].join(', ')})`)
  for (const heavy of ['fastify', 'typebox', 'ajv', 'prom-client', 'ioredis', 'pg']) {
    assert.equal(packages.has(heavy), false, `keys list loaded ${heavy} (saw: ${[...packages].join(', ')})`)
  }
})
