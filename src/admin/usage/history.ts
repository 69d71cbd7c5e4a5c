import { type Static, Type } from 'typebox'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import type { UsageBucket } from '../../usage/repository.js'
import { ADMIN_AUTH, type AdminApp, type AdminRoutesOptions, changeContext, errorResponses } from '../common/routes.js'
import { KeyIdParams, ref, time } from '../common/schemas.js'
import { iso, parseTime } from '../common/views.js'
import { count, rangeEnd, tags, USAGE_LATENESS, usageCounts } from './schemas.js'

export const UsageBucketSchema = Type.Object(
  {
    start: time('The first instant of the bucket (a UTC minute or hour).'),
    ...usageCounts,
    status2xx: count('Answers 200–299.'),
    status4xx: count('Answers 400–499 (the 429s included).'),
    status5xx: count('Answers 500–599.'),
  },
  {
    $id: 'UsageBucket',
    title: 'UsageBucket',
    additionalProperties: false,
    description: 'One bucket of usage history. allowed + rateLimited + banned = status2xx + status4xx + status5xx.',
  },
)
export type UsageBucketJson = Static<typeof UsageBucketSchema>

export const UsageHistorySchema = Type.Object(
  { data: Type.Array(ref(UsageBucketSchema), { description: 'Every bucket from `from` to `to`, oldest first; zeros included.' }) },
  { $id: 'UsageHistory', title: 'UsageHistory', additionalProperties: false },
)

export const UsageHistoryQuery = Type.Object(
  {
    granularity: Type.Optional(
      Type.Unsafe<'minute' | 'hour'>({
        type: 'string',
        enum: ['minute', 'hour'],
        default: 'minute',
        description: 'Bucket size (default minute).',
      }),
    ),
    scope: Type.Optional(
      Type.Unsafe<'key' | 'chain'>({
        type: 'string',
        enum: ['key', 'chain'],
        default: 'key',
        description:
          '`key` (default): this key only; `chain`: every key of its rotation chain summed (its quota, which follows the customer).',
      }),
    ),
    from: Type.Optional(rangeEnd('from', 'First bucket (inclusive); default: 60 minutes or 24 hours before `to`.')),
    to: Type.Optional(rangeEnd('to', 'End (exclusive); default: the start of the bucket after the current one.')),
  },
  { additionalProperties: false },
)

export const usageBucketJson = (bucket: UsageBucket): UsageBucketJson => ({ start: iso(bucket.start), ...bucket.counts })

/** GET /keys/{keyId}/usage/history (getKeyUsageHistory). */
export function getKeyUsageHistory(app: AdminApp, { usage }: AdminRoutesOptions): void {
  app.get(
    '/keys/:keyId/usage/history',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'getKeyUsageHistory',
        summary: 'Usage history of an API key',
        description:
          'Per-minute or per-hour counts of the key (or, with scope=chain, of every key of its rotation chain summed): how the rate limiter decided (allowed, rateLimited, banned) and the class of the answer. ' +
          '**Zero-filled:** every bucket from `from` (inclusive) to `to` (exclusive) is in the answer, oldest first, zeros included, so a chart draws it as it is. ' +
          '`from` and `to` are truncated to the start of their bucket; defaults: `to` the start of the bucket after the current one, `from` 60 minutes (minute) or 24 hours (hour) before `to`. ' +
          '**Bounds:** at most 1440 minute buckets (24 h) or 2160 hour buckets (90 days) per call; a wider or reversed range is 400 `invalid_request` naming `from` (or `to`). ' +
          USAGE_LATENESS,
        tags,
        params: KeyIdParams,
        querystring: UsageHistoryQuery,
        response: {
          200: { description: 'The buckets.', ...ref(UsageHistorySchema), headers: rateLimitHeaderDocs },
          ...errorResponses(400, 401, 404, 429, 500, 503),
        },
      },
    },
    async (request) => {
      const { granularity = 'minute', scope = 'key', from, to } = request.query
      const buckets = await usage.history(
        request.params.keyId,
        { granularity, scope, from: parseTime('from', from) ?? undefined, to: parseTime('to', to) ?? undefined },
        changeContext(request),
      )
      return { data: buckets.map(usageBucketJson) }
    },
  )
}
