/**
 * A full disk under a running server (issue 28, item 6): a SQLite file on a tmpfs of its own,
 * filled up from outside while the server runs. Writes are 503 `service_unavailable` in the Error
 * shape with Retry-After (never a 500), reads go on, /readyz says not ready with the reason
 * `disk_full` and the log says why; once space is freed, readiness's own write goes through, the
 * server is ready again and writes succeed, without a restart. Needs root (mount); skips loudly
 * without it.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { assertError } from '../../helpers/errors.js'
import { missingPrerequisite } from '../../helpers/services.js'
import { bearer, createKeyViaCli, request, startServer, useTempDir, waitFor } from '../helpers/process.js'

const TMPFS_SIZE = '8m'
/** Generous for a busy machine: readiness caches its answer for 1 s. */
const NOTICE_MS = 15_000

const mounted = new Set<string>()
const unmount = (dir: string) => {
  try {
    execFileSync('umount', ['-l', dir], { stdio: 'ignore' })
  } catch {
    // not mounted (any more)
  }
  mounted.delete(dir)
}
process.once('exit', () => {
  for (const dir of mounted) unmount(dir)
})

/** Fills the filesystem of `dir` with one file, until the kernel says no more (ENOSPC). */
async function fill(file: string): Promise<void> {
  const handle = await open(file, 'w')
  const chunk = Buffer.alloc(64 * 1024)
  try {
    for (let size = chunk.length; size >= 512; ) {
      try {
        writeSync(handle.fd, chunk, 0, size)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error
        size /= 2
      }
    }
  } finally {
    await handle.close()
  }
}

test('SQLite on a full disk: 503 on writes, /readyz not ready with the reason, ready again once space is freed', {
  timeout: 120_000,
}, async (t) => {
  if (process.getuid?.() !== 0) {
    missingPrerequisite(t, 'mounting a tmpfs needs root')
    return
  }
  const dir = await useTempDir(t, 'animal-store-full-disk-')
  // Not inside `dir`: that is removed by a hook that may run before this one's unmount.
  const disk = mkdtempSync(join(tmpdir(), 'animal-store-disk-'))
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_SIZE},mode=0700`, 'tmpfs', disk])
  mounted.add(disk)
  t.after(() => {
    unmount(disk)
    rmSync(disk, { recursive: true, force: true })
  })
  const db = join(disk, 'store.db')
  const { key } = await createKeyViaCli(db, { plan: 'enterprise', perMinute: 100_000, perDay: 1_000_000 })
  const server = await startServer(t, { dir, db, env: { LIMITER_STATE_FILE: 'off' } })
  const create = () => request(`${server.url}/v1/pets`, { method: 'POST', headers: bearer(key), body: { name: 'Rex', categoryId: 1 } })
  assert.equal((await create()).status, 201)
  assert.equal((await request(`${server.url}/readyz`)).status, 200)

  const filler = join(disk, 'filler')
  await fill(filler)
  // The WAL may still have room for a commit or two; then every write needs space there is not.
  let refused = await create()
  for (let i = 0; i < 200 && refused.status === 201; i++) refused = await create()
  assertError({ ...refused, headers: Object.fromEntries(refused.headers) }, 503, 'service_unavailable')
  assert.equal(refused.headers.get('retry-after'), '1')
  for (let i = 0; i < 5; i++) assert.equal((await create()).status, 503, 'every write while the disk is full')
  assert.equal((await request(`${server.url}/v1/pets?limit=1`, { headers: bearer(key) })).status, 200, 'reads go on')

  let ready = await request(`${server.url}/readyz`)
  const notReady = async () => {
    ready = await request(`${server.url}/readyz`)
    return ready.status === 503
  }
  assert.ok(await waitFor(notReady, NOTICE_MS), 'readiness notices')
  assert.deepEqual((ready.body as { checks: unknown }).checks, {
    database: { engine: 'sqlite', status: 'down', reason: 'disk_full' },
    rateLimiter: { store: 'memory', status: 'up' },
  })
  const faults = readFileSync(server.logFile, 'utf8')
    .split('\n')
    .filter((line) => line.includes('"storage fault"'))
  assert.ok(faults.length > 0, 'logged')
  assert.equal(JSON.parse(faults[0]!).fault, 'disk_full')
  await waitFor(async () => false, 1_200) // a moment more: still not ready, no write went through
  assert.equal((await request(`${server.url}/readyz`)).status, 503)

  rmSync(filler)
  assert.ok(await waitFor(async () => (await request(`${server.url}/readyz`)).status === 200, NOTICE_MS), 'ready again, no restart')
  assert.equal((await create()).status, 201)
  await server.stop()
})
