import { ConfigError } from '../shared/startup-error.js'
import { parseRedisTarget, type RedisTarget } from './redis-url.js'
import { DEPENDENT_DEFAULTS, RULES } from './rules.js'
import type { JsonSchema, Variable } from './schema.js'
import { VALIDATORS } from './validators.generated.js'
import { type ConfigVariable, type Declarations, VARIABLES, type VariableValues } from './variables.js'

/**
 * Environment -> typed, validated configuration. Every variable is declared once, in VARIABLES
 * (variables.ts: schema, default, meaning, and the field of Config it lands in), and read here and
 * nowhere else; the rules between variables are in rules.ts. A bad value stops the process at start
 * with one line naming the variable and what it accepts. The validator of each variable's schema
 * (validators.generated.ts) and the reference in docs/configuration.md are generated from the same
 * table (npm run config:generate).
 */

export { isPostgresUrl, sqliteFilename } from './database-url.js'
export { type ConfigVariable, DEFAULT_ADMIN_PORT, DEFAULT_MAX_ADDRESSES } from './variables.js'

/** The configuration: each variable's value in its field, as the variable's `toConfig` makes it. */
export type Config = {
  [Name in ConfigVariable as Declarations[Name]['field']]: ReturnType<Declarations[Name]['toConfig']>
}
export type Environment = Config['env']
export type Durability = Config['durability']
export type RedisFailurePolicy = Config['redisFailurePolicy']

type Env = Record<string, string | undefined>

/** Every variable of the service as one JSON Schema object, in the order of the reference. */
export const CONFIG_SCHEMA = {
  type: 'object',
  properties: Object.fromEntries(Object.entries(VARIABLES).map(([name, variable]) => [name, variable.schema])) as Record<
    ConfigVariable,
    JsonSchema
  >,
} as const

/** The names of every variable the service reads. */
export const CONFIG_VARIABLES = Object.keys(VARIABLES) as ConfigVariable[]

/** The variables the CLI reads too (the others concern only a server). */
export const CLI_VARIABLES = CONFIG_VARIABLES.filter((name) => VARIABLES[name].cli === true)

/** What is wrong with the text `raw` of variable `name`, in one line naming it, or undefined when nothing is. */
export function problemOf(name: ConfigVariable, raw: string): string | undefined {
  const variable: Variable = VARIABLES[name]
  const value = variable.read(raw)
  if (!VALIDATORS[name](value)) return `${name} must be ${variable.mustBe} (got ${JSON.stringify(raw)})`
  const problem = variable.problem?.(value as string)
  return problem === undefined ? undefined : `${name} ${problem}`
}

/** Each variable of `env` checked on its own; unset and empty ones take their default. */
function readVariables(env: Env): { values: VariableValues; set: Set<ConfigVariable> } {
  const values: Record<string, unknown> = {}
  const set = new Set<ConfigVariable>()
  for (const name of CONFIG_VARIABLES) {
    const variable: Variable = VARIABLES[name]
    const raw = env[name]
    if (raw === undefined || raw === '') {
      values[name] = variable.default
      continue
    }
    const problem = problemOf(name, raw)
    if (problem !== undefined) throw new ConfigError(problem)
    values[name] = variable.read(raw)
    set.add(name)
  }
  return { values: values as VariableValues, set }
}

/** REDIS_URL -> what to connect to (redis-url.ts reads the forms), or a ConfigError naming REDIS_URL. */
export function redisTarget(raw: string): RedisTarget {
  const target = parseRedisTarget(raw)
  if (typeof target === 'string') throw new ConfigError(`REDIS_URL ${target}`)
  return target
}

export function loadConfig(env: Env = process.env): Config {
  const { values, set } = readVariables(env)
  for (const rule of RULES) {
    const problem = rule(values, (name) => set.has(name))
    if (problem !== undefined) throw new ConfigError(problem)
  }
  const withDefaults: Record<string, unknown> = { ...values }
  for (const [name, fallback] of Object.entries(DEPENDENT_DEFAULTS) as [ConfigVariable, (values: VariableValues) => unknown][]) {
    if (!set.has(name)) withDefaults[name] = fallback(values)
  }
  const config: Record<string, unknown> = {}
  for (const name of CONFIG_VARIABLES) {
    const variable: Variable = VARIABLES[name]
    config[variable.field] = variable.toConfig(withDefaults[name])
  }
  return config as Config
}
