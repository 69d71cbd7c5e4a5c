import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import { loadConfiguration, takeConfigFileOption } from '../../src/config/config-file.js'
import { ConfigError } from '../../src/shared/startup-error.js'

async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'animal-store-config-file-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  return dir
}

const refusal = (message: RegExp) => (error: unknown) => error instanceof ConfigError && message.test(error.message)

test('.env in the working directory is read, and the environment overrides it', async (t) => {
  const cwd = await tempDir(t)
  await writeFile(
    join(cwd, '.env'),
    '# the database both the server and the CLI use\nDATABASE_URL=/srv/as/store.db\nPORT=9000\nANIMAL_STORE_ENV="staging"\n',
  )
  const { config, source } = loadConfiguration({ cwd, env: { PORT: '9100', PATH: '/usr/bin' } })
  assert.equal(config.databaseUrl, '/srv/as/store.db', 'from the file')
  assert.equal(config.env, 'staging', 'quotes are the file format’s, not the value’s')
  assert.equal(config.port, 9100, 'the environment wins')
  assert.deepEqual(source, { file: '.env', named: undefined, environment: { PORT: '9100' } }, 'only the service’s variables')
})

test('no .env: the environment and the defaults alone, as before', async (t) => {
  const cwd = await tempDir(t)
  const { config, source } = loadConfiguration({ cwd, env: { DATABASE_URL: 'x.db' } })
  assert.equal(config.databaseUrl, 'x.db')
  assert.deepEqual(source, { file: undefined, named: undefined, environment: { DATABASE_URL: 'x.db' } })
})

test('--config-file and ANIMAL_STORE_CONFIG_FILE name another file (--config-file wins); off reads none', async (t) => {
  const cwd = await tempDir(t)
  await writeFile(join(cwd, '.env'), 'PORT=1111\n')
  await writeFile(join(cwd, 'a.env'), 'PORT=2222\n')
  await writeFile(join(cwd, 'b.env'), 'PORT=3333\n')
  assert.equal(loadConfiguration({ cwd, env: { ANIMAL_STORE_CONFIG_FILE: 'a.env' } }).config.port, 2222)
  assert.equal(loadConfiguration({ cwd, configFile: 'b.env', env: { ANIMAL_STORE_CONFIG_FILE: 'a.env' } }).config.port, 3333)
  const off = loadConfiguration({ cwd, env: { ANIMAL_STORE_CONFIG_FILE: 'off' } })
  assert.equal(off.config.port, 8080)
  assert.deepEqual(off.source, { file: undefined, named: 'off', environment: {} })
  assert.equal(loadConfiguration({ cwd, configFile: 'off' }).config.port, 8080)
})

test('a named file that is missing, and a name the service does not read, stop the start with one line', async (t) => {
  const cwd = await tempDir(t)
  assert.throws(
    () => loadConfiguration({ cwd, configFile: 'prod.env' }),
    refusal(/^--config-file prod\.env: \/.*\/prod\.env does not exist$/),
  )
  assert.throws(
    () => loadConfiguration({ cwd, env: { ANIMAL_STORE_CONFIG_FILE: 'prod.env' } }),
    refusal(/^ANIMAL_STORE_CONFIG_FILE=prod\.env: .* does not exist$/),
  )
  // A misspelt variable would otherwise be ignored without a word.
  await writeFile(join(cwd, '.env'), 'DATABSE_URL=/srv/as/store.db\n')
  assert.throws(() => loadConfiguration({ cwd }), refusal(/^\.env: DATABSE_URL is not a variable of Animal Store/))
  // The file's values are checked as the environment's are.
  await writeFile(join(cwd, '.env'), 'PORT=eighty\n')
  assert.throws(() => loadConfiguration({ cwd }), refusal(/^PORT must be an integer from 0 to 65535 \(got "eighty"\)$/))
})

test('--config-file is taken out of a command line wherever it is, in either spelling', () => {
  assert.deepEqual(takeConfigFileOption(['keys', 'list', '--config-file', 'prod.env', '--json']), {
    configFile: 'prod.env',
    args: ['keys', 'list', '--json'],
  })
  assert.deepEqual(takeConfigFileOption(['--config-file=off', 'keys', 'revoke', 'key_1']), {
    configFile: 'off',
    args: ['keys', 'revoke', 'key_1'],
  })
  assert.deepEqual(takeConfigFileOption(['keys', 'list']), { configFile: undefined, args: ['keys', 'list'] })
  assert.deepEqual(takeConfigFileOption(['keys', '--', '--config-file', 'x']).configFile, undefined, 'not after --')
  assert.throws(() => takeConfigFileOption(['keys', '--config-file']), refusal(/^--config-file needs a file/))
  assert.throws(() => takeConfigFileOption(['--config-file', 'a', '--config-file', 'b']), refusal(/given twice/))
})
