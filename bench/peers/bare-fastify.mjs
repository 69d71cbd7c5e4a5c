#!/usr/bin/env node
// The embedded path's peer: bare Fastify 5 answering the benchmark's requests with the bytes
// captured from the service (status, headers, body), precomputed once, as bench/ceiling.mjs does
// for node:http. No auth, no limiter, no validation, no database, no logger, no hooks: what is left
// is Fastify's own per-request work (routing, request/reply objects, the async handler, reading
// a JSON body). Service ÷ this peer is therefore what auth, the two-window limiter, computing the
// headers, the access log, metrics and the store cost on top of the framework.
//
// Usage: node bench/peers/bare-fastify.mjs <captures.json> <port> [host]
//   captures.json: the ceiling's format (see bench/ceiling.mjs).
// Prints "peer listening on <host>:<port>" once ready; stops on SIGTERM/SIGINT.
import { readFileSync } from 'node:fs'
import Fastify from 'fastify'

// Written by Node (date, connection, keep-alive) or by Fastify itself (content-length).
const OWN = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length'])

const [capturesFile, portArg, host = '127.0.0.1'] = process.argv.slice(2)
if (!capturesFile || !portArg) {
  process.stderr.write('usage: node bench/peers/bare-fastify.mjs <captures.json> <port> [host]\n')
  process.exit(2)
}

/** `METHOD url` (query included) -> the captured answer. */
const answers = new Map()
/** Fastify routes to register: `METHOD path` (query apart). */
const routes = new Map()
for (const c of JSON.parse(readFileSync(capturesFile, 'utf8'))) {
  const headers = {}
  for (const [name, value] of c.headers) if (!OWN.has(name.toLowerCase())) headers[name.toLowerCase()] = value
  // A string, as the service sends its serialized answers.
  answers.set(`${c.method} ${c.path}`, { status: c.status, headers, body: Buffer.from(c.bodyBase64, 'base64').toString('utf8') })
  routes.set(`${c.method} ${c.path.split('?')[0]}`, { method: c.method, url: c.path.split('?')[0] })
}

const app = Fastify({ logger: false, keepAliveTimeout: 5000, forceCloseConnections: true })

// The idiomatic async handler, as the service's routes are written.
async function replay(request, reply) {
  const answer = answers.get(`${request.method} ${request.url}`)
  if (answer === undefined) {
    reply.code(404)
    return { code: 'not_found', message: 'not captured', status: 404 }
  }
  reply.code(answer.status).headers(answer.headers)
  return answer.body
}
for (const route of routes.values()) app.route({ ...route, handler: replay })

const stop = () => {
  app.close().then(() => process.exit(0))
  setTimeout(() => process.exit(0), 2000).unref()
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)

await app.listen({ port: Number(portArg), host })
process.stdout.write(`peer listening on ${host}:${app.server.address().port}\n`)
