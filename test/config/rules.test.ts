/**
 * The rules between variables (src/config/rules.ts): each one's whole message, the order they are
 * checked in, and that they come after every variable's own check.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { loadConfig } from '../../src/config/config.js'
import { ConfigError } from '../../src/shared/startup-error.js'

const refusal = (message: string) => (error: unknown) => {
  assert.ok(error instanceof ConfigError)
  assert.equal(error.message, message)
  return true
}

test('each rule between variables stops the start with its own message', () => {
  const pg = 'postgres://u@h/db'
  const cases: [Record<string, string>, string][] = [
    [{ DATABASE_LISTEN_URL: pg }, 'DATABASE_LISTEN_URL applies to PostgreSQL only: DATABASE_URL is not a postgres:// URL (unset it)'],
    [
      { ADMIN_PORT: 'off', ADMIN_HOST: '127.0.0.1' },
      'ADMIN_HOST has no effect with ADMIN_PORT=off (there is no admin listener): unset one of them',
    ],
    [
      { PORT: '9000', ADMIN_PORT: '9000' },
      'ADMIN_PORT must differ from PORT (both 9000): the admin API and /metrics have a listener of their own (ADMIN_PORT=off disables it)',
    ],
    [
      { REDIS_URL: 'redis://h:1', LIMITER_STATE_FILE: '/tmp/x.json' },
      'LIMITER_STATE_FILE applies to the in-memory limiter only; with REDIS_URL the state is in Redis (unset one of them)',
    ],
    [{ BAN_BASE_SECONDS: '120', BAN_MAX_SECONDS: '119' }, 'BAN_MAX_SECONDS must be at least BAN_BASE_SECONDS'],
    [{ HEADERS_TIMEOUT_MS: '10001' }, 'HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS'],
    [{ REQUEST_TIMEOUT_MS: '4999' }, 'HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS'],
  ]
  for (const [env, message] of cases) assert.throws(() => loadConfig(env), refusal(message), JSON.stringify(env))
})

test('at the limits the rules allow: equal bans and timeouts, both ports free, off with the default host', () => {
  const c = loadConfig({ BAN_BASE_SECONDS: '120', BAN_MAX_SECONDS: '120', HEADERS_TIMEOUT_MS: '7000', REQUEST_TIMEOUT_MS: '7000' })
  assert.deepEqual([c.banBaseSeconds, c.banMaxSeconds, c.headersTimeoutMs, c.requestTimeoutMs], [120, 120, 7000, 7000])
  assert.equal(loadConfig({ PORT: '0', ADMIN_PORT: '0' }).adminPort, 0)
  assert.equal(loadConfig({ ADMIN_PORT: 'off', ADMIN_HOST: '' }).adminPort, undefined, 'an empty ADMIN_HOST is unset')
  assert.equal(loadConfig({ REDIS_URL: 'redis://h:1', LIMITER_STATE_FILE: 'off' }).limiterStateFile, undefined)
  assert.equal(loadConfig({ REDIS_URL: 'redis://h:1', LIMITER_STATE_FILE: '' }).limiterStateFile, undefined)
})

test('a variable’s own problem comes first, then the rules in their order', () => {
  const everything = {
    DATABASE_LISTEN_URL: 'postgres://u@h/db',
    ADMIN_PORT: '8080',
    REDIS_URL: 'redis://h:1',
    LIMITER_STATE_FILE: '/tmp/x.json',
    BAN_MAX_SECONDS: '1',
    HEADERS_TIMEOUT_MS: '600000',
  }
  assert.throws(
    () => loadConfig({ ...everything, MAX_CONNECTIONS: '0' }),
    refusal('MAX_CONNECTIONS must be an integer from 1 to 1000000 (got "0")'),
  )
  const order = [
    'DATABASE_LISTEN_URL applies',
    'ADMIN_PORT must differ',
    'LIMITER_STATE_FILE applies',
    'BAN_MAX_SECONDS',
    'HEADERS_TIMEOUT_MS',
  ]
  const env: Record<string, string> = { ...everything }
  for (const [index, start] of order.entries()) {
    assert.throws(
      () => loadConfig(env),
      (error: unknown) => error instanceof ConfigError && error.message.startsWith(start),
      `rule ${index + 1}: ${start}`,
    )
    // Mend the rule just seen; the next one in order speaks.
    if (index === 0) delete env.DATABASE_LISTEN_URL
    if (index === 1) delete env.ADMIN_PORT
    if (index === 2) delete env.LIMITER_STATE_FILE
    if (index === 3) delete env.BAN_MAX_SECONDS
  }
})

test('a default that depends on other variables: the limiter state file beside the SQLite file, unless set', () => {
  assert.equal(loadConfig({ DATABASE_URL: '/srv/as/x.db' }).limiterStateFile, '/srv/as/x.db.limits.json')
  assert.equal(loadConfig({ DATABASE_URL: '/srv/as/x.db', LIMITER_STATE_FILE: '' }).limiterStateFile, '/srv/as/x.db.limits.json')
  assert.equal(loadConfig({ DATABASE_URL: '/srv/as/x.db', LIMITER_STATE_FILE: '/var/y.json' }).limiterStateFile, '/var/y.json')
  assert.equal(loadConfig({ DATABASE_URL: 'sqlite:' }).limiterStateFile, undefined, 'no file name: nowhere')
})
