import { type Static, Type } from 'typebox'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import type { KeyTotals } from '../../usage/repository.js'
import { requestsOf } from '../../usage/usage-history.js'
import { ADMIN_AUTH, type AdminApp, type AdminRoutesOptions, changeContext, errorResponses } from '../common/routes.js'
import { plan, ref } from '../common/schemas.js'
import { parseTime } from '../common/views.js'
import { count, rangeEnd, tags, USAGE_LATENESS, usageCounts } from './schemas.js'

export const TopUsageEntrySchema = Type.Object(
  {
    keyId: Type.String(),
    name: Type.String({ description: 'The key’s name.' }),
    plan,
    requests: count('allowed + rateLimited + banned.'),
    ...usageCounts,
  },
  { $id: 'TopUsageEntry', title: 'TopUsageEntry', additionalProperties: false },
)
export type TopUsageEntryJson = Static<typeof TopUsageEntrySchema>

export const TopUsageSchema = Type.Object(
  { data: Type.Array(ref(TopUsageEntrySchema), { description: 'Most first, then by keyId; keys with none of the measure are left out.' }) },
  { $id: 'TopUsage', title: 'TopUsage', additionalProperties: false },
)

export const TOP_USAGE_LIMIT = { min: 1, max: 100, default: 10 } as const
export const TopUsageQuery = Type.Object(
  {
    from: Type.Optional(rangeEnd('from', 'First hour (inclusive); default: 24 hours before `to`.')),
    to: Type.Optional(rangeEnd('to', 'End hour (exclusive); default: the start of the next hour.')),
    by: Type.Optional(
      Type.Unsafe<'requests' | 'rateLimited'>({
        type: 'string',
        enum: ['requests', 'rateLimited'],
        default: 'requests',
        description: 'The measure: `requests` (all counted requests, default) or `rateLimited`.',
      }),
    ),
    limit: Type.Optional(
      Type.Integer({
        minimum: TOP_USAGE_LIMIT.min,
        maximum: TOP_USAGE_LIMIT.max,
        default: TOP_USAGE_LIMIT.default,
        description: 'Keys to list (1 to 100, default 10; never clamped).',
      }),
    ),
  },
  { additionalProperties: false },
)

export const topUsageJson = (totals: KeyTotals): TopUsageEntryJson => ({
  keyId: totals.keyId,
  name: totals.name,
  plan: totals.plan,
  requests: requestsOf(totals.counts),
  allowed: totals.counts.allowed,
  rateLimited: totals.counts.rateLimited,
  banned: totals.counts.banned,
})

/** GET /usage/top (listTopUsage). */
export function listTopUsage(app: AdminApp, { usage }: AdminRoutesOptions): void {
  app.get(
    '/usage/top',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'listTopUsage',
        summary: 'Keys that used the most, or were limited the most',
        description:
          'Per-key totals over hour buckets from `from` (inclusive) to `to` (exclusive), most first (then by keyId), at most `limit` keys; keys with none of the measure are left out. ' +
          '`from` and `to` are truncated to the hour; defaults: the last 24 hours (to the start of the next hour). At most 2160 hours (90 days); a wider or reversed range is 400 `invalid_request` naming `from` (or `to`). ' +
          USAGE_LATENESS,
        tags,
        querystring: TopUsageQuery,
        response: {
          200: { description: 'The top keys.', ...ref(TopUsageSchema), headers: rateLimitHeaderDocs },
          ...errorResponses(400, 401, 429, 500, 503),
        },
      },
    },
    async (request) => {
      const { from, to, by = 'requests', limit = TOP_USAGE_LIMIT.default } = request.query
      const top = await usage.top(
        { from: parseTime('from', from) ?? undefined, to: parseTime('to', to) ?? undefined, by, limit },
        changeContext(request),
      )
      return { data: top.keys.map(topUsageJson) }
    },
  )
}
