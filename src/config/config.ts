import { BlockList, isIP } from 'node:net'
import { ConfigError } from '../shared/startup-error.js'
import { parseRedisTarget, type RedisTarget } from './redis-url.js'
import {
  flag,
  fromText,
  integer,
  integerOrOff,
  oneOf,
  optional,
  problemOf,
  text,
  urlProblem,
  type Values,
  type Variable,
  withoutTrailingSlash,
} from './schema.js'

/**
 * Environment -> typed, validated configuration. Every variable is declared once, in
 * CONFIG_SCHEMA (type, default, bounds, meaning), and read here and nowhere else; a bad value stops
 * the process at start with one line naming the variable and what it accepts. The reference in
 * docs/configuration.md is generated from the same schema (npm run docs:config).
 */
export type Environment = 'production' | 'staging'
export type Durability = 'process' | 'power'
export type RedisFailurePolicy = 'open' | 'closed'

export interface Config {
  env: Environment
  host: string
  port: number
  /** The admin listener (admin API and /metrics): ADMIN_PORT (default 8081) on ADMIN_HOST; undefined: off. */
  adminPort: number | undefined
  adminHost: string
  /**
   * Origin clients reach this instance at (no /v1), when set: links become absolute with it and
   * the OpenAPI document lists it. Unset: links are relative, right for a client on any address.
   */
  publicBaseUrl: string | undefined
  productionBaseUrl: string
  stagingBaseUrl: string
  databaseUrl: string
  /**
   * Where the revocation LISTEN connection goes (PostgreSQL only): undefined = DATABASE_URL;
   * 'off' = no LISTEN, revocations arrive by polling alone (KEY_REFRESH_MS). Behind PgBouncer in
   * transaction mode LISTEN needs a direct connection to PostgreSQL (or 'off').
   */
  databaseListenUrl: string | 'off' | undefined
  /** process: a 201 survives a crash of the process (WAL, synchronous=NORMAL); power: fsync per commit. */
  durability: Durability
  redisUrl: string | undefined
  redisFailurePolicy: RedisFailurePolicy
  /** What every Redis key of the limiter starts with (before its `{hash tag}`). */
  redisKeyPrefix: string
  /** Origins allowed to call the API from a browser (CORS): none (undefined), a list, or any ('*'). */
  corsOrigins: string[] | '*' | undefined
  /** Proxies trusted to set X-Forwarded-For: false, or a comma list of addresses/CIDRs. */
  trustProxy: false | string
  logLevel: string
  /** Log destination: a file path, or stdout when unset. */
  logFile: string | undefined
  /** How often each instance checks storage for changed (updated, rotated, revoked) keys (ms). */
  keyRefreshMs: number
  /** How often the last-use times of keys are written to storage, in one batch (ms). */
  lastUsedFlushMs: number
  /** How often each instance writes its usage-history counts to storage, in one transaction (ms). */
  usageFlushMs: number
  /** How long usage-history rows are kept: minute rows, hour rows (ms). */
  usageMinuteRetentionMs: number
  usageHourRetentionMs: number
  /** How long a placed order holds its animal before it expires (ms), and how often each instance expires the due ones (ms). */
  orderHoldMs: number
  orderSweepMs: number
  /** Create and print one key on a first start with no key at all. */
  bootstrapKey: boolean
  /** Rejected requests within one minute window that trigger a temporary ban (0: the key's per-minute limit). */
  banThreshold: number
  banBaseSeconds: number
  banMaxSeconds: number
  /** Where the in-memory limiter keeps its windows and bans across restarts; undefined: nowhere. */
  limiterStateFile: string | undefined
  /** How often the in-memory limiter writes its state file when something changed (ms). */
  limiterSnapshotMs: number
  /** Keyless client addresses with limiter counters of their own; further ones share overflow counters. */
  limiterMaxAddresses: number
  /** Node HTTP server limits against slow or hostile clients. */
  requestTimeoutMs: number
  headersTimeoutMs: number
  keepAliveTimeoutMs: number
  maxHeaderBytes: number
  maxConnections: number
  /** Open connections one client address (IPv6: its /64) may hold on each listener; TRUST_PROXY peers have no such share. */
  maxConnectionsPerAddress: number
  /** Open connections of the admin listener (its own budget, apart from maxConnections). */
  adminMaxConnections: number
  /**
   * On SIGTERM/SIGINT, how long /readyz answers 503 while every request is still served, before
   * the listener closes: the time a load balancer's health checks need to take the instance out.
   */
  shutdownDrainMs: number
}

