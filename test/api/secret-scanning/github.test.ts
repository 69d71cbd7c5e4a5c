/**
 * POST /v1/secret-scanning/github (api/secret-scanning/github.ts, secret-scanning/): GitHub's secret scanning partner
 * program, with a key pair made here standing for GitHub's. A signed report revokes or flags each
 * token that is one of our keys, audited by secret_scanner/github with the URL and never the key;
 * a missing or wrong signature or an unknown key identifier changes nothing, reads nothing of the
 * body and counts against the client address (429, then a ban); a copy of a report is answered as
 * the first was, not acted on again, and counts against the address; unconfigured, 404.
 */
import assert from 'node:assert/strict'
import { createHash, createSign, generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { type AdminTestApp, buildAdminTestApp } from '../../admin/helpers.js'
import { bearer } from '../../helpers/app.js'

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

const reportBody = (tokens: string[], url = URL_FOUND) =>
  JSON.stringify(tokens.map((token) => ({ token, type: 'animal_store_api_key', url, source: 'content' })))
const signed = (body: string) => ({ 'github-public-key-identifier': KEY_ID, 'github-public-key-signature': sign(body) })

/** Posts `body` (signed unless `headers` are given) from `remoteAddress` (app.inject's 127.0.0.1 by default). */
const post = (app: AdminTestApp, body: string, headers: Record<string, string> = signed(body), remoteAddress?: string) =>
  app.api.inject({
    method: 'POST',
    url: '/v1/secret-scanning/github',
    headers: { 'content-type': 'application/json', ...headers },
    payload: body,
    ...(remoteAddress === undefined ? {} : { remoteAddress }),
  })

async function report(app: AdminTestApp, tokens: string[], headers?: Record<string, string>) {
  return post(app, reportBody(tokens), headers)
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

test('nothing of a body is parsed before its signature is verified: a malformed one without a valid signature is 401, never "not valid JSON"', async (t) => {
  const app = await buildAdminTestApp(t, { env: { SECRET_SCANNING_PUBLIC_KEYS: keysFile } })
  const malformed = '[{"token": "as_live_'
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{}, /Github-Public-Key-Identifier and Github-Public-Key-Signature are required/],
    [
      { 'github-public-key-identifier': 'unknown', 'github-public-key-signature': sign(malformed) },
      /names no configured GitHub public key/,
    ],
    [{ 'github-public-key-identifier': KEY_ID, 'github-public-key-signature': 'bm90IGEgc2lnbmF0dXJl' }, /signature is not valid/],
    [signed(`${malformed}]`), /signature is not valid/],
  ]
  for (const [headers, message] of cases) {
    const res = await post(app, malformed, headers)
    assert.equal(res.statusCode, 401, res.body)
    assert.equal(res.json().code, 'unauthorized')
    assert.match(res.json().message, message)
  }
  // Signed, it is read: GitHub's malformed body is a 400 like any other.
  assert.match((await post(app, malformed)).json().message, /not valid JSON/)
})

test('unsigned and badly signed requests count against the client address: 401 for the Free minute, then 429, then a ban; another address and its signed reports are untouched', async (t) => {
  const app = await buildAdminTestApp(t, { env: { SECRET_SCANNING_PUBLIC_KEYS: keysFile } })
  const { key, apiKey } = await newKey(app)
  const attacker = '203.0.113.7'
  const body = reportBody([key])
  const refusals: Record<string, string>[] = [
    {},
    { 'github-public-key-identifier': KEY_ID, 'github-public-key-signature': sign(body.replace('content', 'commit')) },
  ]
  const codes: string[] = []
  for (let i = 0; i < 140 && codes.at(-1) !== 'key_banned'; i++) {
    const res = await post(app, body, refusals[i % 2], attacker)
    codes.push(res.json().code)
    if (i === 0) assert.equal(res.headers['x-ratelimit-remaining'], '59', 'counted as the Free plan counts an address')
  }
  assert.deepEqual(codes.slice(0, 60), Array(60).fill('unauthorized'))
  assert.equal(codes[60], 'rate_limited')
  assert.equal(codes.at(-1), 'key_banned', `the address is banned (${codes.length} requests)`)
  // Refused before its body is read: even a good signature from a banned address is not acted on.
  const banned = await post(app, body, signed(body), attacker)
  assert.equal(banned.statusCode, 429)
  assert.equal((await app.call('GET', `/admin/v1/keys/${apiKey.id}`)).json().state, 'active')
  // GitHub's address is another: its report passes and acts.
  const github = await post(app, body, signed(body), '192.0.2.10')
  assert.equal(github.statusCode, 200, github.body)
  assert.equal(github.json()[0].label, 'true_positive')
  assert.equal((await app.call('GET', `/admin/v1/keys/${apiKey.id}`)).json().state, 'revoked')
})

