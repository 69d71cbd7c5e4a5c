/**
 * KnownSecrets on its own: loaded from a source of packed hashes, kept current by `add`, loaded
 * again once full, and what a lookup rules out (a false positive, a revoked secret) until the
 * change log names it again. Deterministic hashes throughout.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { test } from 'node:test'
import { MIN_CAPACITY } from '../../src/keys/hash-filter.js'
import { KnownSecrets } from '../../src/keys/known-secrets.js'

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')
const hashes = (n: number, label = 'stored') => Array.from({ length: n }, (_, i) => sha256(`${label} ${i}`))

/** A hash the filter may contain though it was never added (found by trying deterministic ones). */
function falsePositive(known: KnownSecrets): string {
  for (let i = 0; ; i++) {
    const hash = sha256(`made up ${i}`)
    if (known.mayExist(hash)) return hash
  }
}

test('before its first load everything may exist; after it, what the store holds and nothing much else', async () => {
  const stored = hashes(1000)
  const known = new KnownSecrets(async () => stored.join(','))
  assert.equal(known.mayExist(sha256('anything')), true, 'not loaded: ask storage')
  await known.load()
  for (const hash of stored) assert.equal(known.mayExist(hash), true)
  const made = hashes(1000, 'made up').filter((h) => known.mayExist(h))
  assert.ok(made.length <= 2, `${made.length} of 1000 made-up hashes may exist`)
  assert.deepEqual(known.stats, { entries: 1000, capacity: MIN_CAPACITY, bytes: (MIN_CAPACITY * 10) / 8 })

  const empty = new KnownSecrets(async () => '')
  await empty.load()
  assert.equal(empty.mayExist(stored[0]!), false, 'an empty store: nothing exists')
})

test('what the change log names exists from then on, also when it arrives while a load runs', async () => {
  let release!: (packed: string) => void
  const known = new KnownSecrets(() => new Promise<string>((resolve) => (release = resolve)))
  const loading = known.load()
  const created = sha256('created during the load')
  known.add(created) // committed after the load's query read the tables
  release(hashes(10).join(','))
  await loading
  assert.equal(known.mayExist(created), true)
  const later = sha256('created later')
  assert.equal(known.mayExist(later), false)
  known.add(later)
  assert.equal(known.mayExist(later), true)
})

test('once full it is loaded again, sized for twice what the store then holds', async () => {
  const stored = hashes(MIN_CAPACITY / 2)
  let loads = 0
  const known = new KnownSecrets(async () => {
    loads++
    return stored.join(',')
  })
  await known.load()
  assert.equal(known.stats?.capacity, MIN_CAPACITY)
  for (let i = 0; known.stats!.entries <= MIN_CAPACITY; i++) {
    const hash = sha256(`new ${i}`)
    stored.push(hash)
    known.add(hash)
  }
  assert.equal(loads, 2, 'a second load started')
  await known.load() // joins the one running
  assert.equal(known.stats?.capacity, 2 * stored.length)
  for (const hash of stored) assert.equal(known.mayExist(hash), true)
})

test('a lookup that finds a false positive or a revoked secret rules it out, until the change log names it', async () => {
  const known = new KnownSecrets(async () => hashes(MIN_CAPACITY / 2).join(','))
  await known.load()
  const fp = falsePositive(known)
  assert.equal(
    await known.lookup(
      fp,
      async () => undefined,
      () => true,
    ),
    undefined,
  )
  assert.equal(known.mayExist(fp), false, 'a false positive costs one lookup')
  known.add(fp) // created since: the change log names it
  assert.equal(known.mayExist(fp), true)

  const revoked = hashes(1)[0]!
  const record = { revoked: true }
  assert.equal(
    await known.lookup(
      revoked,
      async () => record,
      (r) => !r.revoked,
    ),
    record,
  )
  assert.equal(known.mayExist(revoked), false, 'a revoked secret costs one lookup')

  const valid = hashes(2)[1]!
  await known.lookup(
    valid,
    async () => ({ revoked: false }),
    (r) => !r.revoked,
  )
  assert.equal(known.mayExist(valid), true, 'a valid one is not ruled out')
})

test('a lookup that overlaps a change-log entry rules nothing out (the secret may have been created meanwhile)', async () => {
  const known = new KnownSecrets(async () => hashes(MIN_CAPACITY / 2).join(','))
  await known.load()
  const fp = falsePositive(known)
  await known.lookup(
    fp,
    async () => {
      known.add(sha256('another secret created meanwhile'))
      return undefined
    },
    () => true,
  )
  assert.equal(known.mayExist(fp), true)
})
