import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { buildApp } from '../../src/app.js'
import { ManualClock } from '../../src/clock.js'
import { loadConfig } from '../../src/config.js'
import { createApiKey } from '../../src/keys/key-service.js'
import { banPolicy } from '../../src/limits/index.js'
import { MemoryLimiter } from '../../src/limits/memory/memory-limiter.js'
import { createLogger, infoLines } from '../../src/logger.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import { TEST_NOW } from '../helpers/app.js'

/** Every field but the time, which differs from line to line. */
const timeless = (line: string) => line.replace(/"time":\d+,/, '')

test("the service logger's access line is byte for byte what pino's info() writes with the same fields", async () => {
  const dir = mkdtempSync(join(os.tmpdir(), 'access-log-'))
  const file = join(dir, 'service.log')
  const log = createLogger({ logLevel: 'info', logFile: file })
  assert.ok(infoLines.get(log), 'the service logger offers the fast line writer')
  const config = loadConfig({ BOOTSTRAP_KEY: 'false' })
  const storage = new SqliteStorage({ databaseUrl: ':memory:', durability: 'process' })
  const clock = new ManualClock(TEST_NOW)
  const limiter = new MemoryLimiter(clock, banPolicy(config))
  const app = await buildApp({ config, storage, limiter, clock, logger: log })
  await app.ready()
  try {
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
    assert.equal(typeof first.time, 'number')
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
  } finally {
    await app.close()
    await limiter.close()
    await storage.close()
    rmSync(dir, { recursive: true, force: true })
  }
})
