import { BlockList, isIP } from 'node:net'

/**
 * Environment -> typed, validated configuration. Every variable is read here and nowhere else;
 * a bad value stops the process at start with a message naming the variable and what it accepts.
 */
export type Environment = 'production' | 'staging'
export type Durability = 'process' | 'power'
export type RedisFailurePolicy = 'open' | 'closed'

export interface RedisNode {
  host: string
  port: number
}

/** What REDIS_URL names: one server, a Redis Cluster (its seed nodes) or a master found through Sentinels. */
export type RedisTarget =
  | { mode: 'single'; url: string }
  | { mode: 'cluster'; nodes: RedisNode[]; tls: boolean; username?: string; password?: string }
  | { mode: 'sentinel'; sentinels: RedisNode[]; masterName: string; tls: boolean; username?: string; password?: string }

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
  /** Node HTTP server limits against slow or hostile clients. */
  requestTimeoutMs: number
  headersTimeoutMs: number
  keepAliveTimeoutMs: number
  maxHeaderBytes: number
  maxConnections: number
  /**
   * On SIGTERM/SIGINT, how long /readyz answers 503 while every request is still served, before
   * the listener closes: the time a load balancer's health checks need to take the instance out.
   */
  shutdownDrainMs: number
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ConfigError'
  }
}

type Env = Record<string, string | undefined>

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if ((allowed as readonly string[]).includes(raw)) return raw as T
  throw new ConfigError(`${name} must be one of ${allowed.join(', ')} (got ${JSON.stringify(raw)})`)
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got ${JSON.stringify(raw)})`)
  }
  return Number(raw)
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false
  throw new ConfigError(`${name} must be true or false (got ${JSON.stringify(raw)})`)
}

function url(env: Env, name: string, fallback: string, protocols: string[]): string {
  const raw = env[name] || fallback
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw new ConfigError(`${name} must be an absolute URL (got ${JSON.stringify(raw)})`)
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')} (got ${JSON.stringify(raw)})`)
  }
  return raw.replace(/\/+$/, '')
}

