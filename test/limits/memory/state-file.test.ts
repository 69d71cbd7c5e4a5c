/** The in-memory limiter's state file: what a restart keeps, and what it survives. */
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import type { BanPolicy, LimitDecision } from '../../../src/limits/limiter.js'
import { MemoryLimiter } from '../../../src/limits/memory/memory-limiter.js'
import { LimiterStateFile, STATE_FILE_FORMAT, STATE_FILE_VERSION } from '../../../src/limits/memory/state-file.js'
import { DAY_MS } from '../../../src/limits/policy.js'
import { ManualClock } from '../../../src/shared/clock.js'
import type { Quota } from '../../../src/shared/plans.js'

const MIDDAY = Date.UTC(2026, 10, 21, 12, 0, 30)
const POLICY: BanPolicy = { threshold: 3, baseSeconds: 60, maxSeconds: 3600 }
const QUOTA: Quota = { perMinute: 5, perDay: 100 }

class RecordingLog {
  readonly warns: string[] = []
  readonly infos: Array<{ details: object; message: string }> = []
  warn = (_details: object, message: string) => void this.warns.push(message)
  info = (details: object, message: string) => void this.infos.push({ details, message })
}

async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'animal-store-state-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  return dir
}

/** A limiter on `path` (the state is restored now) with a clock of its own at `at`. */
function limiterOn(t: TestContext, path: string, at = MIDDAY, snapshotEveryMs?: number) {
  const clock = new ManualClock(at)
  const log = new RecordingLog()
  const limiter = new MemoryLimiter(clock, POLICY, { stateFile: new LimiterStateFile(path, log), snapshotEveryMs })
  t.after(() => limiter.close())
  return { clock, log, limiter }
}

function provokeBan(limiter: MemoryLimiter, identity: string): LimitDecision {
  for (let i = 0; i < 100; i++) {
    const d = limiter.consumeSync(identity, QUOTA)
    if (d.banStarted) return d
  }
  throw new Error('no ban after 100 requests')
}

test('windows, bans and ban levels survive a restart (close, then a new limiter on the file)', async (t) => {
  const path = join(await tempDir(t), 'store.db.limits.json')
  const first = limiterOn(t, path)
  for (let i = 0; i < 3; i++) first.limiter.consumeSync('k:spent-three', QUOTA)
  const ban = provokeBan(first.limiter, 'a:192.0.2.7')
  assert.equal(ban.retryAfter, 60)
  await first.limiter.close()
  assert.equal(first.log.warns.length, 0)

  first.clock.advance(10_000) // the restart took 10 s
  const second = limiterOn(t, path, first.clock.now())
  assert.equal(second.limiter.size, 2)
  assert.deepEqual(
    second.log.infos.map((i) => i.details),
    [{ file: path, identities: 2, stale: 0 }],
  )
  const next = second.limiter.consumeSync('k:spent-three', QUOTA)
  assert.equal(next.allowed, true)
  assert.equal(next.minute.remaining, 1, 'the fourth request of the minute')
  assert.equal(next.day.remaining, 96)
  const stillBanned = second.limiter.consumeSync('a:192.0.2.7', QUOTA)
  assert.equal(stillBanned.reason, 'key_banned')
  assert.equal(stillBanned.retryAfter, 50, 'the ban keeps counting down')

  second.clock.advance(50_000)
  assert.equal(second.limiter.consumeSync('a:192.0.2.7', QUOTA).allowed, true)
  assert.equal(provokeBan(second.limiter, 'a:192.0.2.7').retryAfter, 120, 'the ban level escalates the next ban')
})

test('the file is written only when something changed, and holds only identities that still matter', async (t) => {
  const path = join(await tempDir(t), 'limits.json')
  const { clock, limiter } = limiterOn(t, path)
  assert.equal(await limiter.writeState(), false, 'nothing to write yet')
  assert.equal(existsSync(path), false)

  limiter.consumeSync('k:yesterday', QUOTA)
  provokeBan(limiter, 'k:banned')
  assert.equal(await limiter.writeState(), true)
  const written = statSync(path).mtimeMs
  assert.equal(await limiter.writeState(), false, 'unchanged since the last write')
  assert.equal(statSync(path).mtimeMs, written)

  clock.set(Date.UTC(2026, 10, 22, 0, 0, 5)) // the next UTC day: only the ban level still matters
  limiter.consumeSync('k:today', QUOTA)
  assert.equal(await limiter.writeState(), true)
  const document = JSON.parse(readFileSync(path, 'utf8')) as { format: string; version: number; savedAt: number; states: unknown[][] }
  assert.equal(document.format, STATE_FILE_FORMAT)
  assert.equal(document.version, STATE_FILE_VERSION)
  assert.equal(document.savedAt, clock.now())
  assert.deepEqual(document.states.map((s) => s[0]).sort(), ['k:banned', 'k:today'])
  assert.deepEqual(readdirSync(join(path, '..')), ['limits.json'], 'no temporary file is left behind')
})

