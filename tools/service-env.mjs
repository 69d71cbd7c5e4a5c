// An environment for a child service without the service's configuration variables. The list is
// src/config/'s own: its source where this process runs TypeScript (the tests, through tsx),
// else the build (the benchmark and the soak, which build first).

import { randomBytes } from 'node:crypto'

const [{ CONFIG_VARIABLES }, { CONFIG_FILE_VARIABLE }] = await Promise.all([
  serviceModule('config/config'),
  serviceModule('config/config-file'),
])

/**
 * The limiter's Redis key prefix of every service this process starts (REDIS_KEY_PREFIX). The
 * machine's Redis is shared by every test file, by the lanes of one run and by whatever else runs
 * beside it, and keyless clients are limited by address: a file that got 127.0.0.1 banned there
 * (`as:rl:` by default, bans last up to an hour) made another file's 401 a 429 `key_banned`, and
 * its revoked key's poller failed. A prefix of its own per test process keeps each file's limits
 * its own; the servers one file starts still share theirs, as instances of one service do.
 */
export const REDIS_KEY_PREFIX = `as:test:${process.pid}-${randomBytes(4).toString('hex')}:`

/** Every variable the service reads: its configuration and the one naming the config file. */
export const CONFIG_VARS = [...CONFIG_VARIABLES, CONFIG_FILE_VARIABLE]

/** What a process needs from its environment to run at all: a minimal environment keeps only these. */
const ESSENTIALS = ['PATH', 'HOME', 'LANG', 'TZ', 'TMPDIR']

/**
 * The environment of a child service: this process's without the service's configuration (never
 * inherited from the caller's shell, nor read from a .env file in the child's working directory:
 * ANIMAL_STORE_CONFIG_FILE is off) and without `node --test`'s NODE_TEST_CONTEXT (not ours to pass
 * on), with this process's REDIS_KEY_PREFIX, plus `overrides` (an undefined value deletes the
 * variable).
 *
 * `minimal` (the benchmark): only PATH, HOME, LANG, TZ and TMPDIR of this process's, so the service
 * measured runs with nothing of the caller's (no NODE_OPTIONS, no coverage) and the limiter's own
 * Redis prefix (the benchmark runs alone).
 *
 * @param {Record<string, string | undefined>} [overrides]
 * @param {{ minimal?: boolean }} [options]
 * @returns {NodeJS.ProcessEnv}
 */
export function serviceEnv(overrides = {}, { minimal = false } = {}) {
  const env = minimal
    ? Object.fromEntries(ESSENTIALS.filter((name) => process.env[name]).map((name) => [name, process.env[name]]))
    : { ...process.env }
  for (const name of CONFIG_VARS) delete env[name]
  env[CONFIG_FILE_VARIABLE] = 'off'
  if (!minimal) env.REDIS_KEY_PREFIX = REDIS_KEY_PREFIX
  delete env.NODE_TEST_CONTEXT
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete env[name]
    else env[name] = value
  }
  return env
}

/** src/`name`.ts, or dist/`name`.js where Node cannot load TypeScript. */
async function serviceModule(name) {
  try {
    return await import(`../src/${name}.ts`)
  } catch (error) {
    if (error?.code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw error
    return await import(`../dist/${name}.js`)
  }
}
