/**
 * The service as a command (tools/service-cli.mjs): the one way the tests, the benchmark and the
 * soak make a key with the CLI, whoever runs it, and how they start the server or the CLI.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { createKeyWithCli, entryArgs } from '../../tools/service-cli.mjs'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const CREATED = { key: 'as_live_secret', apiKey: { id: 'key_1', plan: 'enterprise', prefix: 'as_live_secr', perMinute: 5, perDay: 7 } }

test('createKeyWithCli: keys create with the plan, name and limits, --json; the key with its admin view', async () => {
  const runs: string[][] = []
  const created = await createKeyWithCli(
    async (args) => {
      runs.push(args)
      return { code: 0, stdout: JSON.stringify(CREATED), stderr: '' }
    },
    { plan: 'enterprise', name: 'bench', perMinute: 5, perDay: 7 },
  )
  assert.deepEqual(runs, [['keys', 'create', '--plan', 'enterprise', '--name', 'bench', '--json', '--per-minute', '5', '--per-day', '7']])
  assert.deepEqual(created, { ...CREATED.apiKey, key: 'as_live_secret' })
  await createKeyWithCli(async (args) => {
    runs.push(args)
    return { code: 0, stdout: JSON.stringify(CREATED), stderr: '' }
  })
  assert.deepEqual(runs[1], ['keys', 'create', '--plan', 'free', '--name', 'test', '--json'], 'a Free key named test by default')
})

test('createKeyWithCli: a CLI that fails is an error with what it said', async () => {
  await assert.rejects(
    createKeyWithCli(async () => ({ code: 2, stdout: '', stderr: '--plan: gold is not a plan\n' })),
    /^Error: keys create failed \(2\): --plan: gold is not a plan$/,
  )
  await assert.rejects(
    createKeyWithCli(async () => ({ code: null, signal: 'SIGKILL', stdout: '', stderr: '' })),
    /keys create failed \(SIGKILL\)/,
  )
})

test('entryArgs: the build by default (or another build), the source through tsx', () => {
  assert.deepEqual(entryArgs('server'), [join(ROOT, 'dist', 'server.js')])
  assert.deepEqual(entryArgs('cli', { dist: '/elsewhere/dist' }), ['/elsewhere/dist/cli.js'])
  const source = entryArgs('cli', { source: true })
  assert.equal(source[0], '--import')
  assert.match(source[1]!, /node_modules\/tsx\//)
  assert.equal(source[2], join(ROOT, 'src', 'cli.ts'))
})
