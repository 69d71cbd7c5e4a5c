/**
 * Usage history agrees with what clients saw: three server processes on one PostgreSQL database and
 * one Redis, a key with a tiny custom limit, and a known mix sent round-robin — allowed requests,
 * then 429 rate_limited, then 429 key_banned (BAN_THRESHOLD) — read back exactly, minute and hour
 * views and the top list, through one instance's admin API once every instance has flushed.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { REDIS_URL, requireService } from '../../helpers/services.js'
import { ensureMinuteRoom, useScratchDatabase } from '../helpers/cluster.js'
import { bearer, freePort, request, runCli, sleep, startServer, useTempDir, waitFor } from '../helpers/process.js'

const FLUSH_MS = 300
const PER_MINUTE = 6
const BAN_THRESHOLD = 4
type Counts = { allowed: number; rateLimited: number; banned: number; status2xx: number; status4xx: number; status5xx: number }

test('PostgreSQL + Redis: three instances count a known mix of allowed, 429 and ban exactly', { timeout: 120_000 }, async (t) => {
  if (!(await requireService(t, 'PostgreSQL'))) return
  if (!(await requireService(t, 'Redis'))) return
  const dir = await useTempDir(t, 'animal-store-usage-scale-')
  const db = await useScratchDatabase(t, 'as_usage_')
  const created = await runCli(['admin-tokens', 'create', '--name', 'ops', '--json'], { db })
  assert.equal(created.code, 0, created.stderr)
  const auth = { authorization: `Bearer ${JSON.parse(created.stdout).token}` }
  const adminPort = await freePort()
  const env = { REDIS_URL, USAGE_FLUSH_MS: String(FLUSH_MS), BAN_THRESHOLD: String(BAN_THRESHOLD) }
  const servers = await Promise.all(
    ['a', 'b', 'c'].map((name, i) =>
      startServer(t, {
        dir,
        db,
        logFile: join(dir, `server-${name}.log`),
        env: { ...env, ...(i === 0 ? { ADMIN_PORT: String(adminPort) } : {}) },
      }),
    ),
  )
  const admin = async (path: string) => {
    const res = await request(`http://127.0.0.1:${adminPort}/admin/v1${path}`, { headers: auth })
    assert.equal(res.status, 200, `${path}: ${res.text}`)
    return res.body as { data: Array<Record<string, number | string>> }
  }
  const made = await request(`http://127.0.0.1:${adminPort}/admin/v1/keys`, {
    method: 'POST',
    headers: auth,
    body: { plan: 'enterprise', name: 'tiny', perMinute: PER_MINUTE, perDay: 100_000 },
  })
  assert.equal(made.status, 201, made.text)
  const { key, apiKey } = made.body as { key: string; apiKey: { id: string } }

  // The whole mix inside one limiter minute, so that the refusals follow the allowed requests.
  await ensureMinuteRoom(20)
  const seen: Counts = { allowed: 0, rateLimited: 0, banned: 0, status2xx: 0, status4xx: 0, status5xx: 0 }
  for (let i = 0; seen.banned < 3; i++) {
    assert.ok(i < 100, `no ban after ${i} requests: ${JSON.stringify(seen)}`)
    const res = await request(`${servers[i % 3]!.url}/v1/pets`, { headers: bearer(key) })
    if (res.status === 200) {
      seen.allowed++
      seen.status2xx++
    } else {
      assert.equal(res.status, 429, res.text)
      const code = (res.body as { code: string }).code
      if (code === 'rate_limited') seen.rateLimited++
      else {
        assert.equal(code, 'key_banned')
        seen.banned++
      }
      seen.status4xx++
    }
  }
  assert.equal(seen.allowed, PER_MINUTE)
  assert.ok(seen.rateLimited > 0)

  const sum = (data: Array<Record<string, number | string>>): Counts => {
    const total: Counts = { allowed: 0, rateLimited: 0, banned: 0, status2xx: 0, status4xx: 0, status5xx: 0 }
    for (const bucket of data) for (const k of Object.keys(total) as Array<keyof Counts>) total[k] += bucket[k] as number
    return total
  }
  const minutes = async () => sum((await admin(`/keys/${apiKey.id}/usage/history?granularity=minute`)).data)
  // Every instance writes within FLUSH_MS; wait for it rather than for a fixed time.
  let last: Counts | undefined
  const arrived = await waitFor(async () => {
    last = await minutes()
    return JSON.stringify(last) === JSON.stringify(seen)
  }, 20 * FLUSH_MS)
  assert.ok(arrived, `history ${JSON.stringify(last)} != what clients saw ${JSON.stringify(seen)}`)
  await sleep(3 * FLUSH_MS) // more flushes: still exact (nothing counted twice)
  assert.deepEqual(await minutes(), seen)
  assert.deepEqual(sum((await admin(`/keys/${apiKey.id}/usage/history?granularity=hour&scope=chain`)).data), seen)
  const top = await admin('/usage/top?by=rateLimited&limit=1')
  assert.deepEqual(top.data, [
    {
      keyId: apiKey.id,
      name: 'tiny',
      plan: 'enterprise',
      requests: seen.allowed + seen.rateLimited + seen.banned,
      allowed: seen.allowed,
      rateLimited: seen.rateLimited,
      banned: seen.banned,
    },
  ])
  process.stdout.write(`[usage history, 3 instances, PostgreSQL+Redis] clients saw and history reads ${JSON.stringify(seen)}\n`)
  for (const s of servers) await s.stop()
})
