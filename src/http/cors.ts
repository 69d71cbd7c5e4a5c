import cors from '@fastify/cors'
import type { FastifyInstance } from 'fastify'

/**
 * Cross-origin calls from browser applications on other origins, off unless CORS_ORIGINS lists
 * them (the docs console is same-origin and needs none). Keys travel in the Authorization header,
 * never in cookies, so credentials are never allowed, with `*` or without. Preflights are answered
 * 204 in onRequest, before authentication (a preflight carries no key), by @fastify/cors.
 */
export async function registerCors(app: FastifyInstance, origins: readonly string[] | '*'): Promise<void> {
  await app.register(cors, {
    origin: origins === '*' ? '*' : [...origins],
    credentials: false,
    methods: ['GET', 'HEAD', 'POST'],
    allowedHeaders: ['Authorization', 'Content-Type', 'X-Request-Id', 'Idempotency-Key'],
    exposedHeaders: [
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'RateLimit',
      'RateLimit-Policy',
      'Retry-After',
      'Link',
      'Location',
      'X-Request-Id',
      'Deprecation',
      'Sunset',
    ],
    maxAge: 600,
    strictPreflight: true,
  })
}
