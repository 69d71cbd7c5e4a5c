/**
 * A key revoked by another process (the CLI) is refused by a running server (README: within 2 s;
 * the server polls the key change log every KEY_REFRESH_MS, default 1000 ms). The delay is printed;
 * the test waits up to REVOCATION_DEADLINE_MS for the refusal.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { bearer, createKeyViaCli, REVOCATION_DEADLINE_MS, request, runCli, sleep, startServer, useTempDir } from '../helpers/process.js'

test('a key revoked through the CLI is refused by a running server, and stays refused', { timeout: 60_000 }, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  // Enterprise with room to spare, so the 50 ms polling never meets a 429.
  const { id, key } = await createKeyViaCli(db, { plan: 'enterprise', name: 'to revoke', perMinute: 100_000, perDay: 1_000_000 })
  const bystander = await createKeyViaCli(db, { plan: 'enterprise', name: 'bystander', perMinute: 100_000, perDay: 1_000_000 })
  const server = await startServer(t, { dir, db }) // KEY_REFRESH_MS unset: the default 1000 ms

  // Used once, so the server has the key cached (the case revocation polling exists for).
  for (let i = 0; i < 3; i++) {
    const res = await request(`${server.url}/v1/pets`, { headers: bearer(key) })
    assert.equal(res.status, 200, res.text)
  }

  const spawnedAt = performance.now()
  const revoke = await runCli(['keys', 'revoke', id], { db })
  const revokedAt = performance.now() // the revocation is committed before the CLI exits
  assert.equal(revoke.code, 0, revoke.stderr)

  let refusedAt: number | undefined
  let polls = 0
  while (performance.now() - revokedAt < REVOCATION_DEADLINE_MS) {
    polls++
    const res = await request(`${server.url}/v1/pets`, { headers: bearer(key) })
    if (res.status === 401) {
      refusedAt = performance.now()
      assert.equal((res.body as { code: string }).code, 'unauthorized')
      break
    }
    assert.equal(res.status, 200, `before the refusal the key still works (got ${res.status}: ${res.text})`)
    await sleep(50)
  }
  assert.ok(refusedAt !== undefined, `the revoked key was still accepted ${REVOCATION_DEADLINE_MS} ms after the CLI exited`)
  const delay = Math.max(0, refusedAt - revokedAt)
  const delayFromSpawn = refusedAt - spawnedAt
  process.stdout.write(
    `revocation delay: ${delay.toFixed(0)} ms after the CLI exited ` +
      `(${delayFromSpawn.toFixed(0)} ms after it was spawned; CLI ran ${revoke.ms.toFixed(0)} ms; ${polls} polls)\n`,
  )

  // Stays refused, and other keys are unaffected.
  await sleep(1_200)
  assert.equal((await request(`${server.url}/v1/pets`, { headers: bearer(key) })).status, 401)
  assert.equal((await request(`${server.url}/v1/pets`, { headers: bearer(bystander.key) })).status, 200)

  // A restarted server does not resurrect it.
  await server.stop()
  const again = await startServer(t, { dir, db })
  assert.equal((await request(`${again.url}/v1/pets`, { headers: bearer(key) })).status, 401)
  assert.equal((await request(`${again.url}/v1/pets`, { headers: bearer(bystander.key) })).status, 200)
  await again.stop()
})

test('an admin token revoked through the CLI is refused by a running server (cached like keys)', { timeout: 60_000 }, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const created = await runCli(['admin-tokens', 'create', '--name', 'to revoke', '--json'], { db })
  assert.equal(created.code, 0, created.stderr)
  const { token, adminToken } = JSON.parse(created.stdout) as { token: string; adminToken: { id: string } }
  const server = await startServer(t, { dir, db })
  const call = () => request(`${server.adminUrl}/admin/v1/keys`, { headers: bearer(token) })
  assert.equal((await call()).status, 200) // now cached

  const revoke = await runCli(['admin-tokens', 'revoke', adminToken.id], { db })
  const revokedAt = performance.now()
  assert.equal(revoke.code, 0, revoke.stderr)
  let refusedAt: number | undefined
  while (performance.now() - revokedAt < REVOCATION_DEADLINE_MS) {
    const res = await call()
    if (res.status === 401) {
      refusedAt = performance.now()
      assert.equal((res.body as { message: string }).message, 'Invalid or revoked admin token')
      break
    }
    assert.equal(res.status, 200, `before the refusal the token still works (got ${res.status}: ${res.text})`)
    await sleep(50)
  }
  assert.ok(refusedAt !== undefined, `the revoked admin token was still accepted ${REVOCATION_DEADLINE_MS} ms after the CLI exited`)
  process.stdout.write(`admin token revocation delay: ${Math.max(0, refusedAt - revokedAt).toFixed(0)} ms after the CLI exited\n`)
  await sleep(1_200)
  assert.equal((await call()).status, 401, 'stays refused')
  await server.stop()
})
