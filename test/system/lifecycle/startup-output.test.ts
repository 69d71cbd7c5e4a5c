/**
 * What an operator sees when the server starts: on every start, where the docs and the OpenAPI
 * document are and how to get a key; on a first start, the key once with its id; a Redis that is
 * unreachable at start is said loudly (an error line in the log, a note on the terminal) and
 * `/readyz` reports it as degraded. Without LOG_FILE the log shares stdout: the banner says so and comes last.
 */
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { type AddressInfo, createServer } from 'node:net'
import { join } from 'node:path'
import { test } from 'node:test'
import {
  freePort,
  HANG_MS,
  request,
  runCli,
  runServerToExit,
  type ServerProcess,
  sleep,
  startServer,
  useTempDir,
  waitFor,
} from '../helpers/process.js'

const ANY_KEY = /as_(?:live|test)_[0-9A-Za-z]{38}/g

/** stdout once the banner is complete: it is written just after listening, so /healthz may answer first. */
async function bannerOf(server: ServerProcess): Promise<string> {
  const deadline = performance.now() + 10_000
  while (!/New API key: .*\n/.test(server.stdout()) && performance.now() < deadline) await sleep(20)
  await sleep(50) // one write, but a pipe may deliver it in two reads: the note lines come last
  return server.stdout()
}

test('first start shows the key with its id; every start shows the docs, the OpenAPI document and how to get a key', {
  timeout: 60_000,
}, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')

  const first = await startServer(t, { dir, db, env: { BOOTSTRAP_KEY: 'true' } })
  const keys = (JSON.parse((await runCli(['keys', 'list', '--json'], { db })).stdout) as { data: Array<{ id: string }> }).data
  assert.equal(keys.length, 1)
  assert.equal(first.stdout().match(ANY_KEY)?.length, 2, `the key, shown once (and in the curl example):\n${first.stdout()}`)
  assert.ok(first.stdout().includes(`(id ${keys[0]!.id})`), `the first-start text names the key id:\n${first.stdout()}`)
  assert.ok(first.stdout().includes(`keys revoke ${keys[0]!.id}`), 'and how to revoke it')
  // Issue 32: the key comes last, after the banner, so that no log line scrolls it away.
  const shown = await bannerOf(first)
  const after = shown.slice(shown.indexOf('shown only this once'))
  assert.ok(shown.indexOf('listening on') < shown.indexOf('shown only this once'), `the key after the banner:\n${shown}`)
  assert.doesNotMatch(after, /"level":/, `no log line between the key and the end of the start:\n${shown}`)
  assert.equal((await first.stop()).code, 0)

  const again = await startServer(t, { dir, db, env: { BOOTSTRAP_KEY: 'true' } })
  const out = await bannerOf(again)
  assert.doesNotMatch(out, ANY_KEY, 'no key on a restart')
  assert.ok(out.includes(`Animal Store API listening on ${again.url}\n`), `the address it listens on:\n${out}`)
  assert.match(out, /keys create --plan free --name NAME/, 'how to get a key')
  for (const [label, path] of [
    ['API docs', '/docs'],
    ['OpenAPI', '/v1/openapi.json'],
  ] as const) {
    const shown = new RegExp(`${label}: +(\\S+)`).exec(out)?.[1]
    assert.equal(shown, `${again.url}${path}`, `${label} address on stdout:\n${out}`)
    const res = await request(shown)
    assert.equal(res.status, 200, `${shown} answers`)
  }
  assert.equal((await again.stop()).code, 0)
})

test('HOST=0.0.0.0 and Redis unreachable at start: a reachable address, an error line naming the URL, readyz degraded', {
  timeout: 60_000,
}, async (t) => {
  const dir = await useTempDir(t)
  const redisPort = await freePort() // nothing listens there
  const redisUrl = `redis://127.0.0.1:${redisPort}`
  const server = await startServer(t, { dir, env: { HOST: '0.0.0.0', REDIS_URL: redisUrl } })
  const out = await bannerOf(server)
  assert.ok(out.includes(`listening on http://127.0.0.1:${server.port} (all interfaces: HOST=0.0.0.0)`), out)
  assert.ok(
    out.includes(
      `Degraded:    Redis unreachable at ${redisUrl}; rate limits are per instance until it returns (REDIS_FAILURE_POLICY=open)`,
    ),
    out,
  )

  const ready = await request(`${server.url}/readyz`)
  assert.equal(ready.status, 200, 'fail-open: still ready for the load balancer')
  assert.equal((ready.body as { status: string }).status, 'degraded')
  assert.equal((await request(`${server.url}/`)).status, 200)
  assert.equal((await server.stop()).code, 0)

  const lines = (await readFile(server.logFile, 'utf8'))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { level: string; msg: string })
  const errors = lines.filter((l) => l.level === 'error' || l.level === 'fatal')
  assert.equal(errors.length, 1, `one error line: ${JSON.stringify(errors)}`)
  assert.ok(errors[0]!.msg.includes(`Redis unreachable at ${redisUrl}`), errors[0]!.msg)
  assert.ok(errors[0]!.msg.includes('REDIS_FAILURE_POLICY=open'))
  const listening = lines.findIndex((l) => l.msg.startsWith('Server listening'))
  assert.ok(lines.indexOf(errors[0]!) < listening, 'logged at start, before the server listens')
})

test('without LOG_FILE the log shares stdout: the banner says so, and ends the start-up output', { timeout: 60_000 }, async (t) => {
  const dir = await useTempDir(t)
  const server = await startServer(t, { dir, env: { LOG_FILE: undefined } })
  // Both listeners log "Server listening at …": wait for both lines, wherever they land.
  const listeningLines = () => server.stdout().match(/^\{.*"msg":"Server listening at .*$/gm) ?? []
  assert.ok(await waitFor(() => listeningLines().length === 2, HANG_MS), server.stdout())

  const out = server.stdout()
  const lines = out.split('\n')
  const banner = lines.findIndex((line) => line.startsWith('Animal Store API listening on '))
  assert.match(out, /^ {2}Log: {9}stdout, JSON lines \(LOG_FILE=path writes them to a file instead\)$/m)
  for (const line of listeningLines()) {
    assert.ok(lines.indexOf(line) < banner, `the log's start-up lines come before the banner, not after it:\n${out}`)
  }
  assert.equal((await server.stop()).code, 0)
})

test('a first start that fails after creating its key still shows the key (no later start makes another)', {
  timeout: 60_000,
}, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  // The admin listener's port is taken: the start fails after the key was made and the main listener bound.
  const taken = createServer()
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => taken.close(() => resolve())))
  const port = (taken.address() as AddressInfo).port
  const failed = await runServerToExit({ dir, db, env: { BOOTSTRAP_KEY: 'true', ADMIN_PORT: String(port) } })
  assert.notEqual(failed.code, 0, failed.stderr)
  assert.match(failed.stderr, /EADDRINUSE|already in use/, failed.stderr)
  const keys = (JSON.parse((await runCli(['keys', 'list', '--json'], { db })).stdout) as { data: Array<{ id: string }> }).data
  assert.equal(keys.length, 1, 'the key was created')
  assert.ok(failed.stdout.includes(`(id ${keys[0]!.id})`), `the failed start showed it:\n${failed.stdout}`)
  assert.equal(failed.stdout.match(ANY_KEY)?.length, 2, failed.stdout)
})
