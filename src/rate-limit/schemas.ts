import { type Static, Type } from 'typebox'
import { PLAN_NAMES, type PlanName } from '../shared/plans.js'
import { SCOPES, type Scope } from '../shared/scopes.js'

/**
 * What GET /v1/rate_limit answers, one TypeBox schema (validation of the answer, serialization,
 * the OpenAPI document, these types), with the examples the docs console shows.
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
