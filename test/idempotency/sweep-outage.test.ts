/**
 * The Idempotency-Key sweep through a storage outage, as the server runs it (the domain's job and
 * its warning): a store that does not answer for a while is retried quietly, and one still down
 * after the retries is one warning line naming the outage, without a stack. Three PostgreSQL
 * instances starting together on a loaded machine each logged "idempotency record sweep failed"
 * with the stack of a "Query read timeout" (issue 43).
 */
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { type TestContext, test } from 'node:test'
import { pino } from 'pino'
import { IDEMPOTENCY_SWEEP_RETRIES_MS } from '../../src/idempotency/sweep.js'
import { StorageUnavailableError } from '../../src/shared/outages.js'
import { buildTestApp } from '../helpers/app.js'

/**
 * The app, with its store's sweep failing `failures` times once `fail()` is called (after the sweep
 * at start), then deleting as before; every warning line it logs; the sweep's tries.
 */
async function sweepingApp(
  context: TestContext,
  failures: number,
  error = () => new StorageUnavailableError(new Error('Query read timeout')),
) {
  const lines: Array<Record<string, unknown>> = []
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)))
      done()
    },
  })
  const t = await buildTestApp(context, { logger: pino({ level: 'warn' }, sink) })
  await new Promise((resolve) => setImmediate(resolve)) // the sweep at start has run
  const pets = t.storage.pets
  const deleteRecords = pets.deleteIdempotencyRecords.bind(pets)
  let left = 0
  let tries = 0
  pets.deleteIdempotencyRecords = async (before) => {
    tries++
    if (left > 0) {
      left--
      throw error()
    }
    return deleteRecords(before)
  }
  return {
    sweep: t.domain.jobs.idempotencySweep,
    warnings: () => lines.filter((line) => line.level === 40),
    tries: () => tries,
    fail: () => (left = failures),
  }
}

/** Runs the sweep with the clock's timers mocked, moving them on through every retry's wait. */
async function runThroughRetries(context: TestContext, sweep: { run(): Promise<number> }): Promise<number> {
  context.mock.timers.enable({ apis: ['setTimeout'] })
  const running = sweep.run()
  for (const wait of IDEMPOTENCY_SWEEP_RETRIES_MS) {
    await new Promise((resolve) => setImmediate(resolve)) // the failed try has set its wait
    context.mock.timers.tick(wait)
  }
  const deleted = await running
  context.mock.timers.reset()
  return deleted
}

test('the sweep retries quietly while storage does not answer, and says nothing when it recovers', async (context) => {
  const app = await sweepingApp(context, IDEMPOTENCY_SWEEP_RETRIES_MS.length)
  app.fail()
  assert.equal(await runThroughRetries(context, app.sweep), 0)
  assert.equal(app.tries(), IDEMPOTENCY_SWEEP_RETRIES_MS.length + 1, 'tried again after each wait, the last one answered')
  assert.deepEqual(app.warnings(), [], 'an outage the sweep rode out is not a warning')
})

test('storage still down after the retries: one warning line naming the outage, without a stack', async (context) => {
  const app = await sweepingApp(context, Number.POSITIVE_INFINITY)
  app.fail()
  assert.equal(await runThroughRetries(context, app.sweep), 0)
  assert.equal(app.tries(), IDEMPOTENCY_SWEEP_RETRIES_MS.length + 1)
  const warnings = app.warnings()
  assert.equal(warnings.length, 1, JSON.stringify(warnings))
  const [line] = warnings
  assert.match(String(line!.msg), /^idempotency record sweep failed.*\(storage unavailable: Query read timeout\)$/)
  assert.equal(line!.outage, 'storage unavailable: Query read timeout')
  assert.equal(line!.err, undefined, 'no error object, so no stack')
  assert.doesNotMatch(JSON.stringify(line), /\bat .*:\d+:\d+/, 'no stack frame anywhere in the line')
})

test('an error that is not an outage is warned at once, with its stack (a bug is not retried)', async (context) => {
  const app = await sweepingApp(context, 1, () => new TypeError('no such column: created_at'))
  app.fail()
  assert.equal(await app.sweep.run(), 0)
  assert.equal(app.tries(), 1)
  const warnings = app.warnings()
  assert.equal(warnings.length, 1)
  assert.match(String((warnings[0]!.err as { stack?: string }).stack), /TypeError: no such column/)
})
