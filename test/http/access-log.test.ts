import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import { createAdminToken } from '../../src/admin-tokens/admin-tokens.js'
import { addressIdentity } from '../../src/auth/address-identity.js'
import { generateAdminToken, generateKey, limiterIdentity } from '../../src/keys/api-key.js'
import { createLogger, infoLines } from '../../src/ops/logger.js'
import { ManualClock } from '../../src/shared/clock.js'
import { ADMIN_QUOTA, ANONYMOUS_QUOTA } from '../../src/shared/plans.js'
import { buildTestApp, TEST_NOW } from '../helpers/app.js'
import { createApiKey } from '../helpers/keys.js'
import { waitFor } from '../helpers/wait.js'

/** Every field but the time, which differs from line to line. */
const timeless = (line: string) => line.replace(/"time":"[^"]*",/, '')
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

test("the service logger's access line is byte for byte what pino's info() writes with the same fields", async (t) => {
  const dir = mkdtempSync(join(os.tmpdir(), 'access-log-'))
  const file = join(dir, 'service.log')
  const log = createLogger({ logLevel: 'info', logFile: file })
  assert.ok(infoLines.get(log), 'the service logger offers the fast line writer')
  const { app, storage } = await buildTestApp(t, { logger: log })
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const { key, record } = await createApiKey(storage.keys, { plan: 'free', name: 'x' }, 'production')
  const requests = [
    { url: '/v1/pets?limit=2', headers: { authorization: `Bearer ${key}`, 'x-request-id': 'my.id-1' } },
    // No key: no keyId field. A URL with characters JSON must escape.
    { url: '/v1/pets?x="a\\b"&é', headers: { 'x-request-id': 'my.id-2' } },
  ]
  for (const r of requests) await app.inject(r)
  // The reference: pino's own serialization of the same fields, through the same logger.
  log.info({ reqId: 'my.id-1', method: 'GET', url: '/v1/pets?limit=2', status: 200, ms: 0, ip: '127.0.0.1', keyId: record.id }, 'request')
  // (app.inject percent-encodes the quotes and the é; the backslash stays and needs escaping.)
  log.info(
    { reqId: 'my.id-2', method: 'GET', url: '/v1/pets?x=%22a\\b%22&%C3%A9', status: 401, ms: 0, ip: '127.0.0.1', keyId: undefined },
    'request',
  )
  await new Promise<void>((resolve) => log.flush(() => resolve()))
  const lines = readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter((l) => l.includes('"msg":"request"'))
  assert.equal(lines.length, 4)
  const withoutMs = (line: string) => timeless(line).replace(/"ms":[\d.]+/, '"ms":0')
  assert.equal(withoutMs(lines[0]!), withoutMs(lines[2]!))
  assert.equal(withoutMs(lines[1]!), withoutMs(lines[3]!))
  const first = JSON.parse(lines[0]!)
  assert.deepEqual(Object.keys(first), ['level', 'time', 'pid', 'reqId', 'method', 'url', 'status', 'ms', 'ip', 'keyId', 'msg'])
  assert.equal(first.level, 'info', 'the level by name')
  assert.match(first.time, ISO_TIME)
  assert.equal(first.pid, process.pid)
  assert.equal(JSON.parse(lines[1]!).url, '/v1/pets?x=%22a\\b%22&%C3%A9')
  // A level above info writes no access line.
  log.level = 'warn'
  await app.inject(requests[0]!)
  await new Promise<void>((resolve) => log.flush(() => resolve()))
  assert.equal(
    readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .filter((l) => l.includes('"msg":"request"')).length,
    4,
  )
})

/**
 * An app (main or admin listener) logging through the service logger into a file, as the server
 * runs it, and its access lines by request id.
 */
async function loggedApp(t: TestContext, options: { env?: Record<string, string>; listener?: 'main' | 'admin' } = {}) {
  const dir = mkdtempSync(join(os.tmpdir(), 'access-log-'))
  const file = join(dir, 'service.log')
  const log = createLogger({ logLevel: 'info', logFile: file })
  const clock = new ManualClock(TEST_NOW)
  const service = await buildTestApp(t, { env: options.env, clock, logger: log })
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const { storage, limiter, config } = service
  const app = options.listener === 'admin' ? await service.admin() : service.app
  const linesOf = async (reqId: string) => {
    await new Promise<void>((resolve) => log.flush(() => resolve()))
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'request' && l.reqId === reqId)
  }
  /**
   * The access line of the request sent with `X-Request-Id: reqId`, without level, time, pid and ms.
   * Waited for: app.inject may resolve before the onResponse hook has written it.
   */
  const lineOf = async (reqId: string): Promise<Record<string, unknown>> => {
    await waitFor(async () => (await linesOf(reqId)).length > 0, 10_000, 10)
    const lines = await linesOf(reqId)
    assert.equal(lines.length, 1, `one access line for ${reqId}`)
    const { level, time, pid, ms, method, url, msg, ...who } = lines[0]!
    return who
  }
  return { app, storage, clock, limiter, config, lineOf }
}