type Env = Record<string, string | undefined>

/** LIMITER_MAX_ADDRESSES by default: ~20 MB of the in-memory limiter, ~6 MB of state file, ~21 MB of Redis a day. */
export const DEFAULT_MAX_ADDRESSES = 100_000

/** Where the admin listener is when ADMIN_PORT is not set. */
export const DEFAULT_ADMIN_PORT = 8081

const httpUrl = (notes: Parameters<typeof text>[0]) =>
  text({ accepts: 'an absolute `http:` or `https:` URL', ...notes }, (value) => urlProblem(value, ['http:', 'https:']))

/**
 * Every variable of the service, in the order of the reference. A variable that is unset or empty
 * takes its default. Rules between variables are in loadConfig.
 */
const VARIABLES = {
  ANIMAL_STORE_ENV: oneOf(['production', 'staging'], 'production', {
    cli: true,
    description:
      'key prefix (`as_live_` / `as_test_`: a key of the other environment is refused); named in the OpenAPI document’s server for `PUBLIC_BASE_URL`',
  }),
  PORT: integer(0, 65535, 8080, { description: 'where the API listens (`0`: a free port)' }),
  HOST: text({ default: '0.0.0.0', accepts: 'an address or host name', description: 'the address the API listens on' }),
  ADMIN_PORT: integerOrOff(0, 65535, DEFAULT_ADMIN_PORT, {
    description:
      'the admin listener: the admin API and `/metrics`, never on the main listener; `0` a free port, `off` neither anywhere; must differ from `PORT`',
  }),
  ADMIN_HOST: text(
    {
      default: '127.0.0.1',
      accepts: 'an IP address or a host name',
      description: 'the address of the admin listener (the default is reachable from this machine only)',
    },
    (value) =>
      isIP(value) || /^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$/.test(value)
        ? undefined
        : `must be an IP address or a host name (got ${JSON.stringify(value)})`,
  ),
  PUBLIC_BASE_URL: optional(
    httpUrl({
      defaultText: 'unset (links are relative)',
      description: 'origin clients reach this instance at (no `/v1`): makes links absolute and adds it to the OpenAPI servers',
    }),
  ),
  PRODUCTION_BASE_URL: httpUrl({
    default: 'https://api.animal-store.example',
    description: 'the production server listed in the OpenAPI document (+ `/v1`)',
  }),
  STAGING_BASE_URL: httpUrl({
    default: 'https://staging.api.animal-store.example',
    description: 'the staging server listed in the OpenAPI document (+ `/v1`)',
  }),
  DATABASE_URL: text(
    {
      default: 'data/animal-store.db',
      cli: true,
      accepts: 'a SQLite file path or `sqlite:` URL (`sqlite:///abs/path.db`, `sqlite::memory:`), or `postgres://…`',
      description:
        'the database (a relative path is relative to the working directory); a SQLite file serves one server process, which holds `<file>.lock` (the CLI works beside it)',
    },
    (value) =>
      isPostgresUrl(value) || value.startsWith('sqlite:') || !/^[a-z][a-z0-9+.-]*:\/\//i.test(value)
        ? undefined
        : `must be a file path, a sqlite: URL or a postgres:// URL (got scheme ${JSON.stringify(value.split(':')[0])})`,
  ),
  DATABASE_LISTEN_URL: optional(
    text(
      {
        defaultText: '`DATABASE_URL`',
        cli: true,
        accepts: '`postgres://…` or `off`',
        description:
          'PostgreSQL only: where the revocation `LISTEN` connection goes; behind PgBouncer in transaction mode, PostgreSQL itself (or `off`: revocations by polling alone); see docs/deployment.md',
      },
      (value) =>
        value === 'off' || isPostgresUrl(value)
          ? undefined
          : `must be a postgres:// URL or off (got scheme ${JSON.stringify(value.split(':')[0])})`,
    ),
  ),
  DURABILITY: oneOf(['process', 'power'], 'process', {
    cli: true,
    description:
      '`process`: a 201 survives a crash of the process (SQLite WAL, `synchronous=NORMAL`); `power`: fsync per commit (`synchronous=FULL`), with group commit',
  }),
  REDIS_URL: optional(
    text(
      {
        defaultText: 'unset (limits in memory)',
        cli: true,
        accepts: '`redis://…` or `rediss://…` (TLS), `redis+cluster://h1:p1,h2:p2,…`, `redis+sentinel://s1:p1,s2:p2,…/mymaster`',
        description:
          'shared rate-limit state for many instances: one server, a Redis Cluster (its seed nodes) or a master found through Sentinels (docs/deployment.md)',
      },
      (value) => {
        const target = parseRedisTarget(value.replace(/\/+$/, ''))
        return typeof target === 'string' ? target : undefined
      },
    ),
  ),
  REDIS_FAILURE_POLICY: oneOf(['open', 'closed'], 'open', {
    description: 'when Redis is unreachable: `open` = decide with a local in-memory limiter; `closed` = 503',
  }),
  REDIS_KEY_PREFIX: text(
    {
      default: 'as:rl:',
      cli: true,
      accepts: '1 to 64 of `A-Z a-z 0-9 : _ . -`',
      description:
        'what the limiter’s Redis keys start with: one Redis shared by several deployments (staging and production) keeps their limits apart with a prefix each; every instance of one service must use the same',
    },
    (value) =>
      /^[A-Za-z0-9:_.-]{1,64}$/.test(value) ? undefined : `must be 1 to 64 of A-Z a-z 0-9 : _ . - (got ${JSON.stringify(value)})`,
  ),
  CORS_ORIGINS: optional(
    text(
      {
        defaultText: 'unset (no CORS)',
        accepts: '`*` or a comma list of exact origins (`https://app.example.com`)',
        description:
          'browser apps on other origins allowed to call the API; preflights are answered 204 without a key; credentials are never allowed (keys travel in `Authorization`, not cookies)',
      },
      corsOriginsProblem,
    ),
  ),
  TRUST_PROXY: text(
    {
      default: 'false',
      accepts: '`false` or a comma list of addresses/CIDRs (`loopback`, `linklocal`, `uniquelocal` allowed)',
      description:
        'proxies trusted for `X-Forwarded-For` on the main listener (the admin listener trusts none); hop counts and ranges holding every peer (`0.0.0.0/0`, `::/0`) are refused; a forwarded value that is not an address is limited as the proxy that sent it',
    },
    trustProxyProblem,
  ),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info', {
    description: 'pino JSON logs; `info` writes one access line per request',
  }),
  LOG_FILE: optional(
    text({ defaultText: 'unset (stdout)', accepts: 'a file path', description: 'where the log goes (appended; its directory is created)' }),
  ),
  KEY_REFRESH_MS: integer(50, 60_000, 1000, {
    description: 'how often each server polls the key change log (updates, rotations, revocations)',
  }),
  LAST_USED_FLUSH_MS: integer(100, 600_000, 5000, {
    description: 'how often the last-use times of keys are written to storage, in one batch',
  }),
  USAGE_FLUSH_MS: integer(100, 60_000, 5000, {
    description:
      'how often each server writes its per-key usage counts (usage history) to storage, in one transaction: the most a `kill -9` can lose',
  }),
  USAGE_MINUTE_RETENTION_HOURS: integer(1, 720, 48, { description: 'how long per-minute usage history is kept' }),
  USAGE_HOUR_RETENTION_DAYS: integer(1, 3650, 90, { description: 'how long per-hour usage history is kept' }),
  ORDER_HOLD_MINUTES: integer(1, 10_080, 30, {
    description:
      'how long a placed order holds its animal (`pending`): not completed or cancelled by then, it expires and the animal is `available` again; fixed when the order is placed',
  }),
  ORDER_SWEEP_MS: integer(100, 600_000, 10_000, {
    description:
      'how often each server expires the orders whose hold ran out (changes that need it expire an order at once; reads see it within this interval)',
  }),
  BOOTSTRAP_KEY: flag(true, { description: 'create and print one Free key on a first start with no key' }),
  BAN_THRESHOLD: integer(0, 1_000_000, 0, {
    cli: true,
    description: 'rejected requests within one minute window that trigger a temporary ban (`0`: the key’s per-minute limit, at least 10)',
  }),
  BAN_BASE_SECONDS: integer(1, 86_400, 60, { cli: true, description: 'the first ban’s length; each further ban doubles it' }),
  BAN_MAX_SECONDS: integer(1, 7 * 86_400, 3600, { cli: true, description: 'the longest ban (at least `BAN_BASE_SECONDS`)' }),
  LIMITER_STATE_FILE: optional(
    text({
      defaultText: '`<SQLite file>.limits.json`; none on PostgreSQL, `:memory:` or with `REDIS_URL`',
      accepts: 'a file path or `off`',
      cli: true,
      description:
        'where the in-memory limiter keeps windows and bans across restarts; `off` disables it; refused together with `REDIS_URL` (the state is in Redis)',
    }),
  ),
  LIMITER_SNAPSHOT_MS: integer(100, 600_000, 2000, {
    description: 'how often the state file is written when something changed: the most a `kill -9` can lose',
  }),
  LIMITER_MAX_ADDRESSES: integer(0, 10_000_000, DEFAULT_MAX_ADDRESSES, {
    description:
      'keyless client addresses (IPv6: /64s) the limiter counts one by one (per UTC day with `REDIS_URL`); further ones share 1,024 overflow counters, so are refused sooner, never later; bounds the limiter’s memory, state file and Redis keys (limits.md)',
  }),
  REQUEST_TIMEOUT_MS: integer(100, 600_000, 10_000, { description: 'the longest a request may take to arrive in full' }),
  HEADERS_TIMEOUT_MS: integer(100, 600_000, 5_000, {
    description: 'the longest a request’s headers may take to arrive (at most `REQUEST_TIMEOUT_MS`)',
  }),
  KEEP_ALIVE_TIMEOUT_MS: integer(100, 600_000, 5_000, {
    description: 'how long an idle keep-alive connection stays open; behind a load balancer, above its idle timeout',
  }),
  MAX_HEADER_BYTES: integer(1_024, 65_536, 8_192, { description: 'the largest request header section' }),
  MAX_CONNECTIONS: integer(1, 1_000_000, 10_000, { description: 'open connections per process (keep it under `ulimit -n`)' }),
  MAX_CONNECTIONS_PER_ADDRESS: integer(1, 1_000_000, 256, {
    description:
      'open connections one client address (IPv6: one /64) may hold on each listener, per process; a connection over it is closed at once. The address is the socket’s peer: a proxy named in `TRUST_PROXY` has no such share on the main listener (it limits its clients itself: `deploy/haproxy.cfg`); see docs/limits.md',
  }),
  ADMIN_MAX_CONNECTIONS: integer(1, 1_000_000, 1_000, {
    description: 'open connections of the admin listener per process, a budget of its own beside `MAX_CONNECTIONS`',
  }),
  SHUTDOWN_DRAIN_MS: integer(0, 300_000, 0, {
    description:
      'on SIGTERM/SIGINT, how long `/readyz` answers 503 while every request is still served, before the listener closes: behind a load balancer, longer than its health checks take to pull the instance (5000 with `deploy/haproxy.cfg`)',
  }),
} satisfies Record<string, Variable<unknown>>

