// What the benchmark sends (the scenarios), what it compares the service with (the peers), and
// where each process runs (the CPUs).

export const POST_BODY = '{"name":"rex","categoryId":1,"status":"available"}'
export const SQLITE_SCENARIOS = {
  list20: { name: 'GET /v1/pets?limit=20', method: 'GET', path: () => '/v1/pets?limit=20', expect: 200 },
  list100: {
    name: 'GET /v1/pets?limit=100&status=available',
    method: 'GET',
    path: () => '/v1/pets?limit=100&status=available',
    expect: 200,
  },
  get: { name: 'GET /v1/pets/{id} (deprecated)', method: 'GET', path: (ctx) => `/v1/pets/${ctx.getId}`, expect: 200 },
  post: { name: 'POST /v1/pets', method: 'POST', path: () => '/v1/pets', body: POST_BODY, expect: 201 },
}
export const PG_SCENARIOS = ['list20', 'post']
/** The scenarios the peers answer (bench/peers/): the goals are set on these two. */
export const PEER_SCENARIOS = ['list20', 'post']

/** What each peer is (recorded in the results; docs/performance.md says why they are the fair comparison). */
export const PEERS = {
  'bare-fastify': {
    backend: 'sqlite',
    script: 'bench/peers/bare-fastify.mjs',
    does: "Fastify 5, no logger, one async handler per captured route answering the service's captured status, headers and body (precomputed); reads the POST body with Fastify's JSON parser",
    doesNot: 'auth, rate limits, computing headers, validation, storage, access log, metrics',
  },
  sqlite: {
    backend: 'sqlite',
    script: 'bench/peers/sqlite-peer.mjs',
    does: "Fastify 5 with JSON schemas, no logger; better-sqlite3 on the service's file (WAL); Bearer key looked up by SHA-256 in api_keys and kept in a Map; an in-memory minute and day window per key with X-RateLimit-Limit/-Remaining/-Reset; keyset SELECT (limit + 1, Link header) or INSERT ... RETURNING, one commit per create",
    doesNot:
      "bans, the other rate-limit headers, usage history, access log, metrics, page cache, group commit, idempotency, int64 beyond 2^53, strict validation (Fastify's default Ajv: coercion, defaults)",
  },
  'pg-redis': {
    backend: 'pg',
    script: 'bench/peers/pg-redis-peer.mjs',
    does: 'Fastify 5 with JSON schemas, no logger; Bearer key checked by SHA-256 against one key known at start; one Redis EVALSHA per request (INCR + EXPIRE of a per-minute window key, ioredis auto-pipelining); keyset SELECT ... WHERE id > $1 ORDER BY id LIMIT $2 (limit + 1, Link header) or INSERT ... RETURNING with pg (pool of 10, unnamed statements) on the same tables',
    doesNot:
      "second (daily) window, bans, rate-limit headers, key cache invalidation, usage history, access log, metrics, idempotency, int64 beyond 2^53, strict validation (Fastify's default Ajv: coercion, defaults)",
  },
}

/** The service, the ceiling and the peers run on CPU 1; wrk and the paced generator on CPU 0. */
export const SERVER_CPU = 1
export const LOAD_CPU = 0
