// An environment for a child service without the service's configuration variables. The list is
// src/config.ts's own: its source where this process runs TypeScript (the tests, through tsx),
// else the build (the benchmark and the soak, which build first).

const [{ CONFIG_VARIABLES }, { CONFIG_FILE_VARIABLE }] = await Promise.all([serviceModule('config'), serviceModule('config-file')])

/** Every variable the service reads: its configuration and the one naming the config file. */
export const CONFIG_VARS = [...CONFIG_VARIABLES, CONFIG_FILE_VARIABLE]

/**
 * This process's environment without the service's configuration (never inherited from the
 * caller's shell, nor read from a .env file in the child's working directory: ANIMAL_STORE_CONFIG_FILE
 * is off) and without `node --test`'s NODE_TEST_CONTEXT (not ours to pass on), plus `overrides`
 * (an undefined value deletes the variable).
 */
export function serviceEnv(overrides = {}) {
  const env = { ...process.env }
  for (const name of CONFIG_VARS) delete env[name]
  env[CONFIG_FILE_VARIABLE] = 'off'
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
