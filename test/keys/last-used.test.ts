import assert from 'node:assert/strict'
import { test } from 'node:test'
import { LastUsedRecorder } from '../../src/keys/last-used.js'

test('a batch that fails to write is kept for the next flush, unless a later use replaced it', async () => {
  const written: Array<Map<string, number>> = []
  let fail = true
  const errors: unknown[] = []
  const recorder = new LastUsedRecorder(
    {
      recordLastUsed: async (times) => {
        if (fail) throw new Error('storage down')
        written.push(new Map(times))
      },
    },
    { flushMs: 600_000, onError: (e) => errors.push(e) },
  )
  recorder.touch('key_a', 100)
  recorder.touch('key_b', 200)
  recorder.touch('key_a', 150)
  await recorder.flush()
  assert.equal(errors.length, 1)
  assert.equal(recorder.pendingFor('key_a'), 150, 'still pending after the failure')
  recorder.touch('key_b', 300)
  fail = false
  await recorder.stop()
  assert.deepEqual(written, [
    new Map([
      ['key_a', 150],
      ['key_b', 300],
    ]),
  ])
  assert.equal(recorder.pendingFor('key_a'), undefined)
})

test('a use recorded while a batch is being written is pending for readers and written next time', async () => {
  let release!: () => void
  const gate = new Promise<void>((r) => (release = r))
  const written: Array<Map<string, number>> = []
  const recorder = new LastUsedRecorder(
    {
      recordLastUsed: async (times) => {
        written.push(new Map(times))
        if (written.length === 1) await gate
      },
    },
    { flushMs: 600_000 },
  )
  recorder.touch('key_a', 1)
  const first = recorder.flush()
  await new Promise((r) => setImmediate(r))
  assert.equal(recorder.pendingFor('key_a'), 1, 'in flight still counts as pending')
  recorder.touch('key_b', 2)
  release()
  await first
  await recorder.flush()
  assert.deepEqual(written, [new Map([['key_a', 1]]), new Map([['key_b', 2]])])
})
