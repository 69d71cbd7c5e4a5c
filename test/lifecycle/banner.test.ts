import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { ConfigSource } from '../../src/config/config-file.js'
import { cliCommand, configurationLines, shellWord } from '../../src/lifecycle/banner.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
/** The CLI as a server run from source (as these tests are) names it in the project directory. */
const CLI_FROM_SOURCE = 'node --import tsx src/cli.ts'

const source = (over: Partial<ConfigSource> = {}): ConfigSource => ({ file: '.env', named: undefined, environment: {}, ...over })

test('a server configured by .env prints the plain CLI command: the CLI reads the same file', () => {
  assert.equal(cliCommand(source(), ROOT), CLI_FROM_SOURCE)
  assert.equal(cliCommand(source({ file: undefined }), ROOT), CLI_FROM_SOURCE, 'nor with no file at all')
})

test('a variable the CLI reads that came from the environment is repeated before the command; one it does not read is not', () => {
  const env = { DATABASE_URL: '/srv/animal store/x.db', ANIMAL_STORE_ENV: 'staging', PORT: '9000', LOG_FILE: '/var/log/as.log' }
  assert.equal(
    cliCommand(source({ environment: env }), ROOT),
    `ANIMAL_STORE_ENV=staging DATABASE_URL='/srv/animal store/x.db' ${CLI_FROM_SOURCE}`,
  )
})

test('a named config file is named to the CLI too; off as well, so that a .env there is not read by the CLI alone', () => {
  assert.equal(cliCommand(source({ file: 'prod.env', named: 'prod.env' }), ROOT), `${CLI_FROM_SOURCE} --config-file prod.env`)
  assert.equal(cliCommand(source({ file: undefined, named: 'off' }), ROOT), `${CLI_FROM_SOURCE} --config-file off`)
})

test('outside the project directory the command names the CLI by its absolute path', () => {
  const command = cliCommand(source(), tmpdir())
  assert.equal(command, `node --import ${fileURLToPath(import.meta.resolve('tsx'))} ${join(ROOT, 'src', 'cli.ts')}`)
})

test('a password is never printed: the command takes the value from the shell, and stops where the shell has none', () => {
  const url = 'postgres://app:s3cret@db:5432/store'
  const command = cliCommand(source({ file: undefined, environment: { DATABASE_URL: url, REDIS_URL: 'redis://h:6379' } }), ROOT)
  assert.doesNotMatch(command, /s3cret/)
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell's parameter expansion, not a template
  const assignment = 'DATABASE_URL="${DATABASE_URL:?export it or put it in .env}"'
  assert.equal(command, `${assignment} REDIS_URL=redis://h:6379 ${CLI_FROM_SOURCE}`)

  const shell = (env: Record<string, string>) =>
    spawnSync('sh', ['-c', `${assignment} printenv DATABASE_URL`], { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8' })
  const exported = shell({ DATABASE_URL: url })
  assert.deepEqual([exported.status, exported.stdout], [0, `${url}\n`], 'the exported value')
  const missing = shell({})
  assert.notEqual(missing.status, 0, 'no silent fallback to the default SQLite file')
  assert.match(missing.stderr, /DATABASE_URL: export it or put it in \.env/)

  const lines = configurationLines({ logFile: undefined }, source({ file: undefined, environment: { DATABASE_URL: url } }))
  assert.ok(
    lines.some((line) => /DATABASE_URL \(with a password\) came from the environment: .* put it in \.env/.test(line)),
    lines.join('\n'),
  )
})

test('the banner says where the configuration came from and where the log goes', () => {
  const cwd = '/srv/as'
  assert.deepEqual(configurationLines({ logFile: undefined }, source(), cwd), [
    'Config:      .env (the environment overrides it; the CLI reads both)',
    'Log:         stdout, JSON lines (LOG_FILE=path writes them to a file instead)',
  ])
  assert.deepEqual(configurationLines({ logFile: 'logs/as.log' }, source({ file: undefined, named: 'off' }), cwd), [
    'Config:      environment only (config file off)',
    'Log:         /srv/as/logs/as.log (JSON lines)',
  ])
})

test('shellWord quotes only what a shell would split or expand', () => {
  assert.equal(shellWord('postgres://u@h:5432/db'), 'postgres://u@h:5432/db')
  assert.equal(shellWord('postgres://u@h/db?sslmode=require'), "'postgres://u@h/db?sslmode=require'", 'a glob character')
  assert.equal(shellWord('/srv/x.db'), '/srv/x.db')
  assert.equal(shellWord("it's"), `'it'\\''s'`)
  assert.equal(spawnSync('sh', ['-c', `printf %s ${shellWord("a b'$HOME")}`], { encoding: 'utf8' }).stdout, "a b'$HOME")
})