/** Every variable of the service as one JSON Schema object (in TypeBox's form), in the order of the reference. */
export const CONFIG_SCHEMA = { type: 'object', properties: VARIABLES } as const

type Variables = Values<typeof VARIABLES>
export type ConfigVariable = keyof Variables

/** The names of every variable the service reads. */
export const CONFIG_VARIABLES = Object.keys(CONFIG_SCHEMA.properties) as ConfigVariable[]

/** The variables the CLI reads too (the others concern only a server). */
export const CLI_VARIABLES = CONFIG_VARIABLES.filter((name) => (VARIABLES[name] as Variable<unknown>).cli === true)

/** Each variable of `env` checked against its schema; unset and empty ones take their default. */
function readVariables(env: Env): Variables {
  const values: Record<string, unknown> = {}
  for (const name of CONFIG_VARIABLES) {
    const schema: Variable<unknown> = VARIABLES[name]
    const raw = env[name]
    if (raw === undefined || raw === '') {
      values[name] = schema.default
      continue
    }
    const problem = problemOf(name, schema, raw)
    if (problem !== undefined) throw new ConfigError(problem)
    values[name] = fromText(schema, raw)
  }
  return values as Variables
}

/** REDIS_URL -> what to connect to (redis-url.ts reads the forms), or a ConfigError naming REDIS_URL. */
export function redisTarget(raw: string): RedisTarget {
  const target = parseRedisTarget(raw)
  if (typeof target === 'string') throw new ConfigError(`REDIS_URL ${target}`)
  return target
}

