/**
 * The app of the tests in this process (test/helpers/app.ts) closes itself: buildTestApp(t) after
 * the test `t` (once, when the test closed it too), buildSuiteApp() after the last test of its
 * describe block. A test cannot leave an app open by forgetting its close.
 */
import assert from 'node:assert/strict'
import { describe, it, test } from 'node:test'
import type { Storage } from '../../src/storage/storage.js'
import { buildSuiteApp, buildTestApp, memoryStorage } from '../helpers/app.js'

/** An in-memory store that counts its closes (the app closes the store it was given). */
function countedStorage(): { storage: Storage; closes: () => number } {
  const storage = memoryStorage()
  const close = storage.close.bind(storage)
  let closes = 0
  storage.close = async () => {
    closes++
    await close()
  }
  return { storage, closes: () => closes }
}

test('buildTestApp(t): the app is closed after the test, once even when the test closed it', async (t) => {
  const open = countedStorage()
  await t.test('a test that leaves its app open', async (inner) => {
    const app = await buildTestApp(inner, { storage: open.storage })
    assert.equal((await app.app.inject({ url: '/healthz' })).statusCode, 200)
    assert.equal(open.closes(), 0, 'open while the test runs')
  })
  assert.equal(open.closes(), 1, 'closed once the test ended')

  const closed = countedStorage()
  await t.test('a test that closes its app itself', async (inner) => {
    const app = await buildTestApp(inner, { storage: closed.storage })
    await app.close()
    assert.equal(closed.closes(), 1)
  })
  assert.equal(closed.closes(), 1, 'not closed again')
})

test('buildSuiteApp(): one app for the tests of a describe block, closed after the last', async () => {
  const counted = countedStorage()
  const seen: unknown[] = []
  await describe('a block', () => {
    const app = buildSuiteApp({ storage: counted.storage })
    it('first', () => {
      seen.push(app.app)
      assert.equal(counted.closes(), 0)
    })
    it('second', () => {
      seen.push(app.app)
      assert.equal(counted.closes(), 0)
    })
  })
  assert.equal(seen.length, 2)
  assert.ok(seen[0] !== undefined && seen[0] === seen[1], 'the same app in both tests')
  assert.equal(counted.closes(), 1, 'closed after the last test')
})
