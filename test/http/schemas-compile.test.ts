import assert from 'node:assert/strict'
import { generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { buildApp } from '../../src/app.js'
import { DeferredCompilation } from '../../src/http/compile-on-first-use.js'
import { buildTestApp } from '../helpers/app.js'

/*
 * Validators and serializers compile on their first use (src/http/compile-on-first-use.ts), so a
 * schema that cannot compile would fail only on its operation's first request: here every one of
 * both listeners is compiled, the secret-scanning route's included.
 */
test('every validator and serializer of both listeners compiles', async (t) => {
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  const dir = mkdtempSync(join(tmpdir(), 'schemas-compile-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const keysFile = join(dir, 'github-keys.json')
  const key = publicKey.export({ type: 'spki', format: 'pem' })
  writeFileSync(keysFile, JSON.stringify({ public_keys: [{ key_identifier: 'k1', key, is_current: true }] }))
  const { domain } = await buildTestApp(t, { env: { SECRET_SCANNING_PUBLIC_KEYS: keysFile } })
  for (const listener of ['main', 'admin'] as const) {
    const compilation = new DeferredCompilation()
    const app = await buildApp(domain, { listener, compilation })
    t.after(() => app.close())
    await app.ready()
    const compiled = compilation.compileAll()
    // Both listeners have dozens of operations, each with a validator per part and a serializer per answer.
    assert.ok(compiled > 50, `${listener}: only ${compiled} validators and serializers were deferred`)
  }
})

test('a deferred validator refuses and accepts as a compiled one does, and compiles once', async (t) => {
  const { app, key } = await buildTestApp(t)
  const bearer = `Bearer ${await key()}`
  for (let i = 0; i < 2; i++) {
    const bad = await app.inject({ url: '/v1/pets?limit=0', headers: { authorization: bearer } })
    assert.equal(bad.statusCode, 400)
    assert.match(bad.json().message, /limit/)
    const good = await app.inject({ url: '/v1/pets?limit=1', headers: { authorization: bearer } })
    assert.equal(good.statusCode, 200)
  }
})
