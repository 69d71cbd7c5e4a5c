#!/usr/bin/env node
// The scaled-out path's peer: the service a user would write by hand for the same two routes on
// the same PostgreSQL tables and the same Redis. Fastify 5 with JSON schemas (validation and
// serialization), no logger; the bearer key checked against ONE key whose SHA-256 is known at
// start (a real minimal service keeps its keys in memory too); one Redis EVALSHA per request
// (INCR + EXPIRE on a per-minute window key: the limiter one writes by hand); one keyset SELECT
// (GET) or one INSERT ... RETURNING (POST) with `pg` (a pool of 10 that closes idle connections
// after 30 s, unnamed statements: the service's own pool settings and statement kind); ioredis with
// auto-pipelining. No second window, no bans, no usage history, no access log, no metrics, no
// idempotency, no int64 beyond 2^53.
//
// Usage: DATABASE_URL=postgres://... REDIS_URL=redis://... PEER_API_KEY=<key> \
//          node bench/peers/pg-redis-peer.mjs <port> [host]
//   PEER_PER_MINUTE: the key's limit per minute (default 1,000,000,000, as the bench key's).
// Prints "peer listening on <host>:<port>" once PostgreSQL and Redis answered; stops on SIGTERM/SIGINT.
import { createHash } from 'node:crypto'
import Fastify from 'fastify'
import { Redis } from 'ioredis'
import pg from 'pg'

const [portArg, host = '127.0.0.1'] = process.argv.slice(2)
const { DATABASE_URL, REDIS_URL = 'redis://127.0.0.1:6379', PEER_API_KEY, PEER_PER_MINUTE = '1000000000' } = process.env
if (!portArg || !DATABASE_URL || !PEER_API_KEY) {
  process.stderr.write('usage: DATABASE_URL=... PEER_API_KEY=... [REDIS_URL=...] node bench/peers/pg-redis-peer.mjs <port> [host]\n')
  process.exit(2)
}

const sha256 = (text) => createHash('sha256').update(text).digest('hex')
/** The one known key, by the hash of its secret. */
const keys = new Map([[sha256(PEER_API_KEY), { id: 'bench', perMinute: Number(PEER_PER_MINUTE) }]])
// This process's own Redis keys: never another run's, nor the service's (`as:rl:...`).
const WINDOW_PREFIX = `bench-peer:${process.pid}:`

// Ids as numbers: a hand-written service accepts the 2^53 bound without a check.
pg.types.setTypeParser(20, Number)
const pool = new pg.Pool({
  connectionString: DATABASE_URL,
  max: 10,
  idleTimeoutMillis: 30_000,
  application_name: 'animal-store-bench-peer',
})
const redis = new Redis(REDIS_URL, { enableAutoPipelining: true, maxRetriesPerRequest: 1 })
// ioredis sends EVALSHA (EVAL once, on NOSCRIPT).
redis.defineCommand('hitMinute', {
  numberOfKeys: 1,
  lua: "local n = redis.call('INCR', KEYS[1]) if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end return n",
})

const COLUMNS = 'id, name, category_id AS "categoryId", status'
const PAGE = `SELECT ${COLUMNS} FROM pets WHERE id > $1 ORDER BY id LIMIT $2`
const PAGE_BY_STATUS = `SELECT ${COLUMNS} FROM pets WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3`
const INSERT = `INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`

const STATUS = { type: 'string', enum: ['available', 'pending', 'sold'] }
const PET = {
  type: 'object',
  properties: { id: { type: 'integer' }, name: { type: 'string' }, categoryId: { type: 'integer' }, status: STATUS },
  required: ['id', 'name', 'categoryId'],
}
const NEW_PET = {
  type: 'object',
  properties: { name: { type: 'string', minLength: 1, maxLength: 200 }, categoryId: { type: 'integer' }, status: STATUS },
  required: ['name', 'categoryId'],
  additionalProperties: false,
}
const LIST_QUERY = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    status: STATUS,
    after: { type: 'integer', minimum: 0, default: 0 },
  },
  additionalProperties: false,
}

const error = (reply, status, code, message) => reply.code(status).send({ code, message, status })

const app = Fastify({ logger: false, keepAliveTimeout: 5000, forceCloseConnections: true })

app.addHook('onRequest', async (request, reply) => {
  const header = request.headers.authorization
  const key = header?.startsWith('Bearer ') ? keys.get(sha256(header.slice(7))) : undefined
  if (key === undefined) return error(reply, 401, 'unauthorized', 'a valid API key is required')
  const count = await redis.hitMinute(`${WINDOW_PREFIX}${key.id}:${Math.floor(Date.now() / 60_000)}`, 60)
  if (count > key.perMinute) return error(reply, 429, 'rate_limited', 'too many requests this minute')
})

app.get('/v1/pets', { schema: { querystring: LIST_QUERY, response: { 200: { type: 'array', items: PET } } } }, async (request, reply) => {
  const { limit, status, after } = request.query
  // One extra row tells whether a next page exists, as the service does.
  const { rows } =
    status === undefined ? await pool.query(PAGE, [after, limit + 1]) : await pool.query(PAGE_BY_STATUS, [status, after, limit + 1])
  if (rows.length > limit) {
    rows.pop()
    reply.header(
      'link',
      `</v1/pets?limit=${limit}${status === undefined ? '' : `&status=${status}`}&after=${rows[limit - 1].id}>; rel="next"`,
    )
  }
  // The service omits an absent status; the serializer would write "" for null.
  for (const row of rows) if (row.status === null) row.status = undefined
  return rows
})

app.post('/v1/pets', { schema: { body: NEW_PET, response: { 201: PET } } }, async (request, reply) => {
  const { name, categoryId, status = null } = request.body
  const { rows } = await pool.query(INSERT, [name, categoryId, status])
  if (rows[0].status === null) rows[0].status = undefined
  reply.code(201)
  return rows[0]
})

const stop = () => {
  app
    .close()
    .then(() => Promise.allSettled([pool.end(), redis.quit()]))
    .then(() => process.exit(0))
  setTimeout(() => process.exit(0), 2000).unref()
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)

// Both backends answer before the peer says it is ready: a failure shows at start, not under load.
await pool.query('SELECT 1 FROM pets LIMIT 1')
await redis.ping()
await app.listen({ port: Number(portArg), host })
process.stdout.write(`peer listening on ${host}:${app.server.address().port}\n`)
