/**
 * `animal-store webhooks` as a process, on one SQLite file: create (the secret printed this once;
 * a private destination refused naming --url, unless WEBHOOK_ALLOW_PRIVATE_NETWORKS=true), list,
 * show (--json: what the admin API answers for the same endpoint, the server reading the same
 * file), update (--disable, --enable), rotate-secret (the new secret once, the old one kept to sign
 * until its time), delete (then an unknown id, pointing at the list); every change on the audit log
 * under the OS user, never a secret.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import Database from 'better-sqlite3'
import { bearer, request, runCli, startServer, useTempDir } from '../helpers/process.js'

type Json = Record<string, any>

test('webhooks create, list, show, update, rotate-secret and delete from the command line', { timeout: 180_000 }, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const run = (args: string[], env: Record<string, string> = {}) => runCli(args, { db, env })
  const json = async (...args: string[]): Promise<Json> => {
    const r = await run([...args, '--json'])
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`)
    return JSON.parse(r.stdout)
  }
  const refused = async (args: string[], line: RegExp, help?: string) => {
    const r = await run(args)
    assert.equal(r.code, 2, `${args.join(' ')}: exit 2 (${r.stdout}${r.stderr})`)
    assert.equal(r.stdout, '')
    const [first, second, ...rest] = r.stderr.split('\n')
    assert.match(first!, line)
    if (help === undefined) assert.deepEqual([second, ...rest], [''])
    else assert.deepEqual([second, ...rest], [`see: node dist/cli.js ${help} --help`, ''])
  }

  // Refused before anything is written: a private destination (each spelling is unit-tested), an unknown type.
  await refused(
    ['webhooks', 'create', '--url', 'https://127.0.0.1/hook', '--events', '*'],
    /^animal-store: --url must not point at a loopback address: 127\.0\.0\.1 \(allowed only with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true\)$/,
    'webhooks create',
  )
  await refused(
    ['webhooks', 'create', '--url', 'http://93.184.215.14/hook', '--events', '*'],
    /^animal-store: --url must use https/,
    'webhooks create',
  )
  await refused(
    ['webhooks', 'create', '--url', 'https://93.184.215.14/hook', '--events', 'order.placed,order.shipped'],
    /^animal-store: --events: unknown event type "order\.shipped"/,
    'webhooks create',
  )
  await refused(
    ['webhooks', 'create', '--url', 'https://93.184.215.14/hook'],
    /^animal-store: webhooks create needs --events/,
    'webhooks create',
  )
  assert.deepEqual(await json('webhooks', 'list'), { data: [], nextAfter: null })

  // Create, as text: the secret once, then the endpoint.
  const made = await run(['webhooks', 'create', '--url', 'https://93.184.215.14/hook', '--events', 'order.expired,order.placed'])
  assert.equal(made.code, 0, made.stderr)
  const secret = /^ {2}(whsec_[A-Za-z0-9+/]{43}=)$/m.exec(made.stdout)?.[1]
  assert.ok(secret, made.stdout)
  const id = /^Created webhook endpoint (we_[0-9A-Za-z]{16})\.$/m.exec(made.stdout)?.[1]
  assert.ok(id, made.stdout)
  assert.match(made.stdout, /This is the only time its secret is shown/)
  assert.match(made.stdout, /^Events: +order\.placed, order\.expired$/m)

  // Of a customer, as JSON: the admin API's {"secret","endpoint"}.
  const customer = await json('customers', 'create', '--name', 'Acme', '--plan', 'pro')
  const own = await json('webhooks', 'create', '--url', 'https://93.184.215.14/acme', '--events', '*', '--customer', customer.id)
  assert.match(own.secret, /^whsec_/)
  assert.deepEqual([own.endpoint.customerId, own.endpoint.events, own.endpoint.enabled], [customer.id, ['*'], true])
  await refused(
    ['webhooks', 'create', '--url', 'https://93.184.215.14/x', '--events', '*', '--customer', 'cus_0000000000000000'],
    /^animal-store: --customer: no customer with id cus_0000000000000000$/,
    'webhooks create',
  )

  // Development: http on loopback, with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true.
  const local = await run(['webhooks', 'create', '--url', 'http://127.0.0.1:9/hook', '--events', '*', '--json'], {
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  })
  assert.equal(local.code, 0, local.stderr)
  const localId = JSON.parse(local.stdout).endpoint.id as string

  // List and show: never a secret; show --json is the admin API's answer for the same endpoint.
  const listed = await run(['webhooks', 'list'])
  assert.equal(listed.code, 0, listed.stderr)
  assert.match(listed.stdout, /^ID +STATE +CUSTOMER +EVENTS +URL$/m)
  assert.ok(!listed.stdout.includes('whsec_'))
  assert.equal((await json('webhooks', 'list')).data.length, 3)
  assert.deepEqual(
    (await json('webhooks', 'list', '--customer', customer.id)).data.map((e: Json) => e.id),
    [own.endpoint.id],
  )
  const shown = await json('webhooks', 'show', id)
  assert.ok(!JSON.stringify(shown).includes('whsec_'))
  const { token } = await json('admin-tokens', 'create', '--name', 'ops')
  const server = await startServer(t, { dir, db })
  const answered = await request(`${server.adminUrl}/admin/v1/webhook-endpoints/${id}`, { headers: bearer(token) })
  assert.equal(answered.status, 200, answered.text)
  assert.deepEqual(shown, answered.body)

  // Update: disabled by the operator, then enabled again afresh.
  const disabled = await json('webhooks', 'update', id, '--disable', '--description', 'paused for the move')
  assert.deepEqual([disabled.enabled, disabled.disabledReason, disabled.description], [false, 'manual', 'paused for the move'])
  assert.deepEqual(
    (await json('webhooks', 'list', '--state', 'disabled')).data.map((e: Json) => e.id),
    [id],
  )
  const enabled = await json('webhooks', 'update', id, '--enable', '--description', 'none')
  assert.deepEqual([enabled.enabled, enabled.disabledReason, enabled.description], [true, null, null])
  await refused(['webhooks', 'update', id, '--enable', '--disable'], /--enable or --disable, not both/, 'webhooks update')
  await refused(['webhooks', 'update', id], /needs at least one of/, 'webhooks update')

  // Rotate: a new secret this once; the old one signs beside it for the time asked.
  const rotated = await json('webhooks', 'rotate-secret', id, '--expires-in', '60')
  assert.match(rotated.secret, /^whsec_/)
  assert.notEqual(rotated.secret, secret)
  assert.ok(rotated.endpoint.previousSecretExpiresAt !== null)
  await refused(
    ['webhooks', 'rotate-secret', id, '--expires-in', '604801'],
    /--expires-in must be an integer from 0 to 604800/,
    'webhooks rotate-secret',
  )
  const text = await run(['webhooks', 'rotate-secret', localId])
  assert.equal(text.code, 0, text.stderr)
  assert.match(text.stdout, /This is the only time the new secret is shown/)
  assert.match(text.stdout, /^Previous secret: signs until \d{4}-/m)

  // Delete, then the id is unknown: the list shows the ids.
  const deleted = await run(['webhooks', 'delete', localId])
  assert.deepEqual([deleted.code, deleted.stdout], [0, `Deleted webhook endpoint ${localId}.\n`])
  await refused(
    ['webhooks', 'delete', localId],
    new RegExp(`^animal-store: no webhook endpoint with id ${localId} \\(node dist/cli\\.js webhooks list shows the ids\\)$`),
  )

  // The store: the old secret kept beside the new one; the audit log by the OS user, without a secret.
  const store = new Database(db, { readonly: true })
  t.after(() => store.close())
  const row = store.prepare('SELECT secret, previous_secret FROM webhook_endpoints WHERE id = ?').get(id) as Json
  assert.deepEqual([row.secret, row.previous_secret], [rotated.secret, secret])
  const entries = store
    .prepare("SELECT actor_type, action FROM audit_log WHERE action LIKE 'webhook_endpoint.%' ORDER BY seq")
    .all() as Json[]
  assert.deepEqual(
    entries.map((e) => `${e.actor_type} ${e.action}`),
    [
      'cli webhook_endpoint.create',
      'cli webhook_endpoint.create',
      'cli webhook_endpoint.create',
      // The server's read, by the admin token; the CLI's reads are not on record.
      'admin_token webhook_endpoint.read',
      'cli webhook_endpoint.update',
      'cli webhook_endpoint.update',
      'cli webhook_endpoint.rotate_secret',
      'cli webhook_endpoint.rotate_secret',
      'cli webhook_endpoint.delete',
    ],
  )
  assert.ok(!JSON.stringify(store.prepare('SELECT * FROM audit_log').all()).includes('whsec_'))
})
