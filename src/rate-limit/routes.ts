import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { type Static, type TSchema, Type } from 'typebox'
import { secondsUntilRetry, setQuotaReadHeaders, tightestWindow } from '../auth/rate-limit-headers.js'
import type { QuotaRead } from '../auth/uncounted-reads.js'
import { errorResponses, rateLimitHeaderDocs } from '../http/openapi-docs.js'
import type { ApiKeyRecord } from '../keys/api-key.js'
import type { WindowUsage } from '../limits/limiter.js'
import { type RateLimitStatus, RateLimitStatusSchema } from './schemas.js'

/** A reference to a shared schema (a component in the OpenAPI document), typed as the schema. */
const ref = <T extends TSchema>(schema: T) => Type.Unsafe<Static<T>>({ $ref: `${String((schema as { $id?: string }).$id)}#` })

/** The answer of a quota read: the key, and its windows, ban and budget as the guard left them. */
export function rateLimitStatus(key: ApiKeyRecord, { usage, budget, partitionKey }: QuotaRead): RateLimitStatus {
  const nowSeconds = Math.floor(usage.now / 1000)
  const window = (name: 'minute' | 'day', { limit, used, remaining, resetAt }: WindowUsage) => ({
    name,
    limit,
    used,
    remaining,
    reset: resetAt,
    resetAfter: Math.max(0, resetAt - nowSeconds),
  })
  const { until } = usage.ban
  const tightest = tightestWindow(budget)
  return {
    key: {
      id: key.id,
      prefix: key.prefix,
      plan: key.plan,
      customerId: key.customerId,
      scopes: key.scopes,
      expiresAt: key.expiresAt === null ? null : new Date(key.expiresAt).toISOString(),
    },
    partitionKey: partitionKey ?? '',
    windows: [window('minute', usage.minute), window('day', usage.day)],
    ban: usage.ban.active && until !== null ? { until, retryAfter: Math.max(0, until - nowSeconds) } : null,
    // As X-RateLimit-* would show the budget: once it is spent, when a read is uncounted again.
    budget: budget.allowed
      ? { limit: tightest.limit, remaining: tightest.remaining, reset: tightest.resetAt }
      : { limit: tightest.limit, remaining: 0, reset: Math.floor(budget.now / 1000) + secondsUntilRetry(budget) },
  }
}

/** Set by the guard for every keyed request this route serves (auth/uncounted-reads.ts). */
function quotaReadOf(request: FastifyRequest): QuotaRead {
  const read = request.quotaRead
  if (read === null) throw new Error('GET /v1/rate_limit reached without the guard’s quota read')
  return read
}

/** GET /v1/rate_limit, under the /v1 prefix: the caller's key and quota, not counted against it. */
export const rateLimitRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/rate_limit',
    {
      config: { quotaRead: true },
      schema: {
        operationId: 'getRateLimit',
        summary: 'Show the caller’s key and rate limits',
        description:
          'The key that sends the request (id, prefix, plan, customer, scopes, expiry), every window it is limited by (`limit`, `used`, `remaining`, `reset`), and its ban if any, ' +
          'as the rate-limit headers of its next counted request would show them (the headers of this answer show the same). ' +
          'Like GitHub’s GET /rate_limit it **does not count** against the minute or day quota, and it is answered even while the quota is exhausted or the key is banned. ' +
          'It has a budget of its own instead (`budget`): as many calls per minute and per day as the plan allows requests, shared by the keys of one quota; ' +
          'past it a call is counted like any other request (and refused with 429 while the quota is exhausted). ' +
          'It is not recorded in the key’s usage history unless it was counted.',
        tags: ['rate-limit'],
        response: {
          200: { description: 'Success.', ...ref(RateLimitStatusSchema), headers: { ...rateLimitHeaderDocs } },
          // No 500/503: it reads no store, and a failing limiter answers before any route, without the rate-limit headers these carry.
          ...errorResponses(400, 401, 429),
        },
      },
    },
    async (request, reply) => {
      const read = quotaReadOf(request)
      setQuotaReadHeaders(reply, read.usage, read.partitionKey)
      return rateLimitStatus(request.apiKey!, read)
    },
  )
}
