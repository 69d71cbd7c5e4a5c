/**
 * client/README.md's install, done as a user outside the repository would: `npm pack` in client/,
 * `npm install ./animal-store-client-1.0.0.tgz` in a fresh folder, then the example against a real
 * server. The install gets an empty cache and an unreachable registry, so it passes only while the
 * tarball carries everything the client needs at run time.
 */
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { childEnv, createKeyViaCli, ROOT, startServer, useTempDir } from '../helpers/process.js'

const CLIENT = join(ROOT, 'client')
const TSX = import.meta.resolve('tsx')
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc')

/** The environment without what `npm run` passes its children (npm_config_local_prefix would point npm at this repository). */
function cleanEnv(overrides: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = childEnv(overrides)
  for (const name of Object.keys(env)) if (/^npm_/i.test(name)) delete env[name]
  return env
}

const run = (file: string, args: string[], cwd: string, env = cleanEnv()) =>
  promisify(execFile)(file, args, { cwd, env, maxBuffer: 16 * 1024 * 1024 })

test('the packed client installs in a fresh folder without a registry, and its example runs against a real server', {
  timeout: 180_000,
}, async (t) => {
  const dir = await useTempDir(t, 'animal-store-client-install-')
  const app = join(dir, 'app')
  await mkdir(app)
  const { version } = JSON.parse(await readFile(join(CLIENT, 'package.json'), 'utf8')) as { version: string }

  await run('npm', ['pack', '--pack-destination', app], CLIENT) // prepack builds dist/
  const tarball = `animal-store-client-${version}.tgz`
  assert.deepEqual(await readdir(app), [tarball])

  await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'quickstart', private: true, type: 'module' }))
  const offline = ['--offline', '--no-audit', '--no-fund', '--cache', join(dir, 'npm-cache'), '--registry', 'http://127.0.0.1:9/']
  await run('npm', ['install', ...offline, `./${tarball}`], app)
  const installed = join(app, 'node_modules/@animal-store/client')
  const modules = (await readdir(join(app, 'node_modules'))).filter((name) => !name.startsWith('.'))
  assert.deepEqual(modules, ['@animal-store'], 'the client alone, no dependency')
  assert.equal(await readFile(join(installed, 'LICENSE'), 'utf8'), await readFile(join(ROOT, 'LICENSE'), 'utf8'))

  // The example, type-checked against the installed package's declarations (its `types` export)...
  await copyFile(join(CLIENT, 'examples/quickstart.ts'), join(app, 'quickstart.ts'))
  const typeRoots = join(ROOT, 'node_modules/@types')
  const tscArgs = ['--noEmit', '--strict', '--module', 'nodenext', '--target', 'es2022', '--types', 'node', '--typeRoots', typeRoots]
  await run(process.execPath, [TSC, ...tscArgs, 'quickstart.ts'], app)

  // ...and run (its `import` export) against a real server.
  const db = join(dir, 'store.db')
  const { key } = await createKeyViaCli(db, { plan: 'free', name: 'example' })
  const server = await startServer(t, { dir, db })
  const child = spawn(process.execPath, ['--import', TSX, 'quickstart.ts'], {
    cwd: app,
    env: cleanEnv({ ANIMAL_STORE_URL: `${server.url}/v1`, ANIMAL_STORE_KEY: key }),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  t.after(() => child.kill('SIGKILL'))
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s))
  child.stderr.setEncoding('utf8').on('data', (s: string) => (out += s))
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve))
  assert.equal(code, 0, out)
  assert.match(out, /^created Rex with id 1\nfirst page: Rex\n1 available animals in all\norder 1 completed; 0 available, 1 sold\n$/)
})
