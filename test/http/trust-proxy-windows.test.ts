/**
 * TRUST_PROXY and the per-address limit of keyless requests (Free rates: 60 a minute). Behind a
 * load balancer the socket address is the balancer's, so the client address must come from
 * X-Forwarded-For — but only when the socket is a trusted proxy: otherwise any client could
 * send a new X-Forwarded-For with every request and get a fresh window each time.
 *
 * Through app.inject (exact socket addresses); with real server processes on 127.0.0.1 in
 * test/system/http/trust-proxy.test.ts.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { loadConfig } from '../../src/config/config.js'
import { ConfigError } from '../../src/shared/startup-error.js'
import { buildTestApp, bearer as injectBearer } from '../helpers/app.js'

const FREE_PER_MINUTE = 60

describe('TRUST_PROXY through app.inject', () => {
  /** A keyless GET /v1/pets from `remoteAddress` with an optional X-Forwarded-For; returns status and code. */
  const keyless = async (app: Awaited<ReturnType<typeof buildTestApp>>['app'], remoteAddress: string, xff?: string) => {
    const res = await app.inject({ url: '/v1/pets', remoteAddress, headers: xff === undefined ? {} : { 'x-forwarded-for': xff } })
    return `${res.statusCode} ${res.json().code}`
  }

  test('without TRUST_PROXY, X-Forwarded-For is ignored: a spoofed one gets no fresh window', async (t) => {
    const ta = await buildTestApp(t)
    for (let i = 0; i < FREE_PER_MINUTE; i++) {
      assert.equal(await keyless(ta.app, '203.0.113.10', `198.51.100.${i}`), '401 unauthorized', `request ${i + 1}`)
    }
    // The window of the socket address is used up, whatever X-Forwarded-For claims.
    assert.equal(await keyless(ta.app, '203.0.113.10', '198.51.100.250'), '429 rate_limited')
    assert.equal(await keyless(ta.app, '203.0.113.10'), '429 rate_limited')
    // Another socket address has its own window.
    assert.equal(await keyless(ta.app, '203.0.113.11', '198.51.100.0'), '401 unauthorized')
    // And a valid key from the exhausted address is limited by its key, not by the address, from
    // its first request (behind a balancer without TRUST_PROXY, every client shares that address).
    const { key } = await ta.domain.services.keys.createKey(
      { plan: 'pro', name: 'behind the balancer' },
      { actor: { type: 'cli', id: 'test' } },
    )
    const res = await ta.app.inject({ url: '/v1/pets', remoteAddress: '203.0.113.10', headers: injectBearer(key) })
    assert.equal(res.statusCode, 200)
    assert.equal(res.headers['x-ratelimit-limit'], '300', "the Pro plan's window")
  })

  test('with TRUST_PROXY = the proxy, the client address comes from X-Forwarded-For', async (t) => {
    const ta = await buildTestApp(t, { env: { TRUST_PROXY: '127.0.0.1' } })
    for (let i = 0; i < FREE_PER_MINUTE; i++) {
      assert.equal(await keyless(ta.app, '127.0.0.1', '198.51.100.1'), '401 unauthorized', `request ${i + 1}`)
    }
    assert.equal(await keyless(ta.app, '127.0.0.1', '198.51.100.1'), '429 rate_limited')
    // Distinct clients behind the same proxy: distinct windows.
    assert.equal(await keyless(ta.app, '127.0.0.1', '198.51.100.2'), '401 unauthorized')
    assert.equal(await keyless(ta.app, '127.0.0.1', '2001:db8:1:2::7'), '401 unauthorized')
    // A client that sends its own X-Forwarded-For: the proxy appends the real address, and the
    // rightmost untrusted entry is the client, so the spoofed part is ignored.
    assert.equal(await keyless(ta.app, '127.0.0.1', '9.9.9.9, 198.51.100.1'), '429 rate_limited')
    assert.equal(await keyless(ta.app, '127.0.0.1', '198.51.100.2, 198.51.100.1'), '429 rate_limited')
  })

  test('with TRUST_PROXY set, a request from an untrusted socket is keyed by the socket', async (t) => {
    const ta = await buildTestApp(t, { env: { TRUST_PROXY: '127.0.0.1' } })
    for (let i = 0; i < FREE_PER_MINUTE; i++) {
      assert.equal(await keyless(ta.app, '192.0.2.50', `198.51.100.${i}`), '401 unauthorized', `request ${i + 1}`)
    }
    assert.equal(await keyless(ta.app, '192.0.2.50', '198.51.100.222'), '429 rate_limited')
    // The addresses it claimed were never charged: they still have their whole window via the proxy.
    assert.equal(await keyless(ta.app, '127.0.0.1', '198.51.100.0'), '401 unauthorized')
  })

  test('a CIDR list: the client is the first untrusted address from the right', async (t) => {
    const cidr = await buildTestApp(t, { env: { TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' } })
    // Through two trusted hops (10.1.1.1 -> 10.2.2.2 -> app): the client is 198.51.100.9.
    for (let i = 0; i < FREE_PER_MINUTE; i++) {
      assert.equal(await keyless(cidr.app, '10.2.2.2', '198.51.100.9, 10.1.1.1'), '401 unauthorized')
    }
    assert.equal(await keyless(cidr.app, '10.3.3.3', '198.51.100.9'), '429 rate_limited', 'same client via another proxy')
    assert.equal(await keyless(cidr.app, '10.3.3.3', '198.51.100.10'), '401 unauthorized')
    // 172.16.0.1 is not in the list: keyed by the socket, whatever it forwards.
    for (let i = 0; i < FREE_PER_MINUTE; i++) await keyless(cidr.app, '172.16.0.1', `198.51.100.${i}`)
    assert.equal(await keyless(cidr.app, '172.16.0.1', '198.51.100.250'), '429 rate_limited')
  })

  // Regression: each X-Forwarded-For value that was not an address (or an address with a port, or
  // a hex IPv4-mapped one) got a bucket of its own, so a proxy passing on what clients sent gave
  // every invented value a fresh window (and grew the limiter's state without bound).
  test('a forwarded value that is not an address is limited as the proxy that sent it; addresses are normalized', async (t) => {
    const ta = await buildTestApp(t, { env: { TRUST_PROXY: '10.0.0.0/8' } })
    const remaining = async (remoteAddress: string, xff?: string) => {
      const res = await ta.app.inject({ url: '/v1/pets', remoteAddress, headers: xff === undefined ? {} : { 'x-forwarded-for': xff } })
      assert.equal(res.statusCode, 401)
      return Number(res.headers['x-ratelimit-remaining'])
    }
    const proxy = '10.0.0.7'
    const notAddresses = ['garbage-1', 'garbage-2', 'unknown', '999.1.1.1', '1.2.3.4:', '[1.2.3.4]:80', 'x'.repeat(2000)]
    const seen = []
    for (const value of notAddresses) seen.push(await remaining(proxy, value))
    // Through two trusted hops, too: the socket's peer is the proxy that is charged.
    seen.push(await remaining(proxy, 'garbage-3, 10.1.1.1'))
    seen.push(await remaining(proxy)) // the proxy's own requests: the same bucket
    assert.deepEqual(
      seen,
      seen.map((_, i) => FREE_PER_MINUTE - 1 - i),
    )

    // One client in any spelling is one bucket; two clients are two.
    assert.deepEqual(
      [await remaining(proxy, '1.2.3.4:5555'), await remaining(proxy, '1.2.3.4:6666'), await remaining(proxy, '1.2.3.4')],
      [59, 58, 57],
    )
    assert.deepEqual(
      [
        await remaining(proxy, '198.51.100.1'),
        await remaining(proxy, '::ffff:c633:6401'),
        await remaining(proxy, '0:0:0:0:0:FFFF:C633:6401'),
        await remaining('::ffff:10.0.0.7', '[::ffff:198.51.100.1]:443'),
      ],
      [59, 58, 57, 56],
    )
    assert.deepEqual([await remaining(proxy, '[2001:db8:1:2::1]:443'), await remaining(proxy, '2001:DB8:1:2::2')], [59, 58])
    assert.equal(await remaining(proxy, '198.51.100.2'), 59)
  })

  // Regression: Fastify 5.12 ignores a numeric trustProxy (hop-count-only trust "fails closed":
  // it trusts nothing), so TRUST_PROXY=1 used to be accepted yet have no effect: behind a load
  // balancer every keyless client would share the balancer's single window.
  test('a hop count is not silently ignored: TRUST_PROXY=1 is refused at start, naming TRUST_PROXY', () => {
    assert.throws(
      () => loadConfig({ TRUST_PROXY: '1' }),
      (e: Error) => e instanceof ConfigError && /TRUST_PROXY/.test(e.message),
    )
  })
})
