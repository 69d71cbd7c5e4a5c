/**
 * The client against the real server process: 20 concurrent loops (20 separate clients, as 20
 * processes would be) share one Free key (60/min) for 2 minutes, each creating animals as fast
 * as the key allows. What must hold:
 *
 * - exactly the quota gets through: in every clock-minute window where a client was refused
 *   (demand exceeded the quota), exactly 60 creates passed, and never more than 60 in any window;
 * - zero key_banned answers (the clients wait for the reset after a 429 instead of hammering);
 * - no request lost: every loop iteration ends as a created animal or, once per loop at the end,
 *   as a rate_limited error surfaced because the next window opens after the run's end; and the
 *   server's own counters agree with what the clients saw;
 * - no animal created twice: the catalogue holds each created name exactly once.
 *
 * It takes a little over 2 minutes by design (issue 11).
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { test } from 'node:test'
import { AnimalStoreClient, ApiError, type AttemptEvent } from '../../../client/src/index.js'
import { createKeyViaCli, startServer, useTempDir } from '../helpers/process.js'

const LOOPS = 20
const RUN_MS = 120_000
/** Time an iteration needs before the end of the run to be started (far above a local answer). */
const MIN_ITERATION_MS = 2_000
const FREE_PER_MINUTE = 60

test('20 loops sharing a Free key for 2 minutes: exactly the quota, no ban, nothing lost or duplicated', {
  timeout: 240_000,
}, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const free = await createKeyViaCli(db, { plan: 'free', name: 'loops' })
  assert.equal(free.perMinute, FREE_PER_MINUTE)
  const auditor = await createKeyViaCli(db, { plan: 'enterprise', name: 'auditor', perMinute: 100_000, perDay: 1_000_000 })
  const server = await startServer(t, { dir, db })
  const baseUrl = `${server.url}/v1`
  const marker = `proof-${randomUUID().slice(0, 8)}`

  const attempts: AttemptEvent[] = []
  const created = new Map<string, number | bigint>() // name -> id
  const surfaced: ApiError[] = []
  const failures: unknown[] = []
  let iterations = 0

  const started = Date.now()
  const end = started + RUN_MS
  const loop = async (i: number) => {
    const client = new AnimalStoreClient({ baseUrl, apiKey: free.key, onAttempt: (e) => attempts.push(e) })
    // An iteration starts only with time for an answer: one started a few ms before the end would
    // time out in the client while its request may still reach the server.
    for (let n = 0; Date.now() < end - MIN_ITERATION_MS; n++) {
      iterations++
      const name = `${marker}-${i}-${n}`
      try {
        const pet = await client.createPet({ name, categoryId: i }, { deadlineMs: Math.max(1, end - Date.now()) })
        assert.equal(pet.name, name)
        created.set(name, pet.id)
      } catch (error) {
        // The only acceptable way out: a 429 whose wait would pass the end of the run; this loop is then done.
        if (error instanceof ApiError && error.code === 'rate_limited' && error.retryAt!.getTime() + 1000 >= end) {
          surfaced.push(error)
          return
        }
        failures.push(error)
      }
    }
  }
  await Promise.all(Array.from({ length: LOOPS }, (_, i) => loop(i)))
  const elapsed = Date.now() - started

  // Per clock-minute window (X-RateLimit-Reset names its end): 201s, and whether anyone was refused.
  const windows = new Map<number, { created: number; refused: number }>()
  const windowOf = (e: AttemptEvent) => {
    const reset = Number(e.headers!.get('x-ratelimit-reset'))
    const w = windows.get(reset) ?? { created: 0, refused: 0 }
    windows.set(reset, w)
    return w
  }
  const codes = new Map<string, number>()
  for (const e of attempts) {
    const label = e.status === 201 ? '201' : `${e.status} ${e.error instanceof ApiError ? e.error.code : e.error?.name}`
    codes.set(label, (codes.get(label) ?? 0) + 1)
    if (e.status === 201) windowOf(e).created++
    else if (e.error instanceof ApiError && e.error.code === 'rate_limited') windowOf(e).refused++
  }
  const byWindow = [...windows].sort(([a], [b]) => a - b)
  process.stdout.write(
    `free-key proof: ${LOOPS} loops over a ${RUN_MS / 1000} s run (done after ${Math.round(elapsed / 1000)} s: no window opens before its end), ${iterations} iterations: ${created.size} created, ` +
      `${surfaced.length} surfaced rate_limited at the end, ${failures.length} failures; attempts ${JSON.stringify(Object.fromEntries(codes))}; ` +
      `per window (end: created/refused) ${byWindow.map(([reset, w]) => `${new Date(reset * 1000).toISOString().slice(11, 19)}: ${w.created}/${w.refused}`).join(', ')}\n`,
  )

  assert.deepEqual(failures.map(String), [], 'no failure other than a surfaced rate_limited')
  assert.equal(iterations, created.size + surfaced.length, 'every iteration is accounted for')
  assert.equal(codes.get('429 key_banned') ?? 0, 0, 'no key_banned answer')
  assert.deepEqual(
    [...codes.keys()].sort(),
    ['201', '429 rate_limited'].filter((c) => codes.has(c)),
    'only 201 and 429 rate_limited answers',
  )

  // Exactly the quota: never more than 60 in a window, exactly 60 wherever demand exceeded it.
  for (const [reset, w] of byWindow) {
    assert.ok(w.created <= FREE_PER_MINUTE, `window ending ${reset}: ${w.created} created`)
    if (w.refused > 0) assert.equal(w.created, FREE_PER_MINUTE, `window ending ${reset} refused requests, so it passed exactly the quota`)
  }
  // 2 minutes span two or three clock minutes; those wholly inside the run were saturated.
  const whole = byWindow.filter(([reset]) => reset * 1000 - 60_000 >= started && reset * 1000 <= end)
  assert.ok(whole.length >= 1)
  for (const [reset, w] of whole) assert.equal(w.created, FREE_PER_MINUTE, `whole window ending ${reset}`)
  assert.equal(
    created.size,
    byWindow.reduce((sum, [, w]) => sum + w.created, 0),
  )

  // The server saw what the clients saw: no answer went missing in between.
  const metrics = await (await fetch(`${server.adminUrl}/metrics`)).text()
  const served = (status: number) =>
    Number(
      new RegExp(`animal_store_http_requests_total\\{method="POST",route="/v1/pets",status="${status}"\\} (\\d+)`).exec(metrics)?.[1] ?? 0,
    )
  assert.equal(served(201), codes.get('201') ?? 0)
  assert.equal(served(429), codes.get('429 rate_limited') ?? 0)

  // No animal twice: walk the catalogue with another key.
  const audit = new AnimalStoreClient({ baseUrl, apiKey: auditor.key })
  const stored = new Map<string, number | bigint>()
  for await (const pet of audit.allPets({ limit: 100 })) {
    if (!pet.name.startsWith(marker)) continue
    assert.ok(!stored.has(pet.name), `${pet.name} stored twice`)
    stored.set(pet.name, pet.id)
  }
  assert.deepEqual(stored, created, 'the catalogue holds exactly the animals the clients were told about')
})
