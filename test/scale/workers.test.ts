/**
 * `animal-store serve --workers N` (node:cluster): N processes share one port, the limits stay
 * exact across them through Redis, N > 1 without REDIS_URL is refused at start, and SIGTERM stops
 * every worker and then the primary.
 */
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { burst, nodeChildPids, ensureMinuteRoom, isAlive, probe, spawnCli, tally, useScratchDatabase, waitFor } from '../helpers/cluster.js'
import { bearer, createKeyViaCli, runCli, sleep, useTempDir } from '../helpers/process.js'
import { REDIS_URL, requireService } from '../helpers/services.js'

interface LogLine {
  pid: number
  msg: string
  url?: string
  status?: number
}

function logLines(file: string): LogLine[] {
  if (!existsSync(file)) return []
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as LogLine]
      } catch {
        return [] // a line being written by another worker right now
      }
    })
}

test('serve --workers 3: one port, the Free limit exact across workers, SIGTERM stops them all', { timeout: 90_000 }, async (t) => {
  if (!(await requireService(t, 'PostgreSQL'))) return
  if (!(await requireService(t, 'Redis'))) return
  const dir = await useTempDir(t, 'animal-store-workers-')
  const db = await useScratchDatabase(t)
  const log = join(dir, 'workers.log')
  const { key } = await createKeyViaCli(db, { plan: 'free', name: 'workers burst' })

  const started = performance.now()
  const primary = await spawnCli(t, ['serve', '--workers', '3'], { DATABASE_URL: db, REDIS_URL, LOG_FILE: log, LOG_LEVEL: 'info' })
  // Ready when three workers have each logged that they listen (one log file, a pid per line).
  const listening = () => new Set(logLines(log).filter((l) => l.msg.startsWith('Server listening')).map((l) => l.pid))
  const ready = await waitFor(() => listening().size === 3 || primary.child.exitCode !== null, 30_000, 100)
  assert.ok(ready && primary.child.exitCode === null, `3 workers listening (saw ${listening().size})\n${primary.stderr()}`)
  const workers = nodeChildPids(primary.pid).sort()
  assert.equal(workers.length, 3, `the primary has 3 worker processes (${workers.join(', ')})`)
  assert.deepEqual([...listening()].sort(), workers, 'the listening processes are the primary’s workers')
  process.stdout.write(`serve --workers 3: 3 workers listening on :${primary.port} in ${(performance.now() - started).toFixed(0)} ms (pids ${workers.join(', ')})\n`)

  const health = await probe(`${primary.url}/readyz`)
  assert.equal(health.status, 200)

  // 200 concurrent requests on the one port, which the primary hands round-robin to the workers.
  await ensureMinuteRoom(15)
  const outcomes = await burst([primary.url], '/v1/pets', 200, bearer(key))
  const counts = tally(outcomes)
  await sleep(300) // access lines are written asynchronously
  const access = logLines(log).filter((l) => l.msg === 'request' && l.url === '/v1/pets')
  const perWorker = workers.map((pid) => access.filter((l) => l.pid === pid).length)
  const allowedPerWorker = workers.map((pid) => access.filter((l) => l.pid === pid && l.status === 200).length)
  process.stdout.write(
    `burst of 200 on one port: ${JSON.stringify(counts)}; handled per worker ${perWorker.join('/')}, let through per worker ${allowedPerWorker.join('/')}\n`,
  )
  assert.equal(counts['200'], 60, 'exactly the Free per-minute limit passes across the workers')
  assert.equal(outcomes.filter((o) => o.status === 429).length, 140)
  assert.equal(counts['429 rate_limited'], 59)
  assert.equal(counts['429 key_banned'], 81)
  assert.equal(access.length, 200, 'every request has one access line')
  assert.ok(perWorker.filter((n) => n > 0).length >= 2, `requests were spread over the workers (${perWorker.join('/')})`)

  // A worker that dies is replaced, and the service keeps answering meanwhile.
  const victim = workers[0]!
  process.kill(victim, 'SIGKILL')
  const replaced = await waitFor(() => {
    const now = nodeChildPids(primary.pid)
    return now.length === 3 && !now.includes(victim)
  }, 20_000, 100)
  assert.ok(replaced, `a killed worker is replaced (children now ${nodeChildPids(primary.pid).join(', ')})`)
  assert.ok(await waitFor(() => listening().size === 4, 20_000, 100), 'the replacement listens')
  assert.equal((await probe(`${primary.url}/healthz`)).status, 200)
  assert.equal((await probe(`${primary.url}/v1/pets`, bearer(key))).code, 'key_banned', 'the ban is in Redis, not in a worker')

  // SIGTERM: workers drain and exit, then the primary exits 0.
  const current = nodeChildPids(primary.pid)
  const termAt = performance.now()
  process.kill(primary.pid, 'SIGTERM')
  const exit = await Promise.race([primary.exited, sleep(20_000).then(() => undefined)])
  const stopMs = performance.now() - termAt
  assert.ok(exit, `the primary exited after SIGTERM (stderr: ${primary.stderr()})`)
  process.stdout.write(`SIGTERM: primary exited with ${exit.code ?? exit.signal} after ${stopMs.toFixed(0)} ms\n`)
  assert.equal(exit.code, 0, `the primary exits 0 after its workers (stderr: ${primary.stderr()})`)
  assert.ok(stopMs < 12_000, `stopped in ${stopMs.toFixed(0)} ms`)
  assert.ok(await waitFor(() => current.every((pid) => !isAlive(pid)), 2_000), `every worker is gone (${current.filter(isAlive).join(', ')})`)
  const shutdowns = logLines(log).filter((l) => /shutting down/.test(l.msg)).map((l) => l.pid)
  assert.deepEqual([...new Set(shutdowns)].sort(), [...current].sort(), 'every worker shut down gracefully')
  assert.equal(primary.stderr().match(/starting a new one/g)?.length, 1, `only the killed worker was replaced, none during the stop:\n${primary.stderr()}`)
})

test('serve --workers 2 without REDIS_URL exits non-zero naming REDIS_URL', { timeout: 30_000 }, async (t) => {
  const dir = await useTempDir(t, 'animal-store-workers-')
  const result = await runCli(['serve', '--workers', '2'], { db: join(dir, 'store.db'), env: { PORT: '0', REDIS_URL: undefined } })
  assert.notEqual(result.code, 0, 'refused')
  assert.equal(result.signal, null, 'it exits by itself rather than serving')
  assert.match(result.stderr, /REDIS_URL/)
  assert.match(result.stderr, /--workers 2/)
  process.stdout.write(`serve --workers 2 without REDIS_URL: exit ${result.code} in ${result.ms.toFixed(0)} ms: ${result.stderr.split('\n')[0]}\n`)
})
