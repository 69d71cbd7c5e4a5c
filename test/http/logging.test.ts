import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { pino } from 'pino'
import { generateAdminToken } from '../../src/keys/api-key.js'
import { createLogger, infoLines } from '../../src/ops/logger.js'
import { buildTestApp } from '../helpers/app.js'
import { createApiKey } from '../helpers/keys.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

test('no key reaches a log line or an error body, wherever the client puts it', async (t) => {
  const lines: string[] = []
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk))
      cb()
    },
  })
  const { app, storage } = await buildTestApp(t, { logger: pino({ level: 'info' }, sink) })
  const { key } = await createApiKey(storage.keys, { plan: 'free', name: 'x' }, 'production')
  const auth = { authorization: `Bearer ${key}` }
  const requests = [
    { url: '/v1/pets', headers: auth },
    { url: `/v1/pets?api_key=${key}`, headers: auth },
    { url: `/v1/pets/${key}`, headers: auth },
    { url: `/v1/${key}`, headers: auth },
    { url: '/v1/pets', headers: { authorization: `Bearer ${key}x` } },
    { url: '/v1/pets', headers: { authorization: `Basic ${key}` } },
    { url: '/v1/pets', headers: { 'x-request-id': key, ...auth } },
  ]
  for (const r of requests) {
    const res = await app.inject(r)
    assert.equal(res.body.includes(key), false, `response body for ${r.url}`)
  }
  assert.ok(lines.length >= requests.length, 'one access line per request')
  const log = lines.join('')
  assert.deepEqual(
    lines.filter((l) => l.includes(key)),
    [],
  )
  assert.equal(log.includes(key.slice(12)), false, 'not even the secret part')
  assert.match(log, /"msg":"request"/)
  assert.match(log, /"keyId":"key_/)
})

test('a key percent-encoded in the path or the query, or cut short in a 404 message, reaches no log line, error body or metric', async (t) => {
  const lines: string[] = []
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk))
      cb()
    },
  })
  const { app, storage, metrics } = await buildTestApp(t, { logger: pino({ level: 'info' }, sink) })
  const { key } = await createApiKey(storage.keys, { plan: 'free', name: 'x' }, 'production')
  const token = generateAdminToken()
  const secret = key.slice(8)
  const auth = { authorization: `Bearer ${key}` }
  const urls = [
    `/as%5Flive_${secret}`,
    `/v1/as%5flive_${secret}`,
    `/v1/pets?api_key=%61s_live_${secret}`,
    `/v1/pets?api_key=${encodeURIComponent(key).replace(/_/g, '%5F')}`,
    `/as%5Fadmin_${token.slice(9)}`,
    // Cut at 200 characters in the 404 message, the key would be only partly there.
    `/${'x'.repeat(170)}${key}`,
  ]
  for (const url of urls) {
    const res = await app.inject({ url, headers: auth })
    assert.equal(res.body.includes(secret.slice(0, 8)), false, `response body for ${url}: ${res.body}`)
    assert.equal(res.body.includes(token.slice(9, 17)), false, `response body for ${url}: ${res.body}`)
  }
  const notFound = await app.inject({ url: `/as%5Flive_${secret}`, headers: auth })
  assert.equal(notFound.json().message, `No route for GET /${key.slice(0, 12)}…`)
  const accessLines = lines.filter((l) => l.includes('"msg":"request"'))
  assert.equal(accessLines.length, urls.length + 1, 'one access line per request')
  for (const line of accessLines) {
    assert.equal(line.includes(secret.slice(4)), false, line)
    assert.equal(line.includes(token.slice(13)), false, line)
  }
  assert.equal(JSON.parse(accessLines[2]!).url, `/v1/pets?api_key=${key.slice(0, 12)}…`)
  // Metrics are labelled by route pattern: an unrouted path is 'unmatched', never the URL.
  const exposition = await metrics.registry.metrics()
  assert.match(exposition, /route="unmatched"/)
  assert.equal(exposition.includes(secret.slice(0, 8)) || exposition.includes(token.slice(9, 17)), false)
})

