import { isPostgresUrl, sqliteFilename } from './database-url.js'
import type { ConfigVariable, VariableValues } from './variables.js'

/**
 * What the variables say together, where each one alone (variables.ts) cannot: the rules between
 * them and the defaults that depend on other variables. loadConfig applies them after every
 * variable has passed its own check.
 */

/** Whether a variable was set (not unset nor empty): some rules concern what the operator wrote, not a default. */
export type IsSet = (name: ConfigVariable) => boolean

/** A rule between variables: what is wrong with them together (the whole message), or undefined. */
type Rule = (values: VariableValues, isSet: IsSet) => string | undefined

/** The rules, in the order they are checked: the first broken one stops the start. */
export const RULES: readonly Rule[] = [
  ({ DATABASE_LISTEN_URL, DATABASE_URL }) =>
    DATABASE_LISTEN_URL !== undefined && !isPostgresUrl(DATABASE_URL)
      ? 'DATABASE_LISTEN_URL applies to PostgreSQL only: DATABASE_URL is not a postgres:// URL (unset it)'
      : undefined,
  /*
   * The admin listener (the admin API and /metrics) is a listener of its own, never the main one, in
   * the way Kong's Admin API is: ADMIN_PORT (default 8081; 0 picks a free port) on ADMIN_HOST
   * (default 127.0.0.1, reachable from this machine only). `ADMIN_PORT=off` serves neither anywhere.
   * There is no mode that mounts them on the main listener: the main listener has no route for
   * them, so no spelling of their paths can reach them there.
   */
  ({ ADMIN_PORT }, isSet) =>
    ADMIN_PORT === 'off' && isSet('ADMIN_HOST')
      ? 'ADMIN_HOST has no effect with ADMIN_PORT=off (there is no admin listener): unset one of them'
      : undefined,
  ({ ADMIN_PORT, PORT }) =>
    ADMIN_PORT === PORT && PORT !== 0
      ? `ADMIN_PORT must differ from PORT (both ${PORT}): the admin API and /metrics have a listener of their own (ADMIN_PORT=off disables it)`
      : undefined,
  // Redis keeps the limiter's state itself; a state file there would only be the fallback's, which must not outlive an outage.
  ({ LIMITER_STATE_FILE, REDIS_URL }) =>
    LIMITER_STATE_FILE !== undefined && LIMITER_STATE_FILE !== 'off' && REDIS_URL !== undefined
      ? 'LIMITER_STATE_FILE applies to the in-memory limiter only; with REDIS_URL the state is in Redis (unset one of them)'
      : undefined,
  ({ BAN_MAX_SECONDS, BAN_BASE_SECONDS }) =>
    BAN_MAX_SECONDS < BAN_BASE_SECONDS ? 'BAN_MAX_SECONDS must be at least BAN_BASE_SECONDS' : undefined,
  ({ HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS }) =>
    HEADERS_TIMEOUT_MS > REQUEST_TIMEOUT_MS ? 'HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS' : undefined,
]

/** The defaults that depend on other variables: what an unset variable takes, given the others (its `defaultText` says it). */
export const DEPENDENT_DEFAULTS: { [Name in ConfigVariable]?: (values: VariableValues) => VariableValues[Name] } = {
  /*
   * The in-memory limiter's state file, by default beside a SQLite database file. Nowhere by default
   * on PostgreSQL or an in-memory SQLite database: there is no data directory of the service's own
   * to put it in. Nor with Redis, which keeps its own state.
   */
  LIMITER_STATE_FILE: ({ DATABASE_URL, REDIS_URL }) => {
    if (REDIS_URL !== undefined || isPostgresUrl(DATABASE_URL)) return undefined
    const sqliteFile = sqliteFilename(DATABASE_URL)
    return sqliteFile === ':memory:' || sqliteFile === '' ? undefined : `${sqliteFile}.limits.json`
  },
}
