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
