/**
 * The secret scanning reports table (migration 017; secret-scanning/repository.ts) on SQLite and
 * PostgreSQL: a report's hash is claimed once, in one statement, also by concurrent claims (two
 * instances); answered, released, taken over when abandoned, and swept after a day.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { REPORT_RETENTION_MS, reportSweep } from '../../src/secret-scanning/reports.js'
import { ManualClock } from '../../src/shared/clock.js'
import { STORE_ENGINES } from '../helpers/stores.js'

const T0 = Date.UTC(2026, 10, 21, 12, 0, 0)
const MINUTE = 60_000
const A = 'a'.repeat(64)
const B = 'b'.repeat(64)

for (const engine of STORE_ENGINES) {
  describe(`secret scanning reports: ${engine.name}`, () => {
    test('a hash is claimed once: then in flight, then answered with its labels; another hash is apart', async (t) => {
      const store = await engine.open(t)
      if (store === undefined) return
      const reports = store.scanReports
      assert.deepEqual(await reports.claimReport(A, T0, T0 - MINUTE), { outcome: 'claimed' })
      assert.deepEqual(await reports.claimReport(A, T0 + 1, T0 + 1 - MINUTE), { outcome: 'in_flight' })
      assert.deepEqual(await reports.claimReport(B, T0 + 1, T0 + 1 - MINUTE), { outcome: 'claimed' })
      await reports.answerReport(A, 'tf')
      assert.deepEqual(await reports.claimReport(A, T0 + 2, T0 + 2 - MINUTE), { outcome: 'answered', labels: 'tf' })
      assert.deepEqual(await reports.claimReport(B, T0 + 2, T0 + 2 - MINUTE), { outcome: 'in_flight' })
    })

    test('a released claim is claimed again; releasing an answered report keeps it', async (t) => {
      const store = await engine.open(t)
      if (store === undefined) return
      const reports = store.scanReports
      await reports.claimReport(A, T0, T0 - MINUTE)
      await reports.releaseReport(A)
      assert.deepEqual(await reports.claimReport(A, T0 + 1, T0 + 1 - MINUTE), { outcome: 'claimed' })
      await reports.answerReport(A, 'f')
      await reports.releaseReport(A)
      assert.deepEqual(await reports.claimReport(A, T0 + 2, T0 + 2 - MINUTE), { outcome: 'answered', labels: 'f' })
    })

    test('a claim never answered is taken over once older than the bound; an answered one never is', async (t) => {
      const store = await engine.open(t)
      if (store === undefined) return
      const reports = store.scanReports
      await reports.claimReport(A, T0, T0 - MINUTE)
      await reports.claimReport(B, T0, T0 - MINUTE)
      await reports.answerReport(B, 't')
      const later = T0 + MINUTE
      // Claimed exactly at the bound: not older than it.
      assert.deepEqual(await reports.claimReport(A, later, later - MINUTE), { outcome: 'in_flight' })
      assert.deepEqual(await reports.claimReport(A, later + 1, later + 1 - MINUTE), { outcome: 'claimed' })
      // Taken over at later + 1: in flight again from there.
      assert.deepEqual(await reports.claimReport(A, later + 2, later + 2 - MINUTE), { outcome: 'in_flight' })
      const muchLater = T0 + 10 * MINUTE
      assert.deepEqual(await reports.claimReport(B, muchLater, muchLater - MINUTE), { outcome: 'answered', labels: 't' })
    })

    test('concurrent claims of one hash (two instances): exactly one is claimed', async (t) => {
      const store = await engine.open(t)
      if (store === undefined) return
      const claims = await Promise.all(Array.from({ length: 20 }, () => store.scanReports.claimReport(A, T0, T0 - MINUTE)))
      assert.equal(claims.filter((c) => c.outcome === 'claimed').length, 1)
      assert.equal(claims.filter((c) => c.outcome === 'in_flight').length, 19)
    })

    test('the sweep deletes the reports claimed more than a day ago; their copies are then new', async (t) => {
      const store = await engine.open(t)
      if (store === undefined) return
      const reports = store.scanReports
      await reports.claimReport(A, T0, T0 - MINUTE)
      await reports.answerReport(A, 't')
      await reports.claimReport(B, T0 + MINUTE, T0)
      await reports.answerReport(B, 'f')
      const clock = new ManualClock(T0 + REPORT_RETENTION_MS)
      const errors: unknown[] = []
      const sweep = reportSweep(reports, clock, (error) => errors.push(error))
      assert.equal(await sweep.run(), 0, 'a report a day old exactly is kept')
      clock.advance(1)
      assert.equal(await sweep.run(), 1)
      assert.deepEqual(errors, [])
      const now = clock.now()
      assert.deepEqual(await reports.claimReport(A, now, now - MINUTE), { outcome: 'claimed' })
      assert.deepEqual(await reports.claimReport(B, now, now - MINUTE), { outcome: 'answered', labels: 'f' })
    })
  })
}