test('a key with a character lost or added, or sent as a query parameter name, reaches no error body and no log line', async (t) => {
  const dir = mkdtempSync(join(os.tmpdir(), 'malformed-keys-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'service.log')
  // The service's own logger (access lines written directly, other lines through pino).
  const logger = createLogger({ logLevel: 'info', logFile: file })
  const { app, storage } = await buildTestApp(t, { logger })
  const { key } = await createApiKey(storage.keys, { plan: 'free', name: 'x' }, 'production')
  const auth = { authorization: `Bearer ${key}` }
  const shortened = key.slice(0, -1)
  const lengthened = `${key.slice(0, 20)}Q${key.slice(20)}`
  /** What must appear nowhere: the secret's characters past the display prefix (8 of them in a row). */
  const fragments = [key.slice(12, 20), key.slice(20, 28), key.slice(28, 36), key.slice(-8)]
  const holdsSecret = (text: string) => fragments.some((f) => text.includes(f))

  const asName = await app.inject({ url: `/v1/pets?${shortened}=1`, headers: auth })
  assert.equal(asName.statusCode, 400)
  assert.equal(asName.json().message, `unknown query parameter '${key.slice(0, 12)}…'`)
  const lengthenedAsName = await app.inject({ url: `/v1/pets?limit=5&${encodeURIComponent(lengthened)}`, headers: auth })
  assert.equal(lengthenedAsName.json().message, `unknown query parameter '${key.slice(0, 12)}…'`)
  for (const url of [`/v1/pets?api_key=${shortened}`, `/v1/pets/${lengthened}`, `/v1/${shortened}`, `/v1/pets?${key}=1`]) {
    const res = await app.inject({ url, headers: auth })
    assert.ok(res.statusCode >= 400, url)
    assert.equal(holdsSecret(res.body), false, `${url}: ${res.body}`)
  }
  // An unexpected error whose message quotes a mistyped key: the 500 says nothing, its log line holds no key.
  const pets = storage.pets
  const getPet = pets.getPet
  pets.getPet = async () => {
    throw new Error(`lookup failed for ${lengthened}`)
  }
  try {
    const failed = await app.inject({ url: '/v1/pets/1', headers: auth })
    assert.equal(failed.statusCode, 500)
  } finally {
    pets.getPet = getPet
  }
  await new Promise<void>((resolve) => logger.flush(() => resolve()))
  const lines = readFileSync(file, 'utf8').trim().split('\n')
  assert.equal(lines.filter((l) => l.includes('"msg":"request"')).length, 7, 'one access line per request')
  const failure = lines.find((l) => l.includes('"msg":"request failed"'))
  assert.ok(failure?.includes(`lookup failed for ${key.slice(0, 12)}…`), failure)
  assert.deepEqual(
    lines.filter((l) => holdsSecret(l)),
    [],
  )
  const access = lines.map((l) => JSON.parse(l) as { url?: string }).filter((l) => l.url !== undefined)
  assert.equal(access[0]!.url, `/v1/pets?${key.slice(0, 12)}…=1`)
})

test('npm run logs shows the service log readably: the time (UTC), the level by name, one line per entry', async (t) => {
  const dir = mkdtempSync(join(os.tmpdir(), 'logs-script-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'service.log')
  const log = createLogger({ logLevel: 'info', logFile: file })
  infoLines.get(log)!('"reqId":"r-1","status":429,"ip":"203.0.113.7","keyId":"key_abc"', '"request"')
  log.warn({ ip: '203.0.113.7', seconds: 60 }, 'temporary ban started')
  await new Promise<void>((resolve) => log.flush(() => resolve()))
  const written = readFileSync(file, 'utf8')
  const [access, ban] = written
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { time: string })
  const shown = (iso: string) => iso.replace('T', ' ').replace('Z', '')
  const run = spawnSync('npm', ['run', '--silent', 'logs'], { cwd: ROOT, input: written, encoding: 'utf8' })
  assert.equal(run.status, 0, run.stderr)
  assert.equal(
    run.stdout,
    `[${shown(access!.time)}] INFO (${process.pid}): request {"reqId":"r-1","status":429,"ip":"203.0.113.7","keyId":"key_abc"}\n` +
      `[${shown(ban!.time)}] WARN (${process.pid}): temporary ban started {"ip":"203.0.113.7","seconds":60}\n`,
  )
})
