import { isIP } from 'node:net'
import { corsOrigins, corsOriginsProblem, trustProxy, trustProxyProblem } from './address-lists.js'
import { databaseUrlProblem, listenUrlProblem } from './database-url.js'
import { DURATION_WORDS, durationListProblem, durationProblem, parseDuration, parseDurationList } from './durations.js'
import { parseRedisTarget } from './redis-url.js'
import { flag, integer, integerOrOff, oneOf, optional, text, urlProblem, type VariableNotes, withoutTrailingSlash } from './schema.js'

/** LIMITER_MAX_ADDRESSES by default: ~20 MB of the in-memory limiter, ~6 MB of state file, ~21 MB of Redis a day. */
export const DEFAULT_MAX_ADDRESSES = 100_000

/** The most waits WEBHOOK_RETRY_SCHEDULE may list (Svix's schedule has 7). */
const MAX_RETRIES = 20

/** Where the admin listener is when ADMIN_PORT is not set. */
export const DEFAULT_ADMIN_PORT = 8081

/** An absolute http(s) URL; in Config without its trailing slashes (links append paths to it). */
const httpUrl = <const Field extends string>(notes: VariableNotes & { field: Field; default?: string }) =>
  text({ accepts: 'an absolute `http:` or `https:` URL', toConfig: withoutTrailingSlash, ...notes }, (value) =>
    urlProblem(value, ['http:', 'https:']),
  )

/** What is wrong with ADMIN_HOST (the message after its name), or undefined. */
const adminHostProblem = (value: string) =>
  isIP(value) || /^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$/.test(value)
    ? undefined
    : `must be an IP address or a host name (got ${JSON.stringify(value)})`

/**
 * Every variable of the service, in the order of the reference: its schema, default and meaning,
 * and where its value lands in Config (`field`, and `toConfig` when it is not the value itself). A
 * variable that is unset or empty takes its default. The rules between variables, and the defaults
 * that depend on other variables, are in rules.ts.
 */
