/**
 * A stolen admin token and its cleanup, with real processes: two servers on one PostgreSQL database
 * and the CLI. The operator's token T (made with the CLI) is stolen; the thief mints T1 with T on
 * one server and T2 with T1 on the other, and uses all three on both. The operator revokes T, once
 * with the CLI and once (another T) through the admin API: T, T1 and T2 are refused by both servers
 * (at once by the one that revoked them through its admin API), and the audit log shows the cascade.
 * The propagation times are printed, not asserted.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { requireService } from '../../helpers/services.js'
import { useScratchDatabase } from '../helpers/cluster.js'
import { bearer, REVOCATION_DEADLINE_MS, request, runCli, type ServerProcess, sleep, startServer, useTempDir } from '../helpers/process.js'

type Json = Record<string, any>

test('PostgreSQL, two servers: a stolen admin token is revoked with everything the thief made with it', { timeout: 180_000 }, async (t) => {
  if (!(await requireService(t, 'PostgreSQL'))) return
  const dir = await useTempDir(t, 'animal-store-theft-')
  const db = await useScratchDatabase(t, 'as_theft_')
  const cli = async (...args: string[]): Promise<Json> => {
    const res = await runCli([...args, '--json'], { db })
    assert.equal(res.code, 0, res.stderr)
    return JSON.parse(res.stdout)
  }
  const operator = await cli('admin-tokens', 'create', '--name', 'operator')
  const servers = await Promise.all(['a', 'b'].map((name) => startServer(t, { dir, db, logFile: join(dir, `server-${name}.log`) })))
  const admin = (server: ServerProcess, token: string, method: string, path: string, body?: unknown) =>
    request(`${server.adminUrl}/admin/v1${path}`, { method, headers: bearer(token), body })
  const status = async (server: ServerProcess, token: string) => (await admin(server, token, 'GET', '/token')).status

  for (const how of ['the CLI', 'the admin API'] as const) {
    const stolen = await cli('admin-tokens', 'create', '--name', `console (${how})`)
    const minted: Json[] = []
    for (const [server, by] of [
      [servers[0]!, stolen.token],
      [servers[1]!, undefined],
    ] as const) {
      const res = await admin(server, by ?? minted[0]!.token, 'POST', '/admin-tokens', {
        name: `backup ${minted.length + 1}`,
        role: 'admin',
      })
      assert.equal(res.status, 201, res.text)
      minted.push(res.body as Json)
    }
    const [t1, t2] = minted as [Json, Json]
    const tokens = [stolen.token as string, t1.token as string, t2.token as string]
    for (const server of servers) for (const token of tokens) assert.equal(await status(server, token), 200, 'cached on both')

    let revocation: Json
    if (how === 'the CLI') {
      revocation = await cli('admin-tokens', 'revoke', stolen.adminToken.id)
    } else {
      const res = await admin(servers[0]!, operator.token, 'POST', `/admin-tokens/${stolen.adminToken.id}/revoke`)
      assert.equal(res.status, 200, res.text)
      revocation = res.body as Json
      for (const token of tokens) assert.equal(await status(servers[0]!, token), 401, 'at once on the server that revoked them')
    }
    const answeredAt = performance.now() // committed before the answer
    const times = await Promise.all(
      servers.flatMap((server) =>
        tokens.map(async (token, i) => {
          while ((await status(server, token)) !== 401) {
            if (performance.now() - answeredAt > REVOCATION_DEADLINE_MS)
              assert.fail(`T${i} still accepted by server ${server.url} ${REVOCATION_DEADLINE_MS} ms after the revocation through ${how}`)
            await sleep(50)
          }
          return performance.now() - answeredAt
        }),
      ),
    )
    process.stdout.write(
      `[admin token theft, ${how}] T, T1, T2 refused by two servers: ${times.map((ms) => `${ms.toFixed(0)} ms`).join(', ')} after the answer\n`,
    )
    assert.deepEqual(
      revocation.alsoRevoked.map((x: Json) => x.id),
      [t1.adminToken.id, t2.adminToken.id],
    )
    assert.equal(await status(servers[1]!, operator.token), 200, "the operator's token still works")

    const audit = await admin(servers[1]!, operator.token, 'GET', '/audit-log?action=admin_token.revoke&order=desc&limit=3')
    assert.equal(audit.status, 200, audit.text)
    assert.deepEqual(
      (audit.body as Json).data
        .map((e: Json) => [e.actor.type, e.details.tokenId, e.details.revokedWith ?? e.details.alsoRevoked])
        .reverse(),
      [
        [how === 'the CLI' ? 'cli' : 'admin_token', stolen.adminToken.id, [t1.adminToken.id, t2.adminToken.id]],
        [how === 'the CLI' ? 'cli' : 'admin_token', t1.adminToken.id, stolen.adminToken.id],
        [how === 'the CLI' ? 'cli' : 'admin_token', t2.adminToken.id, stolen.adminToken.id],
      ],
    )
  }

  const listed = await cli('admin-tokens', 'list')
  assert.deepEqual(
    listed.data.filter((x: Json) => x.revokedAt === null).map((x: Json) => x.name),
    ['operator'],
    'nothing the thief made is left',
  )
  for (const server of servers) await server.stop()
})
