import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ConfigError, redactUrl, StartupError, startFailureLine } from '../../src/shared/startup-error.js'

test('redactUrl hides passwords, in the user part and in query parameters, and nothing else', () => {
  const cases: Array<[string, string]> = [
    ['postgres://app:s3cret@db:5432/store', 'postgres://app:***@db:5432/store'],
    ['postgres://app@db/store?sslmode=require&password=s3cret', 'postgres://app@db/store?sslmode=require&password=***'],
    ['redis://:s3cret@10.0.0.5:6379/2', 'redis://:***@10.0.0.5:6379/2'],
    ['rediss://default:p%40ss@cache.example:6380', 'rediss://default:***@cache.example:6380'],
    ['redis://127.0.0.1:6379', 'redis://127.0.0.1:6379'],
    ['data/animal-store.db', 'data/animal-store.db'],
  ]
  for (const [raw, shown] of cases) assert.equal(redactUrl(raw), shown, raw)
})

test('a start-up failure is one line naming the settings, their values (quoted when needed) and the cause', () => {
  assert.equal(
    startFailureLine(new StartupError({ PORT: 8080, HOST: '0.0.0.0' }, 'address already in use')),
    'animal-store: cannot start: PORT=8080 HOST=0.0.0.0: address already in use',
  )
  assert.equal(
    startFailureLine(new StartupError({ DATABASE_URL: '/srv/my data/x.db' }, 'cause')),
    'animal-store: cannot start: DATABASE_URL="/srv/my data/x.db": cause',
  )
  assert.equal(startFailureLine(new StartupError({ DATABASE_URL: '' }, 'cause')), 'animal-store: cannot start: DATABASE_URL="": cause')
  assert.equal(startFailureLine(new ConfigError('PORT must be an integer')), 'animal-store: configuration error: PORT must be an integer')
  const unexpected = startFailureLine(new TypeError('boom'))
  assert.equal(unexpected, 'animal-store: cannot start: boom')
})
