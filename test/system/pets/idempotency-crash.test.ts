/**
 * Retried creates after a SIGKILL never duplicate an animal: concurrent creates, each with its own
 * Idempotency-Key, until the server is killed mid-load; then every request, answered or not, is
 * sent again with its key to a restarted server on the same database. Each name must end up as
 * exactly one animal, the ones committed but never answered coming back as replays.
 *
 * The server runs with a preload (fixtures/delay-created-answers.mjs) that holds every 201 for
 * 50 ms after the commit: on SQLite the commit and the answer are otherwise one synchronous step,
 * and a kill would land between them only by rare luck.
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import { requireService } from '../../helpers/services.js'
import { useScratchDatabase, withPg } from '../helpers/cluster.js'
import { bearer, createKeyViaCli, type ServerProcess, startServer, useTempDir } from '../helpers/process.js'

const WORKERS = 16
/** The kill lands at a random moment this long (ms) after the load's first answer, not just after an answer. */
const KILL_AFTER_MS = [200, 700] as const
/** Rounds of load and kill, until one leaves a committed but unanswered create (the case under test). */
const MAX_ROUNDS = 3
const DELAY_ANSWERS = { NODE_OPTIONS: `--import=${fileURLToPath(new URL('./fixtures/delay-created-answers.mjs', import.meta.url))}` }

interface Sent {
  key: string
  body: string
  /** The 201 body, when the answer arrived before the kill. */
  answer?: string
}

async function post(server: ServerProcess, auth: Record<string, string>, sent: Sent) {
  const res = await fetch(`${server.url}/v1/pets`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': sent.key },
    body: sent.body,
    signal: AbortSignal.timeout(10_000),
  })
  return { status: res.status, replayed: res.headers.get('idempotent-replayed') === 'true', text: await res.text() }
}

async function crashAndReplay(t: TestContext, dir: string, db: string, committedNames: () => Promise<string[]>) {
  const { key } = await createKeyViaCli(db, { plan: 'enterprise', name: 'crash', perMinute: 1_000_000, perDay: 10_000_000 })
  const auth = bearer(key)
  const sent = new Map<string, Sent>() // name -> request
  let seq = 0
  let committedUnanswered = 0
  let rounds = 0

  while (rounds < MAX_ROUNDS && committedUnanswered === 0) {
    rounds++
    const server = await startServer(t, { dir, db, env: DELAY_ANSWERS })
    let killed = false
    const [min, max] = KILL_AFTER_MS
    let timer: NodeJS.Timeout | undefined
    // Counted from the first 201, not from the start: on a busy machine a fresh server's first
    // answers can take longer than the whole range, and a kill before any commit proves nothing.
    const armKill = () => {
      timer ??= setTimeout(
        () => {
          server.child.kill('SIGKILL')
          killed = true
        },
        min + Math.random() * (max - min),
      )
    }
    const errors: string[] = []
    const worker = async () => {
      while (!killed) {
        const n = seq++
        const name = `idem-${n}`
        // Every fifth categoryId beyond 2^53: the replayed body must be exact too.
        const categoryId = n % 5 === 0 ? `${2n ** 60n + BigInt(n)}` : String(n)
        const request: Sent = { key: randomUUID(), body: `{"name":"${name}","categoryId":${categoryId}}` }
        sent.set(name, request)
        try {
          const res = await post(server, auth, request)
          if (res.status !== 201) errors.push(`${res.status} ${res.text}`)
          request.answer = res.text
          armKill()
        } catch (error) {
          if (!killed) errors.push(String(error))
          return
        }
      }
    }
    await Promise.all(Array.from({ length: WORKERS }, worker))
    clearTimeout(timer)
    assert.ok(timer !== undefined, `no create was answered before the workers stopped: ${errors.join('; ')}`)
    assert.equal((await server.exited).signal, 'SIGKILL')
    assert.deepEqual(errors, [], 'every create before the kill got 201')
    const committed = new Set(await committedNames())
    committedUnanswered = [...sent].filter(([name, s]) => s.answer === undefined && committed.has(name)).length
  }

  // Replay everything, each with its own key, against a restarted server.
  const server = await startServer(t, { dir, db })
  const before = new Set(await committedNames())
  const unanswered = [...sent].filter(([, s]) => s.answer === undefined)
  let replays = 0
  for (const [name, request] of sent) {
    const res = await post(server, auth, request)
    assert.equal(res.status, 201, `${name}: ${res.text}`)
    // Replayed exactly when the first attempt committed; an answered create replays its answer byte for byte.
    assert.equal(res.replayed, before.has(name), `${name}: replayed ${res.replayed}, committed before ${before.has(name)}`)
    if (request.answer !== undefined) assert.equal(res.text, request.answer, `${name}: the replay is the first answer`)
    if (res.replayed && request.answer === undefined) replays++
  }

  const names = await committedNames()
  const counts = new Map<string, number>()
  for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1)
  const duplicated = [...counts].filter(([, c]) => c > 1)
  assert.deepEqual(duplicated, [], 'no animal was created twice')
  assert.deepEqual([...counts.keys()].sort(), [...sent.keys()].sort(), 'every request sent is exactly one animal')
  process.stdout.write(
    `idempotency crash: ${rounds} kill round(s), ${sent.size} creates, ${unanswered.length} unanswered at the kills, ` +
      `${replays} of those committed and replayed, ${unanswered.length - replays} created by their retry; ${names.length} animals, no duplicates\n`,
  )
  assert.ok(replays > 0, `no kill landed between a commit and its answer in ${rounds} rounds`)
  await server.stop()
}

test('SQLite: creates retried with their Idempotency-Key after a SIGKILL are never duplicated', { timeout: 120_000 }, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  await crashAndReplay(t, dir, db, async () => {
    const sqlite = new Database(db)
    try {
      return (sqlite.prepare('SELECT name FROM pets').all() as Array<{ name: string }>).map((r) => r.name)
    } finally {
      sqlite.close()
    }
  })
})

test('PostgreSQL: creates retried with their Idempotency-Key after a SIGKILL are never duplicated', { timeout: 120_000 }, async (t) => {
  if (!(await requireService(t, 'PostgreSQL'))) return
  const dir = await useTempDir(t)
  const db = await useScratchDatabase(t, 'as_idem_')
  await crashAndReplay(t, dir, db, async () =>
    withPg(db, async (c) => (await c.query<{ name: string }>('SELECT name FROM pets')).rows.map((r) => r.name)),
  )
})
