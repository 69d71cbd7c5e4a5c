#!/usr/bin/env node
import { readFileSync } from 'node:fs'
// The "ceiling": a bare node:http server that answers the benchmark's requests with bytes captured
// from the real service (same status, same headers in the same order, same body), precomputed once.
// It does no routing beyond one Map lookup, no auth, no validation, no database and no logging, so
// its throughput is what Node's HTTP stack itself allows on this machine for these exact responses.
//
// Usage: node bench/ceiling.mjs <captures.json> <port> [host]
//   captures.json: [{ "method": "GET", "path": "/v1/pets?limit=20", "status": 200,
//                     "headers": [["x-request-id", "..."], ...], "bodyBase64": "...", "anyQuery": false }, ...]
// Prints "ceiling listening on <host>:<port>" once ready; stops on SIGTERM/SIGINT.
import http from 'node:http'

// Headers Node's HTTP server writes by itself, exactly as it does for the service.
const NODE_OWN = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding'])

const [capturesFile, portArg, host = '127.0.0.1'] = process.argv.slice(2)
if (!capturesFile || !portArg) {
  process.stderr.write('usage: node bench/ceiling.mjs <captures.json> <port> [host]\n')
  process.exit(2)
}

const routes = new Map()
const anyQuery = new Map()
for (const c of JSON.parse(readFileSync(capturesFile, 'utf8'))) {
  const flat = []
  for (const [name, value] of c.headers) {
    if (!NODE_OWN.has(name.toLowerCase())) flat.push(name, value)
  }
  const route = { status: c.status, headers: flat, body: Buffer.from(c.bodyBase64, 'base64') }
  routes.set(`${c.method} ${c.path}`, route)
  // anyQuery: also answers the same path with any query string (the growth check's many pages).
  if (c.anyQuery) anyQuery.set(`${c.method} ${c.path.split('?')[0]}`, route)
}

const notFound = Buffer.from('{"error":"not captured"}')

const server = http.createServer({ keepAliveTimeout: 5000 }, (req, res) => {
  let route = routes.get(`${req.method} ${req.url}`)
  if (route === undefined && anyQuery.size) route = anyQuery.get(`${req.method} ${req.url.split('?')[0]}`)
  const answer = () => {
    if (route === undefined) {
      res.writeHead(404, ['content-type', 'application/json', 'content-length', String(notFound.length)])
      res.end(notFound)
      return
    }
    res.writeHead(route.status, route.headers)
    res.end(route.body)
  }
  // A request body (POST) is read to its end before answering, as the service does.
  if (req.method === 'GET' || req.method === 'HEAD') answer()
  else {
    req.on('data', () => {})
    req.on('end', answer)
  }
})
server.keepAliveTimeout = 5000

const stop = () => {
  server.close(() => process.exit(0))
  server.closeAllConnections()
  setTimeout(() => process.exit(0), 2000).unref()
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)

server.listen(Number(portArg), host, () => {
  process.stdout.write(`ceiling listening on ${host}:${server.address().port}\n`)
})