test('every access line names the client address as the limiter sees it, and the key presented whenever storage knows it, on every status', async (t) => {
  // The proxy is the inject default peer, 127.0.0.1.
  const { app, storage, clock, limiter, config, lineOf } = await loggedApp(t, { env: { TRUST_PROXY: '127.0.0.1', BAN_THRESHOLD: '2' } })
  const make = async (name: string, expiresAt?: number) =>
    createApiKey(storage.keys, { plan: 'free', name, expiresAt }, config.env, TEST_NOW)
  const ok = await make('ok')
  const expired = await make('expires', TEST_NOW + 1000)
  const revoked = await make('revoked')
  await storage.keys.revokeKey(revoked.record.id, TEST_NOW)
  const busy = await make('busy')
  clock.advance(2000)
  for (let i = 0; i < busy.record.perMinute; i++) limiter.consumeSync!(limiterIdentity(busy.record), busy.record)
  // A client address whose keyless quota is spent: its next requests are refused, then banned.
  for (let i = 0; i < ANONYMOUS_QUOTA.perMinute; i++) limiter.consumeSync!(addressIdentity('198.51.100.9'), ANONYMOUS_QUOTA)

  const send = async (
    reqId: string,
    options: { key?: string; method?: 'GET' | 'POST'; body?: Record<string, unknown>; from?: string; forwardedFor?: string },
  ) => {
    const res = await app.inject({
      method: options.method ?? 'GET',
      url: '/v1/pets',
      remoteAddress: options.from,
      headers: {
        'x-request-id': reqId,
        ...(options.key === undefined ? {} : { authorization: `Bearer ${options.key}` }),
        ...(options.forwardedFor === undefined ? {} : { 'x-forwarded-for': options.forwardedFor }),
      },
      ...(options.body === undefined ? {} : { payload: options.body }),
    })
    return res.statusCode >= 400 ? { status: res.statusCode, code: res.json().code } : { status: res.statusCode }
  }
  const cases: Array<[string, Parameters<typeof send>[1], { status: number; code?: string }, Record<string, unknown>]> = [
    ['accepted', { key: ok.key }, { status: 200 }, { ip: '127.0.0.1', keyId: ok.record.id }],
    [
      'invalid-body',
      { key: ok.key, method: 'POST', body: { name: 7 } },
      { status: 400, code: 'invalid_request' },
      { ip: '127.0.0.1', keyId: ok.record.id },
    ],
    ['expired', { key: expired.key }, { status: 401, code: 'key_expired' }, { ip: '127.0.0.1', keyId: expired.record.id }],
    ['revoked', { key: revoked.key }, { status: 401, code: 'unauthorized' }, { ip: '127.0.0.1', keyId: revoked.record.id }],
    ['unknown', { key: generateKey('production') }, { status: 401, code: 'unauthorized' }, { ip: '127.0.0.1' }],
    ['over-limit', { key: busy.key }, { status: 429, code: 'rate_limited' }, { ip: '127.0.0.1', keyId: busy.record.id }],
    ['banned', { key: busy.key }, { status: 429, code: 'key_banned' }, { ip: '127.0.0.1', keyId: busy.record.id }],
    // Through the trusted proxy: the forwarded address, without the port a proxy may add.
    ['forwarded', { forwardedFor: '203.0.113.7:5555' }, { status: 401, code: 'unauthorized' }, { ip: '203.0.113.7' }],
    // Not through the proxy: an IPv4-mapped peer is its IPv4 address, as the limiter counts it.
    ['mapped', { from: '::ffff:198.51.100.1', forwardedFor: '203.0.113.7' }, { status: 401, code: 'unauthorized' }, { ip: '198.51.100.1' }],
    ['address-limited', { forwardedFor: '198.51.100.9' }, { status: 429, code: 'rate_limited' }, { ip: '198.51.100.9' }],
    ['address-banned', { forwardedFor: '198.51.100.9' }, { status: 429, code: 'key_banned' }, { ip: '198.51.100.9' }],
  ]
  for (const [reqId, options, answer, who] of cases) {
    assert.deepEqual(await send(reqId, options), answer, reqId)
    assert.deepEqual(await lineOf(reqId), { reqId, status: answer.status, ...who }, reqId)
  }
})

test('every admin access line names the client address, and the admin token presented whenever storage knows it, on every status', async (t) => {
  const { app, storage, limiter, lineOf } = await loggedApp(t, { listener: 'admin' })
  const valid = await createAdminToken(storage.adminTokens, 'valid')
  const revoked = await createAdminToken(storage.adminTokens, 'revoked')
  await storage.adminTokens.revoke(revoked.record.id, TEST_NOW)
  const busy = await createAdminToken(storage.adminTokens, 'busy')
  for (let i = 0; i < ADMIN_QUOTA.perMinute; i++) limiter.consumeSync!(`adm:${busy.record.id}`, ADMIN_QUOTA)
  const cases: Array<[string, string | undefined, number, Record<string, unknown>]> = [
    ['admin-accepted', valid.token, 200, { adminTokenId: valid.record.id }],
    ['admin-revoked', revoked.token, 401, { adminTokenId: revoked.record.id }],
    ['admin-over-limit', busy.token, 429, { adminTokenId: busy.record.id }],
    ['admin-unknown', generateAdminToken(), 401, {}],
    ['admin-keyless', undefined, 401, {}],
  ]
  for (const [reqId, token, status, who] of cases) {
    const res = await app.inject({
      url: '/admin/v1/keys',
      headers: { 'x-request-id': reqId, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
    })
    assert.equal(res.statusCode, status, `${reqId}: ${res.body}`)
    assert.deepEqual(await lineOf(reqId), { reqId, status, ip: '127.0.0.1', ...who }, reqId)
  }
})
