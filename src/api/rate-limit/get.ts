import { type Static, Type } from 'typebox'
import { type QuotaRead, quotaReadOf } from '../../auth/admission.js'
import { secondsUntilRetry, setQuotaReadHeaders, tightestWindow } from '../../auth/rate-limit-headers.js'
import { errorResponses, rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import type { ApiKeyRecord } from '../../keys/api-key.js'
import type { WindowUsage } from '../../limits/limiter.js'
import { PLAN_NAMES, type PlanName } from '../../shared/plans.js'
import { SCOPES, type Scope } from '../../shared/scopes.js'
import type { PublicApp } from '../common/routes.js'
import { ref } from '../common/schemas.js'

/**
 * GET /v1/rate_limit: what it answers, one TypeBox schema (validation of the answer,
 * serialization, the OpenAPI document, these types), with the examples the docs console shows; the
 * guard does the work of not counting it (auth/uncounted-reads.ts, `config.quotaRead`), and its decision holds
 * what the route answers (`quotaReadOf`, auth/admission.ts).
 */

const unixSeconds = (description: string) => Type.Integer({ minimum: 0, description, example: 1_795_000_020 })
const seconds = (description: string) => Type.Integer({ minimum: 0, description, example: 20 })

const WindowSchema = Type.Object(
  {
    name: Type.Unsafe<'minute' | 'day'>({
      type: 'string',
      enum: ['minute', 'day'],
      description: '`minute`: the clock minute; `day`: the UTC calendar day. As named in `RateLimit-Policy`.',
    }),
    limit: Type.Integer({ minimum: 0, description: 'Requests the key may make in the window (its plan’s limit).', example: 60 }),
    used: Type.Integer({
      minimum: 0,
      description: 'Requests counted in the window so far (GET /v1/rate_limit is not counted).',
      example: 10,
    }),
    remaining: Type.Integer({
      minimum: 0,
      description: 'Requests left in the window: the `r` of this window in `RateLimit` (its real count, also during a ban).',
      example: 50,
    }),
    reset: unixSeconds('Unix seconds when the window resets, as `X-RateLimit-Reset` gives it for this window.'),
    resetAfter: seconds('Seconds until the window resets: the `t` of this window in `RateLimit`.'),
  },
  { additionalProperties: false },
)

export const RateLimitStatusSchema = Type.Object(
  {
    key: Type.Object(
      {
        id: Type.String({
          description: 'Key id (key_…): how the operator names the key; never the key itself.',
          example: 'key_AbCdEfGhIjKlMnOp',
        }),
        prefix: Type.String({
          description: 'Display prefix (as_live_AbCd): enough to recognise the key, safe to show and log.',
          example: 'as_live_AbCd',
        }),
        plan: Type.Unsafe<PlanName>({
          type: 'string',
          enum: [...PLAN_NAMES],
          description: 'The plan whose limits the windows apply.',
          example: 'free',
        }),
        customerId: Type.Union([Type.String(), Type.Null()], {
          description: 'The customer the key belongs to (cus_…): all its keys share one quota (the same windows). null: none.',
        }),
        scopes: Type.Array(Type.Unsafe<Scope>({ type: 'string', enum: [...SCOPES] }), {
          description:
            'What the key may do, in this order: `pets:read`, `pets:write`, `orders:read`, `orders:write` (an operation outside them is 403 `insufficient_scope`). This operation needs none.',
          example: ['pets:read', 'orders:read'],
        }),
        expiresAt: Type.Unsafe<string | null>({
          anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }],
          description: 'When the key stops working (RFC 3339); null: never.',
        }),
      },
      { additionalProperties: false, description: 'The key that made the request.' },
    ),
    partitionKey: Type.String({
      description:
        'The `pk` of the `RateLimit` and `RateLimit-Policy` items (base64): the same for every key that shares this quota (a customer’s keys, a rotation chain).',
      example: 'q1xWmJ2Zb3nH4kQ8',
    }),
    windows: Type.Array(WindowSchema, {
      description: 'Every window the key is limited by, minute then day, as the next counted request finds them.',
    }),
    ban: Type.Union(
      [
        Type.Object(
          {
            until: unixSeconds('Unix seconds when the ban ends.'),
            retryAfter: seconds('Seconds until the ban ends: the `t` of the `"ban"` item of `RateLimit`.'),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'The key’s temporary ban for sending while rate limited, or null when it is not banned.' },
    ),
    budget: Type.Object(
      {
        limit: Type.Integer({
          minimum: 0,
          description:
            'Calls of this operation the key’s quota may make in the budget’s tightest window: the plan’s minute and day limits, as `X-RateLimit-Limit` picks between them.',
          example: 60,
        }),
        remaining: Type.Integer({
          minimum: 0,
          description: 'Calls left before this operation is counted against the quota like any other request.',
          example: 59,
        }),
        reset: unixSeconds('Unix seconds when `remaining` is renewed.'),
      },
      {
        additionalProperties: false,
        description: 'This operation’s own budget (a minute and a day window at the plan’s limits), so a client can pace its calls.',
      },
    ),
  },
  {
    $id: 'RateLimitStatus',
    title: 'RateLimitStatus',
    additionalProperties: false,
    description: 'The caller’s key and its quota as the rate-limit headers of its next counted request would show them.',
  },
)
export type RateLimitStatus = Static<typeof RateLimitStatusSchema>

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

/** GET /rate_limit (getRateLimit): the caller's key and quota, not counted against it. */
export function getRateLimit(app: PublicApp): void {
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
      const { key, read } = quotaReadOf(request)
      setQuotaReadHeaders(reply, read.usage, read.partitionKey)
      return rateLimitStatus(key, read)
    },
  )
}
