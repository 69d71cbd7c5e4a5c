import assert from 'node:assert/strict'
import { test } from 'node:test'
import { StorageUnavailableError } from '../../src/shared/outages.js'
import { PeriodicJob } from '../../src/shared/periodic-job.js'

/** A run that ends when the test says so. */
function gatedWork() {
  let runs = 0
  let release: (n: number) => void = () => {}
  const work = () => {
    runs++
    return new Promise<number>((resolve) => (release = resolve))
  }
  return { work, runs: () => runs, release: (n: number) => release(n) }
}

test('one run at a time: a run asked for while one is in flight joins it', async () => {
  const gate = gatedWork()
  const job = new PeriodicJob(gate.work, { intervalMs: 60_000 })
  const first = job.run()
  const second = job.run()
  assert.equal(gate.runs(), 1)
  gate.release(7)
  assert.deepEqual(await Promise.all([first, second]), [7, 7])
  const third = job.run()
  assert.equal(gate.runs(), 2, 'a new run once the first has ended')
  gate.release(0)
  assert.equal(await third, 0)
})

test('an error goes to onError and the run counts 0; the next run tries again', async () => {
  const errors: unknown[] = []
  let fail = true
  const job = new PeriodicJob(
    async () => {
      if (fail) throw new Error('database down')
      return 3
    },
    { intervalMs: 60_000, onError: (error) => errors.push(error) },
  )
  assert.equal(await job.run(), 0)
  assert.equal(errors.length, 1)
  fail = false
  assert.equal(await job.run(), 3)
})

test('stop waits for the run in flight (nothing touches the store after it closes), and no run after it', async () => {
  const gate = gatedWork()
  const job = new PeriodicJob(gate.work, { intervalMs: 5, runAtStart: true })
  job.start()
  assert.equal(gate.runs(), 1, 'runAtStart: a run at once')
  let stopped = false
  const stopping = job.stop().then(() => (stopped = true))
  await new Promise((resolve) => setTimeout(resolve, 30))
  assert.equal(stopped, false, 'still waiting for the run in flight')
  gate.release(1)
  await stopping
  const runs = gate.runs()
  await new Promise((resolve) => setTimeout(resolve, 30))
  assert.equal(gate.runs(), runs, 'the timer is gone')
})

// An hour's wait: only the stop can end it before the test's timeout.
test('a run that storage did not answer is retried after each wait; stop ends a wait at once and reports the outage', {
  timeout: 30_000,
}, async () => {
  const errors: unknown[] = []
  let tries = 0
  const job = new PeriodicJob(
    async () => {
      tries++
      throw new StorageUnavailableError(new Error('timeout expired'))
    },
    { intervalMs: 60_000, onError: (error) => errors.push(error), outageRetriesMs: [1, 3_600_000] },
  )
  const running = job.run()
  while (tries < 2) await new Promise((resolve) => setTimeout(resolve, 1))
  await job.stop()
  assert.equal(await running, 0)
  assert.equal(tries, 2, 'no try after the stop')
  assert.equal(errors.length, 1, 'the outage, once')
})
