/**
 * GET /admin/v1/audit-log filters and order through app.inject: the query parameters, their 400s,
 * Link rel="next" in both orders, and the entry the listing leaves. What each filter selects is the
 * storage contract's (test/storage/audit-repository.test.ts); here, that the API passes it through.
 */
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { buildAdminSuiteApp } from '../helpers.js'

interface Entry {
  seq: number
  action: string
  keyId: string | null
  actor: { type: string; id: string }
  details: Record<string, unknown>
  requestId: string | null
}

describe('admin API: audit log filters and order', () => {
  let keyId: string
  const t = buildAdminSuiteApp()
  before(async () => {
    const created = await t.call('POST', '/admin/v1/keys', { plan: 'pro', name: 'filtered' })
    keyId = created.json().apiKey.id
    await t.call('GET', `/admin/v1/keys/${keyId}`)
    await t.call('PATCH', `/admin/v1/keys/${keyId}`, { name: 'filtered 2' })
    await t.call('GET', `/admin/v1/keys/${keyId}/usage`)
    await t.call('PATCH', `/admin/v1/keys/${keyId}`, { name: 'filtered 3' })
  })

  const list = async (query: string) => {
    const res = await t.call('GET', `/admin/v1/audit-log?${query}`)
    assert.equal(res.statusCode, 200, res.body)
    return { entries: res.json().data as Entry[], link: res.headers.link as string | undefined, nextAfter: res.json().nextAfter }
  }

  test("an admin token's entries name it: actor.name beside its id", async () => {
    const { entries } = await list(`keyId=${keyId}&limit=1`)
    assert.deepEqual(entries[0]?.actor, { type: 'admin_token', id: t.tokenId, name: 'test token' })
  })

  test('kind=change hides the reads; order=desc puts the latest change first', async () => {
    assert.deepEqual(
      (await list(`keyId=${keyId}`)).entries.map((e) => e.action),
      ['key.create', 'key.read', 'key.update', 'key.usage', 'key.update'],
    )
    const changes = (await list(`keyId=${keyId}&kind=change&order=desc`)).entries
    assert.deepEqual(
      changes.map((e) => e.action),
      ['key.update', 'key.update', 'key.create'],
    )
    assert.equal(changes[0]!.details.name, 'filtered 3', 'the latest update first')
    assert.deepEqual(
      (await list(`keyId=${keyId}&kind=read`)).entries.map((e) => e.action),
      ['key.read', 'key.usage'],
    )
  })

  test('action, actorType and actor select entries; an actor with no entry lists none', async () => {
    assert.deepEqual(
      (await list(`action=key.update&keyId=${keyId}`)).entries.map((e) => e.action),
      ['key.update', 'key.update'],
    )
    const mine = (await list(`actorType=admin_token&actor=${t.tokenId}&limit=100`)).entries
    assert.ok(mine.length >= 5)
    for (const e of mine) assert.deepEqual(e.actor, { type: 'admin_token', id: t.tokenId, name: 'test token' })
    assert.deepEqual((await list('actorType=cli')).entries, [])
    assert.deepEqual((await list('actor=adm_nobody')).entries, [])
  })

  test('from and to bound the time: from inclusive, to exclusive', async () => {
    const [first] = (await list(`keyId=${keyId}&limit=1`)).entries as Array<Entry & { at: string }>
    const at = first!.at
    assert.equal((await list(`keyId=${keyId}&to=${encodeURIComponent(at)}`)).entries.length, 0)
    assert.ok((await list(`keyId=${keyId}&from=${encodeURIComponent(at)}`)).entries.length >= 1)
  })

  test('Link rel="next" keeps the filters and the order, in both orders, and reaches every entry once', async () => {
    for (const order of ['asc', 'desc']) {
      const seen: number[] = []
      let url: string | undefined = `/admin/v1/audit-log?keyId=${keyId}&kind=change&order=${order}&limit=2`
      const first = await t.call('GET', url)
      assert.equal(
        first.headers.link,
        `</admin/v1/audit-log?limit=2&order=${order}&keyId=${keyId}&kind=change&after=${first.json().nextAfter}>; rel="next"`,
      )
      while (url !== undefined) {
        const res = await t.call('GET', url)
        seen.push(...(res.json().data as Entry[]).map((e) => e.seq))
        url = (res.headers.link as string | undefined)?.match(/^<([^>]+)>; rel="next"$/)?.[1]
      }
      const all = (await list(`keyId=${keyId}&kind=change&limit=100`)).entries.map((e) => e.seq)
      assert.deepEqual(seen, order === 'asc' ? all : [...all].reverse(), order)
    }
  })

  test('a page whose walk examined its 1,000 entries without filling up is short and links on to where it stopped', async () => {
    const actor = { type: 'admin_token' as const, id: 'adm_walked' }
    const at = Date.parse('2030-01-01T00:00:00Z')
    for (let i = 0; i < 1_000; i++)
      await t.storage.audit.write({ audit: [{ at, actor, action: 'key.read', keyId: null, details: {}, requestId: null }] })
    await t.storage.audit.write({ audit: [{ at, actor, action: 'key.create', keyId: null, details: { last: true }, requestId: null }] })
    const first = await list('actor=adm_walked&action=key.create')
    assert.deepEqual(first.entries, [], 'the first 1,000 entries of the actor hold no key.create')
    assert.ok(first.nextAfter !== null)
    assert.match(first.link ?? '', new RegExp(`after=${first.nextAfter}>; rel="next"$`))
    const second = await list(`actor=adm_walked&action=key.create&after=${first.nextAfter}`)
    assert.deepEqual(
      second.entries.map((e) => e.details),
      [{ last: true }],
    )
    assert.equal(second.nextAfter, null)
  })

  test('bad values: 400 naming the field', async () => {
    const cases: Array<[string, RegExp]> = [
      ['action=key.delete', /action/],
      ['kind=writes', /kind/],
      ['order=newest', /order/],
      ['actorType=robot', /actorType/],
      ['actor=', /actor/],
      ['from=yesterday', /^from /],
      ['to=2030-01-01', /^to /],
      ['from=2030-01-02T00:00:00Z&to=2030-01-01T00:00:00Z', /^from /],
      ['action=key.create&action=key.update', /action/],
    ]
    for (const [query, message] of cases) {
      const res = await t.call('GET', `/admin/v1/audit-log?${query}`)
      assert.equal(res.statusCode, 400, `${query}: ${res.body}`)
      assert.equal(res.json().code, 'invalid_request')
      assert.match(res.json().message, message, query)
    }
  })

  test('the listing is on record with its filters, times as RFC 3339', async () => {
    const query = `keyId=${keyId}&kind=change&order=desc&actorType=admin_token&actor=${t.tokenId}&action=key.update&from=2020-01-01T00:00:00Z&to=2099-01-01T00:00:00Z&limit=5`
    await t.call('GET', `/admin/v1/audit-log?${query}`, undefined, { 'x-request-id': 'filtered-read' })
    const entry = (await list('action=audit_log.list&order=desc&limit=100')).entries.find((e) => e.requestId === 'filtered-read')
    assert.deepEqual(entry?.details, {
      limit: 5,
      order: 'desc',
      keyId,
      action: 'key.update',
      actorType: 'admin_token',
      actorId: t.tokenId,
      kind: 'change',
      from: '2020-01-01T00:00:00.000Z',
      to: '2099-01-01T00:00:00.000Z',
    })
  })
})
