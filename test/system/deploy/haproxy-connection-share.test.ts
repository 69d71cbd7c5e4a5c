/**
 * The shipped deploy/haproxy.cfg keeps each client address's share of connections (256 at once,
 * as an instance's MAX_CONNECTIONS_PER_ADDRESS): behind it, an instance sees only the balancer's
 * address, which TRUST_PROXY exempts from the instance's own share (docs/deployment.md). A throwaway
 * HAProxy runs the file unchanged; the frontend's rule holds whether or not an instance is up, so
 * none is started (each request is then HAProxy's own 503, which still shows the connection was
 * taken). One address (127.0.0.2) opens 256 + 20 idle connections; 20 are closed at once, and
 * another address (127.0.0.3) is still answered.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import http from 'node:http'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { requireThrowaway } from '../helpers/faults.js'
import { openIdleConnections } from '../helpers/idle-connections.js'
import { freePort, ROOT, waitFor } from '../helpers/process.js'
import { startThrowawayHaproxy } from '../helpers/proxies.js'

const SHARE = 256
const OVER = 20
const BOUND_MS = 20_000

function status(port: number, from: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/readyz', agent: false, localAddress: from, timeout: 10_000 }, (res) => {
      res.resume()
      res.once('end', () => resolve(res.statusCode ?? 0))
    })
    req.once('timeout', () => req.destroy())
    req.once('error', () => resolve(0))
  })
}

// Issue 32: the config listed exactly three servers, so with two `haproxy -c` failed; any count from one to nine now.
for (const count of [1, 2, 3]) {
  test(`deploy/haproxy.cfg is valid (haproxy -c) with ${count} server(s)`, async (t) => {
    if (!requireThrowaway(t, 'HAProxy')) return
    const env = {
      ...process.env,
      AS_BIND: '127.0.0.1:8080',
      ...Object.fromEntries(Array.from({ length: count }, (_, i) => [`AS_SERVER_${i + 1}`, `127.0.0.1:${8081 + i}`])),
      AS_STATS_SOCKET: '/run/animal-store-haproxy-check.sock',
    }
    const { stdout } = await promisify(execFile)('haproxy', ['-c', '-f', join(ROOT, 'deploy/haproxy.cfg')], { env })
    assert.match(stdout, /Configuration file is valid/)
  })
}

test(`deploy/haproxy.cfg: one address holds ${SHARE} connections at once, those over it are closed; another address is answered`, {
  timeout: 90_000,
}, async (t) => {
  if (!requireThrowaway(t, 'HAProxy')) return
  // Nothing listens on these: the instances are down, which the frontend's rule does not depend on.
  const servers = [`127.0.0.1:${await freePort()}`, `127.0.0.1:${await freePort()}`, `127.0.0.1:${await freePort()}`] as const
  const haproxy = await startThrowawayHaproxy(t, [...servers])
  const port = Number(new URL(haproxy.url).port)

  const { closed } = await openIdleConnections(t, port, '127.0.0.2', SHARE + OVER, 32)
  assert.ok(await waitFor(() => closed() === OVER, BOUND_MS), `${OVER} over the share are closed (closed: ${closed()})`)
  assert.equal(await status(port, '127.0.0.3'), 503, "another address's request reaches the (empty) backend")
  assert.equal(closed(), OVER, 'the share stays open')
})
