/**
 * The dispatcher's runs (src/webhooks/dispatcher.ts): batch after batch until the outbox is empty,
 * with the event loop's other work (requests, on SQLite where a batch runs on it) between batches,
 * and a stop that ends a run after its batch.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock } from '../../src/shared/clock.js'
import { DISPATCH_BATCH, WebhookDispatcher } from '../../src/webhooks/dispatcher.js'

/** An outbox of `batches` full batches; each dispatch logs itself and schedules a stand-in request. */
function outbox(batches: number, log: string[], onBatch?: () => void) {
  let left = batches
  return {
    dispatch: async (maxDeliveries: number) => {
      assert.equal(maxDeliveries, DISPATCH_BATCH)
      if (left === 0) {
        log.push('empty')
        return 0
      }
      left--
      log.push('batch')
      setImmediate(() => log.push('request'))
      onBatch?.()
      return 7
    },
  }
}

test('a run takes batch after batch until the outbox is empty, and lets requests run between them', async () => {
  const log: string[] = []
  const dispatched: number[] = []
  const dispatcher = new WebhookDispatcher(outbox(3, log), { clock: new ManualClock(0), onDispatched: () => dispatched.push(log.length) })
  assert.equal(await dispatcher.run(), 21)
  assert.deepEqual(log.slice(0, 6), ['batch', 'request', 'batch', 'request', 'batch', 'request'])
  assert.equal(log[6], 'empty')
  assert.equal(dispatched.length, 1, 'the worker is told once a run')
})

test('a stop ends the run in flight after its batch', async () => {
  const log: string[] = []
  let dispatcher: WebhookDispatcher | undefined
  let stopped: Promise<void> | undefined
  dispatcher = new WebhookDispatcher(
    outbox(100, log, () => {
      if (log.filter((e) => e === 'batch').length === 2) stopped = dispatcher!.stop()
    }),
    { clock: new ManualClock(0) },
  )
  await dispatcher.run()
  await stopped
  assert.equal(log.filter((e) => e === 'batch').length, 2)
})
