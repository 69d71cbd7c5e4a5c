import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { test } from 'node:test'
import { childEnv, createKeyViaCli, ROOT, startServer, useTempDir } from '../helpers/process.js'

/** client/README.md's runnable example, against a real server. */
test('client/examples/quickstart.ts runs against a real server', { timeout: 60_000 }, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const { key } = await createKeyViaCli(db, { plan: 'free', name: 'example' })
  const server = await startServer(t, { dir, db })
  // The package's source through its exports (condition animal-store-source), so no build is needed.
  const child = spawn(
    process.execPath,
    ['--conditions=animal-store-source', '--import', 'tsx', join(ROOT, 'client/examples/quickstart.ts')],
    {
      cwd: ROOT,
      env: childEnv({ ANIMAL_STORE_URL: `${server.url}/v1`, ANIMAL_STORE_KEY: key }),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s))
  child.stderr.setEncoding('utf8').on('data', (s: string) => (out += s))
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve))
  assert.equal(code, 0, out)
  assert.match(out, /^created Rex with id 1\nfirst page: Rex\n1 available animals in all\norder 1 completed; 0 available, 1 sold\n$/)
})