test('reports GitHub signed are not counted against their address: more than its Free minute all pass', async (t) => {
  const app = await buildAdminTestApp(t, { env: { SECRET_SCANNING_PUBLIC_KEYS: keysFile } })
  for (let i = 0; i < 70; i++) {
    const res = await post(app, reportBody(['as_live_' + 'x'.repeat(38)], `${URL_FOUND}#L${i}`), undefined, '192.0.2.10')
    assert.equal(res.statusCode, 200, `report ${i}: ${res.body}`)
  }
})

test('a report is acted on once: its copies get the first answer, with no second audit entry or revocation', async (t) => {
  for (const action of ['revoke', 'flag']) {
    const app = await buildAdminTestApp(t, { env: { SECRET_SCANNING_PUBLIC_KEYS: keysFile, SECRET_SCANNING_ACTION: action } })
    const { key } = await newKey(app)
    const body = reportBody([key, 'as_live_' + 'x'.repeat(38)])
    const first = await post(app, body)
    assert.equal(first.statusCode, 200, first.body)
    for (let i = 0; i < 5; i++) {
      const copy = await post(app, body)
      assert.equal(copy.statusCode, 200, copy.body)
      assert.deepEqual(copy.json(), first.json(), 'the same labels, in order')
    }
    assert.equal((await entries(app, 'key.leak_reported')).length, 1, action)
    assert.equal((await entries(app, 'key.revoke')).length, action === 'revoke' ? 1 : 0, action)
    // Other bytes are another report (found elsewhere): acted on.
    assert.equal((await post(app, reportBody([key], `${URL_FOUND}#L2`))).statusCode, 200)
    assert.equal((await entries(app, 'key.leak_reported')).length, 2, action)
  }
})

test('copies of a report count against the address: a replay flood gets 429, then a ban', async (t) => {
  const app = await buildAdminTestApp(t, { env: { SECRET_SCANNING_PUBLIC_KEYS: keysFile } })
  const { key } = await newKey(app)
  const body = reportBody([key])
  const statuses: number[] = []
  for (let i = 0; i < 140 && statuses.at(-1) !== 429; i++) statuses.push((await post(app, body, signed(body), '203.0.113.8')).statusCode)
  // The first is acted on and not counted; 60 copies fill the address's minute.
  assert.deepEqual(statuses, [...Array(61).fill(200), 429])
  assert.equal((await entries(app, 'key.leak_reported')).length, 1)
})

test('a report whose action failed is acted on by its next copy; a copy while it is acted on is 409, until the claim is a minute old', async (t) => {
  const app = await buildAdminTestApp(t, { env: { SECRET_SCANNING_PUBLIC_KEYS: keysFile } })
  const { key, apiKey } = await newKey(app)
  const body = reportBody([key])
  const service = app.domain.services.keys
  const reportLeak = service.reportLeak
  service.reportLeak = async () => {
    throw new Error('the store went away')
  }
  try {
    assert.equal((await post(app, body)).statusCode, 500)
  } finally {
    service.reportLeak = reportLeak
  }
  const retried = await post(app, body)
  assert.equal(retried.statusCode, 200, retried.body)
  assert.equal((await app.call('GET', `/admin/v1/keys/${apiKey.id}`)).json().state, 'revoked')

  // Another instance claims a report and is still acting on it.
  const other = reportBody([key], `${URL_FOUND}#L3`)
  const hash = createHash('sha256').update(other).digest('hex')
  const now = app.clock.now()
  assert.deepEqual(await app.storage.scanReports.claimReport(hash, now, now - 60_000), { outcome: 'claimed' })
  const meanwhile = await post(app, other)
  assert.equal(meanwhile.statusCode, 409, meanwhile.body)
  assert.equal(meanwhile.headers['retry-after'], '1')
  assert.equal((await entries(app, 'key.leak_reported')).length, 1)
  // That instance died: a minute on, the next copy is acted on.
  app.clock.advance(61_000)
  assert.equal((await post(app, other)).statusCode, 200)
  assert.equal((await entries(app, 'key.leak_reported')).length, 2)
})
