/**
 * TRUST_PROXY with real server processes on 127.0.0.1 (in-memory limiter, SQLite: nothing shared
 * with other tests): X-Forwarded-For as a real proxy sends it, over real sockets whose peer is
 * 127.0.0.1. What each setting decides, socket address by socket address, is in
 * test/http/trust-proxy-windows.test.ts (app.inject).
 */
import assert from 'node:assert/strict'
import { copyFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { probe } from '../helpers/cluster.js'
import { bearer, createKeyViaCli, startServer, useTempDir } from '../helpers/process.js'

const FREE_PER_MINUTE = 60

describe('TRUST_PROXY with real servers on 127.0.0.1', () => {
  test('XFF ignored without TRUST_PROXY, used from a trusted proxy, ignored from an untrusted socket', { timeout: 60_000 }, async (t) => {
    const dir = await useTempDir(t, 'animal-store-proxy-')
    const db = join(dir, 'store.db')
    const { key } = await createKeyViaCli(db, { plan: 'pro', name: 'proxy' })
    // One SQLite file per server (a file serves one server process), each a copy holding the key;
    // in-memory limiters (no REDIS_URL): each server has windows of its own.
    const [proxyDb, elsewhereDb] = [join(dir, 'proxy.db'), join(dir, 'elsewhere.db')]
    for (const file of [proxyDb, elsewhereDb]) copyFileSync(db, file)
    const [direct, behindProxy, proxyElsewhere] = await Promise.all([
      startServer(t, { dir, db, logFile: join(dir, 'direct.log') }),
      startServer(t, { dir, db: proxyDb, logFile: join(dir, 'proxy.log'), env: { TRUST_PROXY: '127.0.0.1' } }),
      startServer(t, { dir, db: elsewhereDb, logFile: join(dir, 'elsewhere.log'), env: { TRUST_PROXY: '10.9.9.9' } }),
    ])
    const keyless = async (base: string, xff: string) => {
      const o = await probe(`${base}/v1/pets`, { 'x-forwarded-for': xff })
      return `${o.status} ${o.code}`
    }
    // No TRUST_PROXY: every request is 127.0.0.1, whatever it claims.
    for (let i = 0; i < FREE_PER_MINUTE; i++) assert.equal(await keyless(direct.url, `198.51.100.${i}`), '401 unauthorized')
    assert.equal(await keyless(direct.url, '198.51.100.200'), '429 rate_limited', 'a spoofed X-Forwarded-For gets no fresh window')

    // TRUST_PROXY=127.0.0.1 (the test is the proxy): the X-Forwarded-For client is the identity.
    for (let i = 0; i < FREE_PER_MINUTE; i++) assert.equal(await keyless(behindProxy.url, '198.51.100.1'), '401 unauthorized')
    assert.equal(await keyless(behindProxy.url, '198.51.100.1'), '429 rate_limited')
    assert.equal(await keyless(behindProxy.url, '198.51.100.2'), '401 unauthorized', 'another client: its own window')
    assert.equal(await keyless(behindProxy.url, '9.9.9.9, 198.51.100.1'), '429 rate_limited', 'a client-sent prefix is ignored')

    // TRUST_PROXY names another proxy: 127.0.0.1 is untrusted, so the socket is the identity.
    for (let i = 0; i < FREE_PER_MINUTE; i++) assert.equal(await keyless(proxyElsewhere.url, `198.51.100.${i}`), '401 unauthorized')
    assert.equal(await keyless(proxyElsewhere.url, '198.51.100.201'), '429 rate_limited')

    // Keys are limited per key, not per address: the exhausted address still serves a keyed client,
    // also a key that this server has never seen (created before it started: its first request).
    for (const s of [direct, behindProxy, proxyElsewhere]) {
      assert.equal((await probe(`${s.url}/v1/pets`, { ...bearer(key), 'x-forwarded-for': '198.51.100.1' })).status, 200)
    }
  })
})