function trustProxyProblem(raw: string): string | undefined {
  if (raw === 'false') return undefined
  // Fastify 5 trusts nothing for a bare hop count (it cannot check the immediate peer), so a
  // count would silently put every client behind the proxy into one window: refuse it.
  if (/^\d+$/.test(raw)) return "hop counts are not supported: list the proxies' addresses or CIDRs (e.g. 10.0.0.0/8)"
  for (const part of raw.split(',')) {
    const problem = trustedProxyEntryProblem(part.trim())
    if (problem !== undefined) return problem
  }
  return undefined
}

/**
 * One TRUST_PROXY entry, checked as Fastify (proxy-addr) will read it, so a bad one stops the start
 * with a message naming TRUST_PROXY rather than failing later inside Fastify.
 */
function trustedProxyEntryProblem(entry: string): string | undefined {
  if (entry === 'loopback' || entry === 'linklocal' || entry === 'uniquelocal') return undefined
  const bad = (why: string) => `must be false or a comma list of addresses/CIDRs (bad entry ${JSON.stringify(entry)}: ${why})`
  const [address = '', prefix, ...rest] = entry.split('/')
  const family = isIP(address)
  if (family === 0 || rest.length > 0) return bad('not an IP address or CIDR')
  if (prefix === undefined) return undefined
  const max = family === 4 ? 32 : 128
  const length = /^\d{1,3}$/.test(prefix) ? Number(prefix) : Number.NaN
  if (!(length >= 0 && length <= max)) return bad(`the prefix length of an IPv${family} CIDR is 1 to ${max}`)
  const range = new BlockList()
  try {
    range.addSubnet(address, length, family === 4 ? 'ipv4' : 'ipv6')
  } catch {
    return bad('not an IP address or CIDR')
  }
  // A range holding both ends of a family holds all of it (::ffff:0:0/96 is every IPv4 peer).
  const everyone =
    (range.check('0.0.0.0', 'ipv4') && range.check('255.255.255.255', 'ipv4')) ||
    (range.check('::', 'ipv6') && range.check('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'ipv6'))
  if (everyone) {
    return `entry ${JSON.stringify(entry)} trusts every peer, so any client could forge its address in X-Forwarded-For: list only the proxies' addresses or CIDRs`
  }
  return undefined
}

function corsOriginsProblem(raw: string): string | undefined {
  if (raw.trim() === '' || raw.trim() === '*') return undefined
  for (const entry of raw.split(',')) {
    const origin = entry.trim()
    let parsed: URL | undefined
    try {
      parsed = new URL(origin)
    } catch {
      parsed = undefined
    }
    if (parsed === undefined || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin) {
      return `must be * or a comma list of origins such as https://app.example.com (bad entry ${JSON.stringify(origin)})`
    }
  }
  return undefined
}

function trustProxy(raw: string): Config['trustProxy'] {
  return raw === 'false'
    ? false
    : raw
        .split(',')
        .map((part) => part.trim())
        .join(',')
}

function corsOrigins(raw: string | undefined): Config['corsOrigins'] {
  const trimmed = raw?.trim()
  if (trimmed === undefined || trimmed === '') return undefined
  if (trimmed === '*') return '*'
  return trimmed.split(',').map((entry) => entry.trim())
}

/** `data/x.db`, `/abs/x.db`, `sqlite:data/x.db`, `sqlite:///abs/x.db`, `sqlite::memory:` -> a file name for SQLite. */
export function sqliteFilename(databaseUrl: string): string {
  let name = databaseUrl.startsWith('sqlite:') ? databaseUrl.slice('sqlite:'.length) : databaseUrl
  if (name.startsWith('//')) name = name.slice(2)
  return name
}

/** DATABASE_URL names PostgreSQL (anything else is a SQLite file): the one test, for the config and storage/index.ts. */
export const isPostgresUrl = (databaseUrl: string): boolean => /^postgres(ql)?:\/\//.test(databaseUrl)

/**
 * The in-memory limiter's state file: LIMITER_STATE_FILE (`off` disables it), by default beside a
 * SQLite database file. Nowhere by default on PostgreSQL or an in-memory SQLite database: there is
 * no data directory of the service's own to put it in. Redis keeps its own state, so a state file
 * there would only be the fallback's, which must not outlive an outage.
 */
function limiterStateFile(raw: string | undefined, databaseUrl: string, redisUrl: string | undefined): string | undefined {
  if (raw === 'off') return undefined
  if (raw !== undefined) {
    if (redisUrl !== undefined) {
      throw new ConfigError(
        'LIMITER_STATE_FILE applies to the in-memory limiter only; with REDIS_URL the state is in Redis (unset one of them)',
      )
    }
    return raw
  }
  if (redisUrl !== undefined || isPostgresUrl(databaseUrl)) return undefined
  const sqliteFile = sqliteFilename(databaseUrl)
  return sqliteFile === ':memory:' || sqliteFile === '' ? undefined : `${sqliteFile}.limits.json`
}

/**
 * The admin listener (the admin API and /metrics) is a listener of its own, never the main one, in
 * the way Kong's Admin API is: ADMIN_PORT (default 8081; 0 picks a free port) on ADMIN_HOST
 * (default 127.0.0.1, reachable from this machine only). `ADMIN_PORT=off` serves neither anywhere.
 * There is no mode that mounts them on the main listener: the main listener has no route for
 * them, so no spelling of their paths can reach them there.
 */
function adminListener(variables: Variables, adminHostSet: boolean): Pick<Config, 'adminPort' | 'adminHost'> {
  const { ADMIN_PORT: adminPort, ADMIN_HOST: adminHost, PORT: port } = variables
  if (adminPort === 'off') {
    if (adminHostSet) {
      throw new ConfigError('ADMIN_HOST has no effect with ADMIN_PORT=off (there is no admin listener): unset one of them')
    }
    return { adminPort: undefined, adminHost }
  }
  if (adminPort === port && port !== 0) {
    throw new ConfigError(
      `ADMIN_PORT must differ from PORT (both ${port}): the admin API and /metrics have a listener of their own (ADMIN_PORT=off disables it)`,
    )
  }
  return { adminPort, adminHost }
}

export function loadConfig(env: Env = process.env): Config {
  const v = readVariables(env)
  // Validated with the schema; the limiter parses it again with redisTarget to connect.
  const redisUrl = v.REDIS_URL === undefined ? undefined : withoutTrailingSlash(v.REDIS_URL)
  if (v.DATABASE_LISTEN_URL !== undefined && !isPostgresUrl(v.DATABASE_URL)) {
    throw new ConfigError('DATABASE_LISTEN_URL applies to PostgreSQL only: DATABASE_URL is not a postgres:// URL (unset it)')
  }
  const config: Config = {
    env: v.ANIMAL_STORE_ENV,
    host: v.HOST,
    port: v.PORT,
    ...adminListener(v, env.ADMIN_HOST !== undefined && env.ADMIN_HOST !== ''),
    publicBaseUrl: v.PUBLIC_BASE_URL === undefined ? undefined : withoutTrailingSlash(v.PUBLIC_BASE_URL),
    productionBaseUrl: withoutTrailingSlash(v.PRODUCTION_BASE_URL),
    stagingBaseUrl: withoutTrailingSlash(v.STAGING_BASE_URL),
    databaseUrl: v.DATABASE_URL,
    databaseListenUrl: v.DATABASE_LISTEN_URL,
    durability: v.DURABILITY,
    redisUrl,
    redisFailurePolicy: v.REDIS_FAILURE_POLICY,
    redisKeyPrefix: v.REDIS_KEY_PREFIX,
    corsOrigins: corsOrigins(v.CORS_ORIGINS),
    trustProxy: trustProxy(v.TRUST_PROXY),
    logLevel: v.LOG_LEVEL,
    logFile: v.LOG_FILE,
    keyRefreshMs: v.KEY_REFRESH_MS,
    lastUsedFlushMs: v.LAST_USED_FLUSH_MS,
    usageFlushMs: v.USAGE_FLUSH_MS,
    usageMinuteRetentionMs: v.USAGE_MINUTE_RETENTION_HOURS * 3_600_000,
    usageHourRetentionMs: v.USAGE_HOUR_RETENTION_DAYS * 86_400_000,
    orderHoldMs: v.ORDER_HOLD_MINUTES * 60_000,
    orderSweepMs: v.ORDER_SWEEP_MS,
    bootstrapKey: v.BOOTSTRAP_KEY,
    banThreshold: v.BAN_THRESHOLD,
    banBaseSeconds: v.BAN_BASE_SECONDS,
    banMaxSeconds: v.BAN_MAX_SECONDS,
    limiterStateFile: limiterStateFile(v.LIMITER_STATE_FILE, v.DATABASE_URL, redisUrl),
    limiterSnapshotMs: v.LIMITER_SNAPSHOT_MS,
    limiterMaxAddresses: v.LIMITER_MAX_ADDRESSES,
    requestTimeoutMs: v.REQUEST_TIMEOUT_MS,
    headersTimeoutMs: v.HEADERS_TIMEOUT_MS,
    keepAliveTimeoutMs: v.KEEP_ALIVE_TIMEOUT_MS,
    maxHeaderBytes: v.MAX_HEADER_BYTES,
    maxConnections: v.MAX_CONNECTIONS,
    maxConnectionsPerAddress: v.MAX_CONNECTIONS_PER_ADDRESS,
    adminMaxConnections: v.ADMIN_MAX_CONNECTIONS,
    shutdownDrainMs: v.SHUTDOWN_DRAIN_MS,
  }
  if (config.banMaxSeconds < config.banBaseSeconds) {
    throw new ConfigError('BAN_MAX_SECONDS must be at least BAN_BASE_SECONDS')
  }
  if (config.headersTimeoutMs > config.requestTimeoutMs) {
    throw new ConfigError('HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS')
  }
  return config
}
