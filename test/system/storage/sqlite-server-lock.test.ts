/**
 * One server process per SQLite file: a second server on the same file (any spelling of its path)
 * refuses to start with one line naming the file and the process that holds it, and points at
 * `serve --workers N` with Redis. The kernel releases the lock when the holder dies, also on
 * kill -9. The CLI works beside a running server. Before the lock, a second server started and
 * one Free key got its 60 requests a minute from each.
 */
import assert from 'node:assert/strict'
import { existsSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { REDIS_URL, requireService } from '../../helpers/services.js'
import { isAlive, spawnCli } from '../helpers/cluster.js'
import { bearer, createKeyViaCli, HANG_MS, request, runCli, runServerToExit, startServer, useTempDir, waitFor } from '../helpers/process.js'

/** Status 2, one line on stderr, no banner: the refusal of a second server. */
function assertRefused(result: { code: number | null; stdout: string; stderr: string }, file: string, holderPid: number): string {
  assert.equal(result.code, 2, `exit status 2; stderr: ${result.stderr}`)
  const lines = result.stderr.split('\n').filter((line) => line !== '')
  assert.equal(lines.length, 1, `one line on stderr:\n${result.stderr}`)
  const line = lines[0]!
  assert.ok(line.startsWith('animal-store: cannot start: DATABASE_URL='), line)
  assert.ok(line.includes(`${file} is in use by another server (pid ${holderPid}: `), `names the file and the holder: ${line}`)
  assert.ok(line.includes(`holding ${file}.lock`), `names the lock file: ${line}`)
  assert.match(line, /serve --workers N with REDIS_URL/)
  assert.doesNotMatch(result.stdout, /listening on/, 'no banner')
  return line
}

test('a second server on the same SQLite file refuses to start, naming the file and the holder; the first one keeps serving', async (t) => {
  const dir = await useTempDir(t)
  const first = await startServer(t, { dir })
  const file = first.db

  const second = await runServerToExit({ dir, logFile: join(dir, 'second.log') })
  const line = assertRefused(second, file, first.pid)
  assert.ok(line.includes('node'), `says what the holder runs: ${line}`)

  // Another spelling of the same file (a symlink) is the same lock.
  const link = join(dir, 'link.db')
  symlinkSync(file, link)
  assertRefused(await runServerToExit({ dir, db: link, logFile: join(dir, 'third.log') }), file, first.pid)

  // The refused starts changed nothing for the first server (nor its limiter state file).
  assert.equal((await request(`${first.url}/healthz`)).status, 200)
  const stopped = await first.stop()
  assert.equal(stopped.code, 0)
})

test('the CLI works beside a running server: a key it creates is served by that server', async (t) => {
  const dir = await useTempDir(t)
  const server = await startServer(t, { dir })
  const key = await createKeyViaCli(server.db, { plan: 'free' })
  const listed = await runCli(['keys', 'list', '--json'], { db: server.db })
  assert.equal(listed.code, 0, listed.stderr)
  assert.ok(JSON.parse(listed.stdout).data.some((k: { id: string }) => k.id === key.id))
  const served = await waitFor(async () => (await request(`${server.url}/v1/pets`, { headers: bearer(key.key) })).status === 200, 15_000)
  assert.ok(served, 'the running server accepts the key the CLI created beside it')
})

test('the kernel releases the lock when the holder is killed with -9: the next server starts at once', async (t) => {
  const dir = await useTempDir(t)
  const first = await startServer(t, { dir })
  await first.kill()
  assert.ok(existsSync(`${first.db}.lock`), 'the lock file stays; only the lock is gone')
  const next = await startServer(t, { dir, logFile: join(dir, 'next.log'), readyTimeoutMs: 20_000 })
  assert.equal((await request(`${next.url}/healthz`)).status, 200)
})

test('servers on different SQLite files in one directory do not block each other', async (t) => {
  const dir = await useTempDir(t)
  const one = await startServer(t, { dir, db: join(dir, 'one.db'), logFile: join(dir, 'one.log') })
  const two = await startServer(t, { dir, db: join(dir, 'two.db'), logFile: join(dir, 'two.log') })
  assert.equal((await request(`${one.url}/healthz`)).status, 200)
  assert.equal((await request(`${two.url}/healthz`)).status, 200)
})

test('serve --workers N holds the lock in its primary: a lone server on the file is refused, naming the primary', async (t) => {
  if (!(await requireService(t, 'Redis'))) return
  const dir = await useTempDir(t)
  const db = join(dir, 'animal-store.db')
  const cluster = await spawnCli(t, ['serve', '--workers', '2'], { DATABASE_URL: db, REDIS_URL, LOG_FILE: join(dir, 'cluster.log') })
  const up = await waitFor(async () => (await request(`${cluster.url}/healthz`).catch(() => ({ status: 0 }))).status === 200, HANG_MS)
  assert.ok(up, `the cluster answers /healthz\n${cluster.stderr()}`)
  assertRefused(await runServerToExit({ dir, db, logFile: join(dir, 'lone.log') }), db, cluster.pid)
  assert.ok(isAlive(cluster.pid), 'the cluster still runs')
  assert.equal((await request(`${cluster.url}/healthz`)).status, 200)
})
