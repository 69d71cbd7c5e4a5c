/**
 * What the repository's npm set-up promises, run for real: `npm install` refuses a dependency that
 * needs a newer Node (the project's .npmrc), and `npm run dev` restarts the server when a source
 * file changes.
 */
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { childEnv, ROOT, useTempDir, waitFor } from '../helpers/process.js'

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

test('an engine mismatch fails npm install rather than warning (the project .npmrc)', async (t) => {
  const dir = await useTempDir(t)
  // A local package (no registry involved) that needs a Node no one has.
  mkdirSync(join(dir, 'needs-future-node'))
  writeFileSync(
    join(dir, 'needs-future-node', 'package.json'),
    JSON.stringify({ name: 'needs-future-node', version: '1.0.0', engines: { node: '>=999' } }),
  )
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }))
  copyFileSync(join(ROOT, '.npmrc'), join(dir, '.npmrc'))
  const result = spawnSync(npm, ['install', '--no-audit', '--no-fund', '--offline', './needs-future-node'], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, npm_config_engine_strict: undefined },
  })
  assert.notEqual(result.status, 0, `npm install must fail:\n${result.stdout}${result.stderr}`)
  assert.match(result.stderr, /EBADENGINE/)
})

test('npm run dev serves from source and restarts when a source file changes', { timeout: 120_000 }, async (t) => {
  const dir = await useTempDir(t)
  const child = spawn(npm, ['run', 'dev'], {
    cwd: ROOT,
    env: childEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: join(dir, 'dev.db'),
      BOOTSTRAP_KEY: 'false',
      LOG_FILE: join(dir, 'dev.log'),
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group: npm, tsx's watcher and the server are stopped together
  })
  t.after(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {
      // already gone
    }
  })
  let out = ''
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s))
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (out += s))
  const banners = () => out.match(/^Animal Store API listening on /gm)?.length ?? 0
  assert.ok(await waitFor(() => banners() >= 1, 60_000), `npm run dev started the server:\n${out}`)
  // A change to a file the server imports (its content kept: only the modification time moves).
  const now = new Date()
  utimesSync(join(ROOT, 'src', 'shared', 'version.ts'), now, now)
  assert.ok(await waitFor(() => banners() >= 2, 60_000), `npm run dev restarted the server after the change:\n${out}`)
})
