/**
 * A child service's environment (tools/service-env.mjs): none of the caller's configuration, no
 * config file; the benchmark's minimal one keeps nothing else of the caller's either.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { REDIS_KEY_PREFIX, serviceEnv } from '../../tools/service-env.mjs'

/** The service's environment while this process's has `extra` (put back at once: nothing else runs meanwhile). */
function serviceEnvWith(extra: Record<string, string>, ...args: Parameters<typeof serviceEnv>): NodeJS.ProcessEnv {
  const saved = { ...process.env }
  Object.assign(process.env, extra)
  try {
    return serviceEnv(...args)
  } finally {
    for (const name of Object.keys(extra)) delete process.env[name]
    Object.assign(process.env, saved)
  }
}

test('serviceEnv: this process environment less the service configuration, with its Redis prefix and the overrides', () => {
  const caller = { DATABASE_URL: '/caller.db', NODE_OPTIONS: '--max-old-space-size=100', SOMETHING_ELSE: 'kept' }
  const env = serviceEnvWith(caller, { PORT: '1234', SOMETHING_ELSE: undefined })
  assert.equal(env.DATABASE_URL, undefined, "the caller's configuration does not leak in")
  assert.equal(env.ANIMAL_STORE_CONFIG_FILE, 'off')
  assert.equal(env.REDIS_KEY_PREFIX, REDIS_KEY_PREFIX)
  assert.equal(env.NODE_OPTIONS, '--max-old-space-size=100')
  assert.equal(env.PORT, '1234')
  assert.equal('SOMETHING_ELSE' in env, false, 'an undefined override deletes')
  assert.equal(env.NODE_TEST_CONTEXT, undefined)

  const minimal = serviceEnvWith(caller, { DATABASE_URL: '/bench.db' }, { minimal: true })
  assert.deepEqual(
    Object.keys(minimal).sort(),
    ['ANIMAL_STORE_CONFIG_FILE', 'DATABASE_URL', ...['PATH', 'HOME', 'LANG', 'TZ', 'TMPDIR'].filter((name) => process.env[name])].sort(),
    'the benchmark: nothing of the caller but what a process needs to run, and the default Redis prefix',
  )
  assert.deepEqual([minimal.DATABASE_URL, minimal.PATH], ['/bench.db', process.env.PATH])
})
