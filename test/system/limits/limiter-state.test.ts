/**
 * The in-memory limiter's state across restarts of the real server: a deploy (SIGTERM) keeps every
 * count and ban; a crash (kill -9) loses at most the last snapshot interval.
 */
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { awayFromBoundary } from '../../helpers/windows.js'
import { bearer, createKeyViaCli, request, type ServerProcess, sleep, startServer, useTempDir } from '../helpers/process.js'

async function get(server: ServerProcess, key: string) {
  const res = await request(`${server.url}/v1/pets`, { headers: bearer(key) })
  const day = /"day";r=(\d+);/.exec(res.headers.get('ratelimit') ?? '')
  return {
    status: res.status,
    code: (res.body as { code?: string }).code,
    remaining: Number(res.headers.get('x-ratelimit-remaining')),
    reset: Number(res.headers.get('x-ratelimit-reset')),
    retryAfter: Number(res.headers.get('retry-after')),
    dayRemaining: day ? Number(day[1]) : undefined,
  }
}

test('SIGTERM and restart: counts continue where they were, and a ban keeps counting down', { timeout: 120_000 }, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const spender = await createKeyViaCli(db, { plan: 'free', name: 'spender' })
  const hammerer = await createKeyViaCli(db, { plan: 'free', name: 'hammerer' })
  // The server starts, is spent, restarts and answers again within the same minute window.
  await awayFromBoundary(30_000)
  const env = { BAN_THRESHOLD: '2', BAN_BASE_SECONDS: '60' }
  const first = await startServer(t, { dir, db, env })

  let last = await get(first, spender.key)
  for (let i = 1; i < 7; i++) last = await get(first, spender.key)
  assert.deepEqual([last.status, last.remaining, last.dayRemaining], [200, 53, 993])

  for (let i = 0; i < 60; i++) assert.equal((await get(first, hammerer.key)).status, 200)
  assert.equal((await get(first, hammerer.key)).code, 'rate_limited')
  const banned = await get(first, hammerer.key)
  assert.equal(banned.code, 'key_banned')
  assert.equal(banned.retryAfter, 60)
  const bannedAt = Date.now()

  const stopped = await first.stop('SIGTERM')
  assert.equal(stopped.code, 0, first.stderr())
  assert.ok(existsSync(`${db}.limits.json`), 'the state file is beside the database')

  const second = await startServer(t, { dir, db, logFile: join(dir, 'second.log'), env })
  const next = await get(second, spender.key)
  assert.equal(next.status, 200)
  assert.equal(next.dayRemaining, 992, 'the day window continues')
  const sameMinute = next.reset === last.reset
  assert.equal(next.remaining, sameMinute ? 52 : 59, `X-RateLimit-Remaining continues (same minute: ${sameMinute})`)

  const stillBanned = await get(second, hammerer.key)
  const elapsed = Math.ceil((Date.now() - bannedAt) / 1000)
  assert.equal(stillBanned.code, 'key_banned', 'the ban survived the restart')
  assert.ok(
    stillBanned.retryAfter <= 60 && stillBanned.retryAfter >= 60 - elapsed - 1,
    `Retry-After ${stillBanned.retryAfter} after ${elapsed} s`,
  )
  assert.match(readFileSync(join(dir, 'second.log'), 'utf8'), /windows and bans restored from the state file/)
  await second.stop('SIGTERM')
})

test('kill -9 after a snapshot interval: the counts survive', { timeout: 60_000 }, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const { key } = await createKeyViaCli(db, { plan: 'free', name: 'crash' })
  await awayFromBoundary(20_000)
  const env = { LIMITER_SNAPSHOT_MS: '300' }
  const first = await startServer(t, { dir, db, env })
  for (let i = 0; i < 10; i++) assert.equal((await get(first, key)).status, 200)
  await sleep(1500) // several snapshot intervals: the last write happened after the last request
  const killed = await first.kill()
  assert.equal(killed.signal, 'SIGKILL')

  const second = await startServer(t, { dir, db, logFile: join(dir, 'second.log'), env })
  const next = await get(second, key)
  assert.equal(next.status, 200)
  assert.equal(next.dayRemaining, 989, 'all 10 requests before the crash still count')
})
