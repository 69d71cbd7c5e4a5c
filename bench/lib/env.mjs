// The service's configuration variables (CONFIG_VARIABLES of src/config.ts, and the variable naming
// the config file), and an environment for a child service without them. A copy, not an import:
// the bench runs dist/ and the tests src/, and either may be stale; test/config.test.ts checks it.

export const CONFIG_VARS = [
  'ANIMAL_STORE_CONFIG_FILE',
  'ANIMAL_STORE_ENV',
  'PORT',
  'HOST',
  'ADMIN_PORT',
  'ADMIN_HOST',
  'PUBLIC_BASE_URL',
  'PRODUCTION_BASE_URL',
  'STAGING_BASE_URL',
  'DATABASE_URL',
  'DATABASE_LISTEN_URL',
  'DURABILITY',
  'REDIS_URL',
  'REDIS_FAILURE_POLICY',
  'TRUST_PROXY',
  'LOG_LEVEL',
  'LOG_FILE',
  'KEY_REFRESH_MS',
  'LAST_USED_FLUSH_MS',
  'BOOTSTRAP_KEY',
  'BAN_THRESHOLD',
  'BAN_BASE_SECONDS',
  'BAN_MAX_SECONDS',
  'LIMITER_STATE_FILE',
  'LIMITER_SNAPSHOT_MS',
  'CORS_ORIGINS',
  'REQUEST_TIMEOUT_MS',
  'HEADERS_TIMEOUT_MS',
  'KEEP_ALIVE_TIMEOUT_MS',
  'MAX_HEADER_BYTES',
  'MAX_CONNECTIONS',
  'SHUTDOWN_DRAIN_MS',
]

/**
 * This process's environment without the service's configuration (never inherited from the
 * caller's shell, nor read from a .env file in the child's working directory: ANIMAL_STORE_CONFIG_FILE
 * is off) and without `node --test`'s NODE_TEST_CONTEXT (not ours to pass on), plus `overrides`
 * (an undefined value deletes the variable).
 */
export function serviceEnv(overrides = {}) {
  const env = { ...process.env }
  for (const name of CONFIG_VARS) delete env[name]
  env.ANIMAL_STORE_CONFIG_FILE = 'off'
  delete env.NODE_TEST_CONTEXT
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete env[name]
    else env[name] = value
  }
  return env
}
