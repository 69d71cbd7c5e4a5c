/**
 * Each variable is checked by the validator Ajv generated from its schema (src/config/validators.generated.ts,
 * committed, so that the CLI loads neither Ajv nor TypeBox): it is the one the schemas give, it
 * imports nothing, and with each declaration's reading of text it accepts what the reference says.
 */
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { test } from 'node:test'
// @ts-expect-error: a plain .mjs script, run by tsx
import { generateValidators, VALIDATORS_TS } from '../../scripts/config-validators.mjs'
import { CONFIG_VARIABLES, type ConfigVariable, loadConfig, problemOf } from '../../src/config/config.js'
import type { Variable } from '../../src/config/schema.js'
import { VALIDATORS } from '../../src/config/validators.generated.js'
import { VARIABLES } from '../../src/config/variables.js'

test('validators.generated.ts is the one the variables’ schemas generate', async () => {
  const committed = await readFile(VALIDATORS_TS, 'utf8')
  assert.ok(
    (await generateValidators()) === committed,
    'src/config/validators.generated.ts is stale: a schema in src/config/variables.ts changed. Run `npm run config:generate` and commit it',
  )
})

test('the generated validators import nothing (the CLI checks its configuration without loading Ajv) and cover every variable', async () => {
  const committed = await readFile(VALIDATORS_TS, 'utf8')
  assert.doesNotMatch(committed, /^\s*import\b|\bimport\(|\brequire\(/m)
  assert.deepEqual(Object.keys(VALIDATORS), CONFIG_VARIABLES)
})

test('integers are digits within their bounds, flags are words, lists are exact, `off` is lower case', () => {
  const cases: [ConfigVariable, string, boolean][] = [
    ['PORT', '0', true],
    ['PORT', '65535', true],
    ['PORT', '08', true],
    ['PORT', '65536', false],
    ['PORT', '-1', false],
    ['PORT', '1e3', false],
    ['PORT', '0x10', false],
    ['PORT', ' 1', false],
    ['PORT', '1.5', false],
    ['PORT', 'Infinity', false],
    ['BOOTSTRAP_KEY', 'YES', true],
    ['BOOTSTRAP_KEY', 'off', true],
    ['BOOTSTRAP_KEY', '0', true],
    ['BOOTSTRAP_KEY', 'perhaps', false],
    ['ADMIN_PORT', 'off', true],
    ['ADMIN_PORT', '0', true],
    ['ADMIN_PORT', 'OFF', false],
    ['ADMIN_PORT', '65536', false],
    ['LOG_LEVEL', 'silent', true],
    ['LOG_LEVEL', 'INFO', false],
    ['ANIMAL_STORE_ENV', 'staging', true],
    ['ANIMAL_STORE_ENV', 'production ', false],
  ]
  for (const [name, raw, accepted] of cases) {
    assert.equal(problemOf(name, raw) === undefined, accepted, `${name}=${JSON.stringify(raw)}: ${problemOf(name, raw)}`)
  }
  assert.equal(loadConfig({ PORT: '08', ADMIN_PORT: '9' }).port, 8)
  assert.equal(loadConfig({ BOOTSTRAP_KEY: 'Off' }).bootstrapKey, false)
})

test('every variable refuses some values and accepts its default, as a value and as the text the reference shows', () => {
  const samples = [
    ...['0', '1', '50', '99', '100', '8080', '65535', '65536', '1000001', '-1', '1e3', '08', ' 1', '1.5', 'abc', 'off', 'OFF'],
    ...[
      'true',
      'YES',
      'no',
      'false',
      'production',
      'staging',
      'dev',
      'open',
      'closed',
      'info',
      'loud',
      'process',
      'power',
      'revoke',
      'flag',
    ],
    ...['http://x', 'https://api.example.com/', 'ftp://x', 'not a url', 'redis://h:1', 'redis+cluster://h:1,h:2', 'redis+sentinel://h:1'],
    ...['postgres://u@h/db', 'mysql://x', '/srv/x.db', 'sqlite::memory:', '10.0.0.0/8', '0.0.0.0/0', 'loopback', '2', '*'],
    ...['https://app.example.com', 'https://app.example.com/path', '127.0.0.1', 'not a host', 'db.internal'],
    ...['5s', '30m,2h', '5d'],
  ]
  for (const name of CONFIG_VARIABLES) {
    const verdicts = new Set(samples.map((raw) => problemOf(name, raw) === undefined))
    const free = name === 'HOST' || name === 'LOG_FILE' || name === 'LIMITER_STATE_FILE' || name === 'SECRET_SCANNING_PUBLIC_KEYS'
    assert.deepEqual([...verdicts].sort(), free ? [true] : [false, true], `${name}: what it accepts and refuses among the samples`)
    const variable: Variable = VARIABLES[name]
    if (variable.default === undefined) continue
    assert.ok(VALIDATORS[name](variable.default), `${name}: its default meets its schema`)
    assert.equal(problemOf(name, String(variable.default)), undefined, `${name}: its default written as text`)
  }
})

test('every variable lands in a field of its own, and Config has them all', () => {
  const fields = CONFIG_VARIABLES.map((name) => VARIABLES[name].field)
  assert.equal(new Set(fields).size, fields.length, `one field per variable: ${fields.join(', ')}`)
  assert.deepEqual(Object.keys(loadConfig({})).sort(), [...fields].sort())
})
