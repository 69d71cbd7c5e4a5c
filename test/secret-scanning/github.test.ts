/**
 * POST /v1/secret-scanning/github (src/secret-scanning/): GitHub's secret scanning partner
 * program, with a key pair made here standing for GitHub's. A signed report revokes or flags each
 * token that is one of our keys, audited by secret_scanner/github with the URL and never the key;
 * a missing or wrong signature or an unknown key identifier changes nothing; unconfigured, 404.
 */
import assert from 'node:assert/strict'
import { createSign, generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { type AdminTestApp, buildAdminTestApp } from '../admin/helpers.js'
import { bearer } from '../helpers/app.js'

const dir = mkdtempSync(join(tmpdir(), 'secret-scanning-'))
after(() => rmSync(dir, { recursive: true, force: true }))

const github = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
const KEY_ID = 'f9525bf080f75b3506ca1ead061add62b8633a346606dc5fe544e29231c6ee0d'
const keysFile = join(dir, 'github-keys.json')
writeFileSync(
  keysFile,
  JSON.stringify({
    public_keys: [{ key_identifier: KEY_ID, key: github.publicKey.export({ type: 'spki', format: 'pem' }), is_current: true }],
  }),
)

const sign = (body: string, key = github.privateKey) => createSign('SHA256').update(body).sign(key, 'base64')
const URL_FOUND = 'https://github.com/octocat/Hello-World/blob/1234/config.env'

async function report(app: AdminTestApp, tokens: string[], headers?: Record<string, string>) {
  const body = JSON.stringify(tokens.map((token) => ({ token, type: 'animal_store_api_key', url: URL_FOUND, source: 'content' })))
  return app.api.inject({
    method: 'POST',
    url: '/v1/secret-scanning/github',
    headers: {
      'content-type': 'application/json',
      ...(headers ?? { 'github-public-key-identifier': KEY_ID, 'github-public-key-signature': sign(body) }),
    },
    payload: body,
  })
}

const newKey = async (app: AdminTestApp) => (await app.call('POST', '/admin/v1/keys', { plan: 'free', name: 'leaked' })).json()
const entries = async (app: AdminTestApp, action: string) => (await app.call('GET', `/admin/v1/audit-log?action=${action}`)).json().data

test('a signed report revokes the key (SECRET_SCANNING_ACTION=revoke, the default): labels, state, audit entries with the URL, never the key', async (t) => {
  const app = await buildAdminTestApp(t, { env: { SECRET_SCANNING_PUBLIC_KEYS: keysFile } })
  const { key, apiKey } = await newKey(app)
  const madeUp = 'as_live_' + 'x'.repeat(38)
  const res = await report(app, [key, madeUp, 'ghp_not_ours'])
  assert.equal(res.statusCode, 200, res.body)
  assert.deepEqual(res.json(), [
    { token_raw: key, token_type: 'animal_store_api_key', label: 'true_positive' },
    { token_raw: madeUp, token_type: 'animal_store_api_key', label: 'false_positive' },
    { token_raw: 'ghp_not_ours', token_type: 'animal_store_api_key', label: 'false_positive' },
  ])
  assert.equal((await app.call('GET', `/admin/v1/keys/${apiKey.id}`)).json().state, 'revoked')
  assert.equal((await app.api.inject({ url: '/v1/pets', headers: bearer(key) })).statusCode, 401, 'refused at once')
  const [leak] = await entries(app, 'key.leak_reported')
  assert.deepEqual(
    [leak.actor, leak.keyId, leak.details.url, leak.details.action],
    [{ type: 'secret_scanner', id: 'github' }, apiKey.id, URL_FOUND, 'revoke'],
  )
  const [revoke] = await entries(app, 'key.revoke')
  assert.deepEqual([revoke.actor.type, revoke.keyId, revoke.details.leakUrl], ['secret_scanner', apiKey.id, URL_FOUND])
  const audit = JSON.stringify((await app.call('GET', '/admin/v1/audit-log')).json())
  assert.ok(!audit.includes(key.slice(12)), 'the key is in no audit entry')
})

test('SECRET_SCANNING_ACTION=flag records the report and leaves the key working', async (t) => {
  const app = await buildAdminTestApp(t, { env: { SECRET_SCANNING_PUBLIC_KEYS: keysFile, SECRET_SCANNING_ACTION: 'flag' } })
  const { key, apiKey } = await newKey(app)
  const res = await report(app, [key])
  assert.equal(res.json()[0].label, 'true_positive')
  assert.equal((await app.call('GET', `/admin/v1/keys/${apiKey.id}`)).json().state, 'active')
  const [leak] = await entries(app, 'key.leak_reported')
  assert.deepEqual([leak.keyId, leak.details.action, leak.details.state, leak.details.source], [apiKey.id, 'flag', 'active', 'content'])
  assert.deepEqual(await entries(app, 'key.revoke'), [])
})

test('a missing or wrong signature, or an unknown key identifier, is 401 and changes nothing', async (t) => {
  const app = await buildAdminTestApp(t, { env: { SECRET_SCANNING_PUBLIC_KEYS: keysFile } })
  const { key, apiKey } = await newKey(app)
  const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  const body = JSON.stringify([{ token: key, type: 't', url: URL_FOUND }])
  const cases: Record<string, string>[] = [
    {},
    { 'github-public-key-identifier': KEY_ID },
    { 'github-public-key-identifier': KEY_ID, 'github-public-key-signature': sign(body, other.privateKey) },
    { 'github-public-key-identifier': KEY_ID, 'github-public-key-signature': 'bm90IGEgc2lnbmF0dXJl' },
    { 'github-public-key-identifier': 'unknown', 'github-public-key-signature': sign(body) },
    // Signed, but over another body than the one sent.
    { 'github-public-key-identifier': KEY_ID, 'github-public-key-signature': sign(`${body} `) },
  ]
  for (const headers of cases) {
    const res = await report(app, [key], headers)
    assert.equal(res.statusCode, 401, res.body)
    assert.equal(res.json().code, 'unauthorized')
  }
  assert.equal((await app.call('GET', `/admin/v1/keys/${apiKey.id}`)).json().state, 'active')
  assert.deepEqual(await entries(app, 'key.leak_reported'), [])
})

test('without SECRET_SCANNING_PUBLIC_KEYS the path does not exist: 404', async (t) => {
  const app = await buildAdminTestApp(t)
  const { key } = await newKey(app)
  const res = await report(app, [key])
  assert.equal(res.statusCode, 404, res.body)
})