export const VARIABLES = {
  ANIMAL_STORE_ENV: oneOf(['production', 'staging'], 'production', {
    field: 'env',
    cli: true,
    description:
      'key prefix (`as_live_` / `as_test_`: a key of the other environment is refused); named in the OpenAPI document’s server for `PUBLIC_BASE_URL`',
  }),
  PORT: integer(0, 65535, 8080, { field: 'port', description: 'where the API listens (`0`: a free port)' }),
  // Loopback by default, like Fastify's own default and the admin listener: a quick start on a laptop is not
  // reachable from the network by accident; containers and deployments set HOST=0.0.0.0 (docs/deployment.md).
  HOST: text({
    field: 'host',
    default: '127.0.0.1',
    accepts: 'an address or host name',
    description: 'the address the API listens on (`0.0.0.0`: all interfaces, for containers and deployments)',
  }),
  ADMIN_PORT: integerOrOff(0, 65535, DEFAULT_ADMIN_PORT, {
    field: 'adminPort',
    toConfig: (port) => (port === 'off' ? undefined : port),
    description:
      'the admin listener: the admin API and `/metrics`, never on the main listener; `0` a free port, `off` neither anywhere; must differ from `PORT`',
  }),
  ADMIN_HOST: text(
    {
      field: 'adminHost',
      default: '127.0.0.1',
      accepts: 'an IP address or a host name',
      description: 'the address of the admin listener (the default is reachable from this machine only)',
    },
    adminHostProblem,
  ),
  PUBLIC_BASE_URL: optional(
    httpUrl({
      field: 'publicBaseUrl',
      defaultText: 'unset (links are relative)',
      description: 'origin clients reach this instance at (no `/v1`): makes links absolute and adds it to the OpenAPI servers',
    }),
  ),
  // Listed only when set: made-up defaults were offered in the docs console's Servers list and failed there.
  PRODUCTION_BASE_URL: optional(
    httpUrl({
      field: 'productionBaseUrl',
      defaultText: 'unset (not listed)',
      description: 'the production server listed in the OpenAPI document (+ `/v1`), when set',
    }),
  ),
  STAGING_BASE_URL: optional(
    httpUrl({
      field: 'stagingBaseUrl',
      defaultText: 'unset (not listed)',
      description: 'the staging server listed in the OpenAPI document (+ `/v1`), when set',
    }),
  ),
  DATABASE_URL: text(
    {
      field: 'databaseUrl',
      default: 'data/animal-store.db',
      cli: true,
      accepts: 'a SQLite file path or `sqlite:` URL (`sqlite:///abs/path.db`, `sqlite::memory:`), or `postgres://…`',
      description:
        'the database (a relative path is relative to the working directory); a SQLite file serves one server process, which holds `<file>.lock` (the CLI works beside it)',
    },
    databaseUrlProblem,
  ),
  DATABASE_LISTEN_URL: optional(
    text(
      {
        // In Config as written: undefined is DATABASE_URL's server, `off` no LISTEN at all (storage/postgres reads both).
        field: 'databaseListenUrl',
        defaultText: '`DATABASE_URL`',
        cli: true,
        accepts: '`postgres://…` or `off`',
        description:
          'PostgreSQL only: where the revocation `LISTEN` connection goes; behind PgBouncer in transaction mode, PostgreSQL itself (or `off`: revocations by polling alone); see docs/deployment.md',
      },
      listenUrlProblem,
    ),
  ),
  DURABILITY: oneOf(['process', 'power'], 'process', {
    field: 'durability',
    cli: true,
    description:
      '`process`: a 201 survives a crash of the process (SQLite WAL, `synchronous=NORMAL`); `power`: fsync per commit (`synchronous=FULL`), with group commit',
  }),
  REDIS_URL: optional(
    text(
      {
        field: 'redisUrl',
        toConfig: withoutTrailingSlash,
        defaultText: 'unset (limits in memory)',
        cli: true,
        accepts: '`redis://…` or `rediss://…` (TLS), `redis+cluster://h1:p1,h2:p2,…`, `redis+sentinel://s1:p1,s2:p2,…/mymaster`',
        description:
          'shared rate-limit state for many instances: one server, a Redis Cluster (its seed nodes) or a master found through Sentinels (docs/deployment.md)',
      },
      (value) => {
        const target = parseRedisTarget(withoutTrailingSlash(value))
        return typeof target === 'string' ? target : undefined
      },
    ),
  ),
  REDIS_FAILURE_POLICY: oneOf(['open', 'closed'], 'open', {
    field: 'redisFailurePolicy',
    description: 'when Redis is unreachable: `open` = decide with a local in-memory limiter; `closed` = 503',
  }),
  REDIS_KEY_PREFIX: text(
    {
      field: 'redisKeyPrefix',
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
        field: 'corsOrigins',
        toConfig: corsOrigins,
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
      field: 'trustProxy',
      toConfig: trustProxy,
      default: 'false',
      accepts: '`false` or a comma list of addresses/CIDRs (`loopback`, `linklocal`, `uniquelocal` allowed)',
      description:
        'proxies trusted for `X-Forwarded-For` on the main listener (the admin listener trusts none); hop counts and ranges holding every peer (`0.0.0.0/0`, `::/0`) are refused; a forwarded value that is not an address is limited as the proxy that sent it',
    },
    trustProxyProblem,
  ),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info', {
    field: 'logLevel',
    description: 'pino JSON logs; `info` writes one access line per request',
  }),
  LOG_FILE: optional(
    text({
      field: 'logFile',
      defaultText: 'unset (stdout)',
      accepts: 'a file path',
      description: 'where the log goes (appended; its directory is created)',
    }),
  ),
  KEY_REFRESH_MS: integer(50, 60_000, 1000, {
    field: 'keyRefreshMs',
    description: 'how often each server polls the key change log (creations, updates, rotations, revocations)',
  }),
  LAST_USED_FLUSH_MS: integer(100, 600_000, 5000, {
    field: 'lastUsedFlushMs',
    description: 'how often the last-use times of keys are written to storage, in one batch',
  }),
  USAGE_FLUSH_MS: integer(100, 60_000, 5000, {
    field: 'usageFlushMs',
    description:
      'how often each server writes its per-key usage counts (usage history) to storage, in one transaction: the most a `kill -9` can lose',
  }),
  USAGE_MINUTE_RETENTION_HOURS: integer(1, 720, 48, {
    field: 'usageMinuteRetentionMs',
    toConfig: (hours) => hours * 3_600_000,
    description: 'how long per-minute usage history is kept',
  }),
  USAGE_HOUR_RETENTION_DAYS: integer(1, 3650, 90, {
    field: 'usageHourRetentionMs',
    toConfig: (days) => days * 86_400_000,
    description: 'how long per-hour usage history is kept',
  }),
  EVENT_RETENTION_DAYS: integer(1, 3650, 30, {
    field: 'eventRetentionMs',
    toConfig: (days) => days * 86_400_000,
    description: 'how long the event log keeps an event (`GET /v1/events`, `GET /admin/v1/events`); older ones are swept by every server',
  }),
  ORDER_HOLD_MINUTES: integer(1, 10_080, 30, {
    field: 'orderHoldMs',
    toConfig: (minutes) => minutes * 60_000,
    description:
      'how long a placed order holds its animal (`pending`): not completed or cancelled by then, it expires and the animal is `available` again; fixed when the order is placed',
  }),
  ORDER_SWEEP_MS: integer(100, 600_000, 10_000, {
    field: 'orderSweepMs',
    description:
      'how often each server expires the orders whose hold ran out (changes that need it expire an order at once; reads see it within this interval)',
  }),
  SECRET_SCANNING_PUBLIC_KEYS: optional(
    text({
      field: 'secretScanningPublicKeys',
      defaultText: 'unset (no secret scanning endpoint: 404)',
      accepts: 'a file path',
      description:
        'a JSON file of GitHub’s secret scanning public keys, in the form of https://api.github.com/meta/public_keys/secret_scanning; when set, `POST /v1/secret-scanning/github` takes GitHub’s reports of leaked keys, signed by one of them (docs/operations.md)',
    }),
  ),
  SECRET_SCANNING_ACTION: oneOf(['revoke', 'flag'], 'revoke', {
    field: 'secretScanningAction',
    description:
      'what a verified report of a leaked key does: `revoke` it (and the rest of its rotation chain’s grace), or `flag` it (a `key.leak_reported` audit entry only); both are audited by `secret_scanner`/`github`',
  }),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: flag(false, {
    field: 'webhookAllowPrivateNetworks',
    cli: true,
    description:
      'let webhook endpoints use `http` and point at loopback, private, link-local and other non-public addresses, for development and tests. Off by default: an endpoint must be `https` and its host must be, and resolve only to, public addresses, so that whoever may create an endpoint cannot make the service send requests inside its own network (its admin listener, a database’s HTTP port, the cloud’s metadata service at 169.254.169.254) and learn from the delivery log what answered (events.md)',
  }),
  WEBHOOK_DELIVERY: oneOf(['on', 'off'], 'on', {
    field: 'webhookDelivery',
    description:
      'whether this server sends webhooks: `off`, it makes no attempts (the events wait in the log, for the servers that do): for an instance that should only serve the API. With every server `off`, nothing is sent (`animal_store_webhook_events_undispatched` grows)',
  }),
  WEBHOOK_RETRY_SCHEDULE: text(
    {
      field: 'webhookRetryScheduleMs',
      toConfig: parseDurationList,
      default: '5s,5m,30m,2h,5h,10h,10h',
      accepts: `a comma-separated list of 1 to ${MAX_RETRIES} durations, each ${DURATION_WORDS}, from 1ms to 7d`,
      description:
        'how long a webhook delivery waits after each failed attempt (a timeout, a network error, any answer but a 2xx) before the next: after the first, the second, …; after the last, the delivery is given up (`failed`). Each wait varies by up to ±10% (jitter), so that deliveries that failed together are not tried again together (events.md)',
    },
    (value) => durationListProblem(value, MAX_RETRIES, 1, 7 * 86_400_000, 'from 1ms to 7d'),
  ),
  WEBHOOK_TIMEOUT_MS: integer(100, 60_000, 10_000, {
    field: 'webhookTimeoutMs',
    description:
      'how long one webhook delivery attempt may take, from the connection to the end of the answer (its first 64 KiB: the rest is not read); past it, the attempt has failed',
  }),
  WEBHOOK_DISABLE_AFTER: text(
    {
      field: 'webhookDisableAfterMs',
      toConfig: (value) => parseDuration(value)!,
      default: '5d',
      accepts: `${DURATION_WORDS}, from 1s to 365d`,
      description:
        'how long a webhook endpoint’s deliveries may fail without a success in between before the endpoint is disabled (`disabledReason` `failing`) and a `webhook_endpoint.disabled` event is recorded',
    },
    (value) => durationProblem(value, 1_000, 365 * 86_400_000, 'from 1s to 365d'),
  ),
  WEBHOOK_CONCURRENCY: integer(1, 100, 10, {
    field: 'webhookConcurrency',
    description:
      'how many webhook delivery attempts each server makes at once, at most (never on a request’s path). An endpoint whose last attempt failed has one attempt at a time, and such endpoints together at most half of these: receivers that never answer hold those, and the endpoints that answer keep the rest',
  }),
  BOOTSTRAP_KEY: flag(true, { field: 'bootstrapKey', description: 'create and print one Free key on a first start with no key' }),
  BAN_THRESHOLD: integer(0, 1_000_000, 0, {
    field: 'banThreshold',
    cli: true,
    description: 'rejected requests within one minute window that trigger a temporary ban (`0`: the key’s per-minute limit, at least 10)',
  }),
  BAN_BASE_SECONDS: integer(1, 86_400, 60, {
    field: 'banBaseSeconds',
    cli: true,
    description: 'the first ban’s length; each further ban doubles it',
  }),
  BAN_MAX_SECONDS: integer(1, 7 * 86_400, 3600, {
    field: 'banMaxSeconds',
    cli: true,
    description: 'the longest ban (at least `BAN_BASE_SECONDS`)',
  }),
  LIMITER_STATE_FILE: optional(
    text({
      field: 'limiterStateFile',
      toConfig: (file) => (file === 'off' ? undefined : file),
      defaultText: '`<SQLite file>.limits.json`; none on PostgreSQL, `:memory:` or with `REDIS_URL`',
      accepts: 'a file path or `off`',
      cli: true,
      description:
        'where the in-memory limiter keeps windows and bans across restarts; `off` disables it; refused together with `REDIS_URL` (the state is in Redis)',
    }),
  ),
  LIMITER_SNAPSHOT_MS: integer(100, 600_000, 2000, {
    field: 'limiterSnapshotMs',
    description: 'how often the state file is written when something changed: the most a `kill -9` can lose',
  }),
  LIMITER_MAX_ADDRESSES: integer(0, 10_000_000, DEFAULT_MAX_ADDRESSES, {
    field: 'limiterMaxAddresses',
    description:
      'keyless client addresses (IPv6: /64s) the limiter counts one by one (per UTC day with `REDIS_URL`); further ones share 1,024 overflow counters, so are refused sooner, never later; bounds the limiter’s memory, state file and Redis keys (limits.md)',
  }),
  LIMITER_LEASE_MAX: integer(1, 100_000, 256, {
    field: 'limiterLeaseMax',
    description:
      'with `REDIS_URL`: the most admissions of a key’s windows one call to Redis reserves for this instance, so a busy key costs one call per run instead of one per request; runs shrink to one near the limit and never admit more than it; `1` makes one call per request (limits.md)',
  }),
  REQUEST_TIMEOUT_MS: integer(100, 600_000, 10_000, {
    field: 'requestTimeoutMs',
    description: 'the longest a request may take to arrive in full',
  }),
  HEADERS_TIMEOUT_MS: integer(100, 600_000, 5_000, {
    field: 'headersTimeoutMs',
    description: 'the longest a request’s headers may take to arrive (at most `REQUEST_TIMEOUT_MS`)',
  }),
  KEEP_ALIVE_TIMEOUT_MS: integer(100, 600_000, 5_000, {
    field: 'keepAliveTimeoutMs',
    description: 'how long an idle keep-alive connection stays open; behind a load balancer, above its idle timeout',
  }),
  MAX_HEADER_BYTES: integer(1_024, 65_536, 8_192, { field: 'maxHeaderBytes', description: 'the largest request header section' }),
  MAX_CONNECTIONS: integer(1, 1_000_000, 10_000, {
    field: 'maxConnections',
    description: 'open connections per process (keep it under `ulimit -n`)',
  }),
  MAX_CONNECTIONS_PER_ADDRESS: integer(1, 1_000_000, 256, {
    field: 'maxConnectionsPerAddress',
    description:
      'open connections one client address (IPv6: one /64) may hold on each listener, per process; a connection over it is closed at once. The address is the socket’s peer: a proxy named in `TRUST_PROXY` has no such share on the main listener (it limits its clients itself: `deploy/haproxy.cfg`); see docs/limits.md',
  }),
  ADMIN_MAX_CONNECTIONS: integer(1, 1_000_000, 1_000, {
    field: 'adminMaxConnections',
    description: 'open connections of the admin listener per process, a budget of its own beside `MAX_CONNECTIONS`',
  }),
  MAX_HEAP_MB: integerOrOff(64, 65_536, 192, {
    field: 'maxHeapMb',
    toConfig: (megabytes) => (megabytes === 'off' ? undefined : megabytes),
    description:
      'the bound of a server process’s JavaScript heap in MB (V8’s old space, `node --max-old-space-size`), given by `npm start` and `serve --workers N` to the processes they start; `node dist/server.js` and `serve` take node’s own flag or `NODE_OPTIONS` instead; `off`: node’s default, from the machine’s memory (deployment.md)',
  }),
  SHUTDOWN_DRAIN_MS: integer(0, 300_000, 0, {
    field: 'shutdownDrainMs',
    description:
      'on SIGTERM/SIGINT, how long `/readyz` answers 503 while every request is still served, before the listener closes: behind a load balancer, longer than its health checks take to pull the instance (5000 with `deploy/haproxy.cfg`)',
  }),
}

export type Declarations = typeof VARIABLES
export type ConfigVariable = keyof Declarations

/** Each variable's value, as its schema checked it (before it lands in Config). */
export type VariableValues = { [Name in ConfigVariable]: Declarations[Name]['default'] }
