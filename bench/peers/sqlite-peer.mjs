#!/usr/bin/env node
// The embedded path's peer: the service a user would write by hand for the same two routes on the
// same SQLite file. Fastify 5 with JSON schemas (validation and serialization), no logger;
// better-sqlite3 (WAL, as the service opens it); the bearer key looked up by its SHA-256 in the
// service's own `api_keys` table and kept in a Map; an in-memory limiter of a minute and a day
// window per key (two counters in a Map) with X-RateLimit-Limit / -Remaining / -Reset of the
// tighter window; one keyset SELECT (GET) or one INSERT ... RETURNING (POST) per request, each its
// own commit. No bans, no usage history, no access log, no metrics, no page cache, no idempotency,
// no int64 beyond 2^53, no other process's commits seen by a cache (it has none).
//
// Usage: node bench/peers/sqlite-peer.mjs <database file> <port> [host]
// Prints "peer listening on <host>:<port>" once the file answered; stops on SIGTERM/SIGINT.
import { createHash } from 'node:crypto'
import Database from 'better-sqlite3'
import Fastify from 'fastify'

const [file, portArg, host = '127.0.0.1'] = process.argv.slice(2)
if (!file || !portArg) {
  process.stderr.write('usage: node bench/peers/sqlite-peer.mjs <database file> <port> [host]\n')
  process.exit(2)
}

const db = new Database(file)
db.pragma('journal_mode = WAL')
db.pragma('synchronous = NORMAL')

const sha256 = (text) => createHash('sha256').update(text).digest('hex')
const findKey = db.prepare('SELECT id, per_minute AS perMinute, per_day AS perDay FROM api_keys WHERE hash = ?')
/** Keys by the hash of their secret, as found (null: no such key). */
const keys = new Map()
/** Per key: the minute and the day being counted, and their counts. */
const windows = new Map()

const COLUMNS = 'id, name, category_id AS categoryId, status'
const page = db.prepare(`SELECT ${COLUMNS} FROM pets WHERE id > ? ORDER BY id LIMIT ?`)
const pageByStatus = db.prepare(`SELECT ${COLUMNS} FROM pets WHERE status = ? AND id > ? ORDER BY id LIMIT ?`)
const insert = db.prepare(`INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?) RETURNING ${COLUMNS}`)

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
  const hash = header?.startsWith('Bearer ') ? sha256(header.slice(7)) : undefined
  let key = hash === undefined ? null : keys.get(hash)
  if (key === undefined) {
    key = findKey.get(hash) ?? null
    keys.set(hash, key)
  }
  if (key === null) return error(reply, 401, 'unauthorized', 'a valid API key is required')
  const now = Date.now()
  const minute = Math.floor(now / 60_000)
  const day = Math.floor(now / 86_400_000)
  let w = windows.get(key.id)
  if (w === undefined) {
    w = { minute, inMinute: 0, day, inDay: 0 }
    windows.set(key.id, w)
  }
  if (w.minute !== minute) {
    w.minute = minute
    w.inMinute = 0
  }
  if (w.day !== day) {
    w.day = day
    w.inDay = 0
  }
  const allowed = w.inMinute < key.perMinute && w.inDay < key.perDay
  if (allowed) {
    w.inMinute++
    w.inDay++
  }
  const minuteLeft = key.perMinute - w.inMinute
  const dayLeft = key.perDay - w.inDay
  const tighter = minuteLeft <= dayLeft
  reply.headers({
    'x-ratelimit-limit': tighter ? key.perMinute : key.perDay,
    'x-ratelimit-remaining': tighter ? minuteLeft : dayLeft,
    'x-ratelimit-reset': tighter ? (minute + 1) * 60 : (day + 1) * 86_400,
  })
  if (!allowed) return error(reply, 429, 'rate_limited', 'too many requests')
})

app.get('/v1/pets', { schema: { querystring: LIST_QUERY, response: { 200: { type: 'array', items: PET } } } }, async (request, reply) => {
  const { limit, status, after } = request.query
  // One extra row tells whether a next page exists, as the service does.
  const rows = status === undefined ? page.all(after, limit + 1) : pageByStatus.all(status, after, limit + 1)
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
  const row = insert.get(name, categoryId, status)
  if (row.status === null) row.status = undefined
  reply.code(201)
  return row
})

const stop = () => {
  app
    .close()
    .then(() => db.close())
    .then(() => process.exit(0))
  setTimeout(() => process.exit(0), 2000).unref()
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)

// The file answers before the peer says it is ready: a failure shows at start, not under load.
db.prepare('SELECT 1 FROM pets LIMIT 1').get()
await app.listen({ port: Number(portArg), host })
process.stdout.write(`peer listening on ${host}:${app.server.address().port}\n`)