const MULTI_NODE_URL = /^(rediss?)\+(cluster|sentinel):\/\/(?:([^@/]*)@)?([^/?#@]+)(?:\/([^?#]*))?$/
const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/

/**
 * REDIS_URL -> what to connect to: `redis://` or `rediss://` (one server), or
 * `redis+cluster://[user:password@]host:port,host:port,…` (a Redis Cluster, its seed nodes) or
 * `redis+sentinel://[user:password@]host:port,…/master-name` (Sentinels, and the name of the master
 * they watch); `rediss+…` for TLS. The user and password are the Redis servers' (not the Sentinels').
 */
export function redisTarget(raw: string): RedisTarget {
  const multi = MULTI_NODE_URL.exec(raw)
  if (multi === null) {
    try {
      return { mode: 'single', url: url({ REDIS_URL: raw }, 'REDIS_URL', '', ['redis:', 'rediss:']) }
    } catch (error) {
      throw new ConfigError(
        `${(error as Error).message}; a cluster is redis+cluster://host:port,host:port,…, Sentinels redis+sentinel://host:port,…/master-name`,
      )
    }
  }
  const [, scheme, mode, userinfo, hostList, path] = multi as unknown as [
    string,
    string,
    'cluster' | 'sentinel',
    string | undefined,
    string,
    string | undefined,
  ]
  const shape = mode === 'cluster' ? 'redis+cluster://host:port,host:port,…' : 'redis+sentinel://host:port,host:port,…/master-name'
  const nodes = hostList.split(',').map((entry) => {
    const hostPort = HOST_PORT.exec(entry.trim())
    const port = Number(hostPort?.[2])
    if (hostPort === null || port < 1 || port > 65535) {
      throw new ConfigError(`REDIS_URL must be ${shape}: ${JSON.stringify(entry)} is not host:port`)
    }
    return { host: hostPort[1]!.replace(/^\[|\]$/g, ''), port }
  })
  const colon = userinfo?.indexOf(':') ?? -1
  const credentials: { username?: string; password?: string } = {}
  if (userinfo !== undefined && userinfo !== '') {
    const username = decodeURIComponent(colon < 0 ? userinfo : userinfo.slice(0, colon))
    if (username !== '') credentials.username = username
    if (colon >= 0) credentials.password = decodeURIComponent(userinfo.slice(colon + 1))
  }
  const tls = scheme === 'rediss'
  if (mode === 'cluster') {
    if (path !== undefined && path !== '')
      throw new ConfigError(`REDIS_URL must be ${shape}: a cluster URL has no path (no database number)`)
    return { mode, nodes, tls, ...credentials }
  }
  if (path === undefined || !/^[A-Za-z0-9._-]+$/.test(path)) {
    throw new ConfigError(`REDIS_URL must be ${shape}: name the master the Sentinels watch (e.g. /mymaster)`)
  }
  return { mode, sentinels: nodes, masterName: path, tls, ...credentials }
}

function trustProxy(env: Env): Config['trustProxy'] {
  const raw = env.TRUST_PROXY
  if (raw === undefined || raw === '' || raw === 'false') return false
  // Fastify 5 trusts nothing for a bare hop count (it cannot check the immediate peer), so a
  // count would silently put every client behind the proxy into one window: refuse it.
  if (/^\d+$/.test(raw)) {
    throw new ConfigError("TRUST_PROXY hop counts are not supported: list the proxies' addresses or CIDRs (e.g. 10.0.0.0/8)")
  }
  const parts = raw.split(',').map((p) => p.trim())
  for (const part of parts) trustedProxyEntry(part)
  return parts.join(',')
}

/**
 * One TRUST_PROXY entry, checked as Fastify (proxy-addr) will read it, so a bad one stops the start
 * with a message naming TRUST_PROXY rather than failing later inside Fastify.
 */
function trustedProxyEntry(entry: string): void {
  if (entry === 'loopback' || entry === 'linklocal' || entry === 'uniquelocal') return
  const bad = (why: string) =>
    new ConfigError(`TRUST_PROXY must be false or a comma list of addresses/CIDRs (bad entry ${JSON.stringify(entry)}: ${why})`)
  const [address = '', prefix, ...rest] = entry.split('/')
  const family = isIP(address)
  if (family === 0 || rest.length > 0) throw bad('not an IP address or CIDR')
  if (prefix === undefined) return
  const max = family === 4 ? 32 : 128
  const length = /^\d{1,3}$/.test(prefix) ? Number(prefix) : Number.NaN
  if (!(length >= 0 && length <= max)) throw bad(`the prefix length of an IPv${family} CIDR is 1 to ${max}`)
  const range = new BlockList()
  try {
    range.addSubnet(address, length, family === 4 ? 'ipv4' : 'ipv6')
  } catch {
    throw bad('not an IP address or CIDR')
  }
  // A range holding both ends of a family holds all of it (::ffff:0:0/96 is every IPv4 peer).
  const everyone =
    (range.check('0.0.0.0', 'ipv4') && range.check('255.255.255.255', 'ipv4')) ||
    (range.check('::', 'ipv6') && range.check('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'ipv6'))
  if (everyone) {
    throw new ConfigError(
      `TRUST_PROXY entry ${JSON.stringify(entry)} trusts every peer, so any client could forge its address in X-Forwarded-For: list only the proxies' addresses or CIDRs`,
    )
  }
}

function corsOrigins(env: Env): Config['corsOrigins'] {
  const raw = env.CORS_ORIGINS?.trim()
  if (raw === undefined || raw === '') return undefined
  if (raw === '*') return '*'
  return raw.split(',').map((entry) => {
    const origin = entry.trim()
    let parsed: URL | undefined
    try {
      parsed = new URL(origin)
    } catch {
      parsed = undefined
    }
    if (parsed === undefined || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin) {
      throw new ConfigError(
        `CORS_ORIGINS must be * or a comma list of origins such as https://app.example.com (bad entry ${JSON.stringify(origin)})`,
      )
    }
    return origin
  })
}

/** `data/x.db`, `/abs/x.db`, `sqlite:data/x.db`, `sqlite:///abs/x.db`, `sqlite::memory:` -> a file name for SQLite. */
export function sqliteFilename(databaseUrl: string): string {
  let name = databaseUrl.startsWith('sqlite:') ? databaseUrl.slice('sqlite:'.length) : databaseUrl
  if (name.startsWith('//')) name = name.slice(2)
  return name
}

const isPostgresUrl = (databaseUrl: string) => /^postgres(ql)?:\/\//.test(databaseUrl)

function databaseUrl(env: Env): string {
  const raw = env.DATABASE_URL
  if (raw === undefined || raw === '') return 'data/animal-store.db'
  if (isPostgresUrl(raw) || raw.startsWith('sqlite:') || !/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) {
    return raw
  }
  throw new ConfigError(
    `DATABASE_URL must be a file path, a sqlite: URL or a postgres:// URL (got scheme ${JSON.stringify(raw.split(':')[0])})`,
  )
}

function databaseListenUrl(env: Env, databaseUrl: string): Config['databaseListenUrl'] {
  const raw = env.DATABASE_LISTEN_URL
  if (raw === undefined || raw === '') return undefined
  if (!isPostgresUrl(databaseUrl)) {
    throw new ConfigError('DATABASE_LISTEN_URL applies to PostgreSQL only: DATABASE_URL is not a postgres:// URL (unset it)')
  }
  if (raw === 'off' || isPostgresUrl(raw)) return raw
  throw new ConfigError(`DATABASE_LISTEN_URL must be a postgres:// URL or off (got scheme ${JSON.stringify(raw.split(':')[0])})`)
}

/**
 * The in-memory limiter's state file: LIMITER_STATE_FILE (`off` disables it), by default beside a
 * SQLite database file. Nowhere by default on PostgreSQL or an in-memory SQLite database: there is
 * no data directory of the service's own to put it in. Redis keeps its own state, so a state file
 * there would only be the fallback's, which must not outlive an outage.
 */
function limiterStateFile(env: Env, databaseUrl: string, redisUrl: string | undefined): string | undefined {
  const raw = env.LIMITER_STATE_FILE
  if (raw === 'off') return undefined
  if (raw !== undefined && raw !== '') {
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

/** Where the admin listener is when ADMIN_PORT is not set. */
export const DEFAULT_ADMIN_PORT = 8081

/**
 * The admin listener (the admin API and /metrics) is a listener of its own, never the main one, in
 * the way Kong's Admin API is: ADMIN_PORT (default 8081; 0 picks a free port) on ADMIN_HOST
 * (default 127.0.0.1, reachable from this machine only). `ADMIN_PORT=off` serves neither anywhere.
 * There is no mode that mounts them on the main listener: the main listener has no route for
 * them, so no spelling of their paths can reach them there.
 */
function adminListener(env: Env, port: number): Pick<Config, 'adminPort' | 'adminHost'> {
  const raw = env.ADMIN_PORT
  const adminHost = env.ADMIN_HOST || '127.0.0.1'
  if (raw === 'off') {
    if (env.ADMIN_HOST)
      throw new ConfigError('ADMIN_HOST has no effect with ADMIN_PORT=off (there is no admin listener): unset one of them')
    return { adminPort: undefined, adminHost }
  }
  if (raw !== undefined && raw !== '' && !/^\d+$/.test(raw)) {
    throw new ConfigError(`ADMIN_PORT must be an integer from 0 to 65535 or off (got ${JSON.stringify(raw)})`)
  }
  const adminPort = int(env, 'ADMIN_PORT', DEFAULT_ADMIN_PORT, 0, 65535)
  if (adminPort === port && port !== 0) {
    throw new ConfigError(
      `ADMIN_PORT must differ from PORT (both ${port}): the admin API and /metrics have a listener of their own (ADMIN_PORT=off disables it)`,
    )
  }
  if (!isIP(adminHost) && !/^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$/.test(adminHost)) {
    throw new ConfigError(`ADMIN_HOST must be an IP address or a host name (got ${JSON.stringify(adminHost)})`)
  }
  return { adminPort, adminHost }
}

export function loadConfig(env: Env = process.env): Config {
  const port = int(env, 'PORT', 8080, 0, 65535)
  // Validated here; the limiter parses it again with the same function to connect.
  const redisUrl = env.REDIS_URL ? env.REDIS_URL.replace(/\/+$/, '') : undefined
  if (redisUrl !== undefined) redisTarget(redisUrl)
  const database = databaseUrl(env)
  const config: Config = {
    env: oneOf(env, 'ANIMAL_STORE_ENV', ['production', 'staging'] as const, 'production'),
    host: env.HOST || '0.0.0.0',
    port,
    ...adminListener(env, port),
    publicBaseUrl: env.PUBLIC_BASE_URL ? url(env, 'PUBLIC_BASE_URL', '', ['http:', 'https:']) : undefined,
    productionBaseUrl: url(env, 'PRODUCTION_BASE_URL', 'https://api.animal-store.example', ['http:', 'https:']),
    stagingBaseUrl: url(env, 'STAGING_BASE_URL', 'https://staging.api.animal-store.example', ['http:', 'https:']),
    databaseUrl: database,
    databaseListenUrl: databaseListenUrl(env, database),
    durability: oneOf(env, 'DURABILITY', ['process', 'power'] as const, 'process'),
    redisUrl,
    redisFailurePolicy: oneOf(env, 'REDIS_FAILURE_POLICY', ['open', 'closed'] as const, 'open'),
    corsOrigins: corsOrigins(env),
    trustProxy: trustProxy(env),
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    logFile: env.LOG_FILE || undefined,
    keyRefreshMs: int(env, 'KEY_REFRESH_MS', 1000, 50, 60_000),
    lastUsedFlushMs: int(env, 'LAST_USED_FLUSH_MS', 5000, 100, 600_000),
    bootstrapKey: bool(env, 'BOOTSTRAP_KEY', true),
    banThreshold: int(env, 'BAN_THRESHOLD', 0, 0, 1_000_000),
    banBaseSeconds: int(env, 'BAN_BASE_SECONDS', 60, 1, 86_400),
    banMaxSeconds: int(env, 'BAN_MAX_SECONDS', 3600, 1, 7 * 86_400),
    limiterStateFile: limiterStateFile(env, database, redisUrl),
    limiterSnapshotMs: int(env, 'LIMITER_SNAPSHOT_MS', 2000, 100, 600_000),
    requestTimeoutMs: int(env, 'REQUEST_TIMEOUT_MS', 10_000, 100, 600_000),
    headersTimeoutMs: int(env, 'HEADERS_TIMEOUT_MS', 5_000, 100, 600_000),
    keepAliveTimeoutMs: int(env, 'KEEP_ALIVE_TIMEOUT_MS', 5_000, 100, 600_000),
    maxHeaderBytes: int(env, 'MAX_HEADER_BYTES', 8_192, 1_024, 65_536),
    maxConnections: int(env, 'MAX_CONNECTIONS', 10_000, 1, 1_000_000),
    shutdownDrainMs: int(env, 'SHUTDOWN_DRAIN_MS', 0, 0, 300_000),
  }
  if (config.banMaxSeconds < config.banBaseSeconds) {
    throw new ConfigError('BAN_MAX_SECONDS must be at least BAN_BASE_SECONDS')
  }
  if (config.headersTimeoutMs > config.requestTimeoutMs) {
    throw new ConfigError('HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS')
  }
  return config
}