test('a restart drops what went stale while the service was down', async (t) => {
  const path = join(await tempDir(t), 'limits.json')
  const first = limiterOn(t, path)
  first.limiter.consumeSync('k:plain', QUOTA)
  const ban = provokeBan(first.limiter, 'k:banned')
  await first.limiter.close()

  const nextDay = limiterOn(t, path, Date.UTC(2026, 10, 22, 8))
  assert.equal(nextDay.limiter.size, 1, 'the day window is over; the ban level is not')
  assert.deepEqual(nextDay.log.infos[0]?.details, { file: path, identities: 1, stale: 1 })

  const levelExpired = limiterOn(t, path, MIDDAY + ban.retryAfter * 1000 + DAY_MS)
  assert.equal(levelExpired.limiter.size, 0)
})

test('a corrupt, foreign, other-version or unreadable file: one warning, empty limits, no crash', async (t) => {
  const dir = await tempDir(t)
  const cases: Array<[string, string | undefined, RegExp]> = [
    ['truncated', `{"format":"${STATE_FILE_FORMAT}","version":1,"savedAt":1,"states":[["k:a",1,`, /not valid JSON/],
    ['garbage', '\u0000\u0001binary', /not valid JSON/],
    ['foreign', '{"pets":[]}', /not a limiter state file/],
    ['other version', `{"format":"${STATE_FILE_FORMAT}","version":${STATE_FILE_VERSION + 1},"states":[]}`, /format version 2/],
    [
      'bad entry',
      `{"format":"${STATE_FILE_FORMAT}","version":1,"savedAt":1,"states":[["k:a",1,2,3,4,5,6,7,8],["k:b",1,2,-3,4,5,6,7,8]]}`,
      /entry 1 is malformed/,
    ],
    ['missing field', `{"format":"${STATE_FILE_FORMAT}","version":1,"savedAt":1,"states":[["k:a",1,2,3]]}`, /entry 0 is malformed/],
    ['a directory', undefined, /unreadable/],
  ]
  for (const [name, content, warning] of cases) {
    const path = join(dir, name.replaceAll(' ', '-'))
    if (content === undefined) mkdirSync(path)
    else writeFileSync(path, content)
    const { limiter, log } = limiterOn(t, path)
    assert.equal(limiter.size, 0, name)
    assert.equal(log.warns.length, 1, name)
    assert.match(log.warns[0]!, warning, name)
    assert.equal(limiter.consumeSync('k:a', QUOTA).day.remaining, 99, `${name}: limits work from empty`)
  }
  // The next write replaces a corrupt file with a good one.
  const path = join(dir, 'garbage')
  const { limiter } = limiterOn(t, path)
  limiter.consumeSync('k:a', QUOTA)
  assert.equal(await limiter.writeState(), true)
  assert.equal(limiterOn(t, path).limiter.size, 1)
})

test('a failed write is retried on the next one and logged once per run of failures', async (t) => {
  const dir = await tempDir(t)
  const blocker = join(dir, 'a-file')
  writeFileSync(blocker, '')
  const { limiter, log } = limiterOn(t, join(blocker, 'limits.json')) // a directory that cannot exist
  limiter.consumeSync('k:a', QUOTA)
  assert.equal(await limiter.writeState(), false)
  assert.equal(await limiter.writeState(), false, 'still dirty: tried again')
  assert.equal(log.warns.filter((w) => /cannot write the state file/.test(w)).length, 1)
})

test('the timer writes a changed state on its own, without close()', async (t) => {
  const path = join(await tempDir(t), 'limits.json')
  const { limiter } = limiterOn(t, path, MIDDAY, 100)
  limiter.consumeSync('k:a', QUOTA)
  const deadline = Date.now() + 5000
  while (!existsSync(path) && Date.now() < deadline) await sleep(50)
  assert.equal(existsSync(path), true, 'written within 5 s at a 100 ms interval')
})
