/**
 * 404 or 405 for what no route answers, derived from the registered routes: a 405 only when the
 * path is served with other methods, never when a route for this very method found nothing.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import Fastify from 'fastify'
import { registerErrorHandling } from '../../src/http/error-handler.js'
import { unroutedError } from '../../src/http/route-fallback.js'
import { RouteTable } from '../../src/http/route-settings.js'
import { bearer, buildTestApp } from '../helpers/app.js'
import { assertError } from '../helpers/errors.js'

async function appWithFileRoute() {
  const app = Fastify()
  const routes = new RouteTable()
  routes.collect(app)
  registerErrorHandling(app, (request) => unroutedError(routes, request))
  // Like a static-file plugin: the route matches, the file does not exist.
  app.get('/files/*', async (_request, reply) => reply.callNotFound())
  await app.ready()
  return app
}

test('a route that finds nothing for its own method (reply.callNotFound) is a 404, not a 405', async () => {
  const app = await appWithFileRoute()
  assertError(await app.inject({ url: '/files/missing.txt' }), 404, 'not_found')
  const post = await app.inject({ method: 'POST', url: '/files/missing.txt' })
  assertError(post, 405, 'method_not_allowed')
  assert.equal(post.headers.allow, 'GET, HEAD')
  await app.close()
})

test('a wildcard route /files/* does not make /files exist (the router does not match it either)', async () => {
  const app = await appWithFileRoute()
  assertError(await app.inject({ url: '/files' }), 404, 'not_found')
  assertError(await app.inject({ method: 'POST', url: '/files' }), 404, 'not_found')
  await app.close()
})

// Issue 32: `GET /v1/pets/` matched `/v1/pets/:petId` with an empty id and answered "petId must be
// an int64"; a trailing slash names no resource: 404 not_found, with the path meant.
test('a trailing slash is a 404 with the path meant, not an empty parameter', async (context) => {
  const t = await buildTestApp(context)
  const headers = bearer(await t.key({ plan: 'enterprise', perMinute: 100_000, perDay: 1_000_000 }))
  const res = await t.app.inject({ url: '/v1/pets/', headers })
  assertError(res, 404, 'not_found')
  assert.equal(res.json().message, 'No route for GET /v1/pets/: no such path; did you mean /v1/pets?')
  const orders = await t.app.inject({ url: '/v1/store/orders/', headers })
  assert.equal(orders.json().message, 'No route for GET /v1/store/orders/: no such path; did you mean /v1/store/orders?')
  // Unchanged: the id itself still validated, the collection still served.
  assertError(await t.app.inject({ url: '/v1/pets/abc', headers }), 400, 'invalid_request')
  assert.equal((await t.app.inject({ url: '/v1/pets', headers })).statusCode, 200)
})
