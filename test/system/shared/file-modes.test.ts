/**
 * Files at rest are the service's alone: under the common umask 022, every file the server and the
 * CLI create (the SQLite database and its -wal and -shm, the server's lock file `<db>.lock`, the
 * limiter state file, LOG_FILE) is 0600 and every directory they create 0700.
 */
import assert from 'node:assert/strict'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import { bearer, createKeyViaCli, request, runCli, startServer, useTempDir } from '../helpers/process.js'

const modeOf = (path: string) => `0${(statSync(path).mode & 0o777).toString(8)}`

/** The children inherit this process's umask: the one most systems start with. */
function withUmask022(t: TestContext): void {
  const before = process.umask(0o022)
  t.after(() => process.umask(before))
}

test('the server creates the database, its -wal and -shm, its lock file, the log file and the limiter state file 0600, their directories 0700', async (t) => {
  withUmask022(t)
  const dir = await useTempDir(t)
  const db = join(dir, 'data', 'store', 'animal-store.db')
  const logFile = join(dir, 'logs', 'server.log')
  const stateFile = join(dir, 'limits', 'state.json')
  const server = await startServer(t, { dir, db, logFile, env: { BOOTSTRAP_KEY: 'true', LIMITER_STATE_FILE: stateFile } })
  const key = /as_live_[0-9A-Za-z]{38}/.exec(server.stdout())?.[0]
  assert.ok(key, server.stdout())
  assert.equal((await request(`${server.url}/v1/pets`, { headers: bearer(key) })).status, 200)

  // While it runs, SQLite keeps the -wal and -shm files next to the database.
  const files = [db, `${db}-wal`, `${db}-shm`, `${db}.lock`, logFile]
  const modes = new Map(files.map((f) => [f, modeOf(f)]))
  const stopped = await server.stop('SIGTERM')
  assert.equal(stopped.code, 0, server.stderr())
  files.push(stateFile)
  modes.set(stateFile, modeOf(stateFile))
  const directories = [join(dir, 'data'), join(dir, 'data', 'store'), join(dir, 'logs'), join(dir, 'limits')]
  for (const d of directories) modes.set(d, modeOf(d))
  assert.deepEqual(modes, new Map([...files.map((f) => [f, '0600'] as const), ...directories.map((d) => [d, '0700'] as const)]))
})

test('the CLI creates the database 0600 and its directory 0700', async (t) => {
  withUmask022(t)
  const dir = await useTempDir(t)
  const db = join(dir, 'data', 'animal-store.db')
  await createKeyViaCli(db, { name: 'first' })
  const listed = await runCli(['keys', 'list'], { db })
  assert.equal(listed.code, 0, listed.stderr)
  assert.deepEqual([modeOf(db), modeOf(join(dir, 'data'))], ['0600', '0700'])
})
