import { Type } from 'typebox'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import type { UsageBucket } from '../../usage/repository.js'
import { ADMIN_AUTH, type AdminApp, changeContext, errorResponses } from '../common/routes.js'
import { iso, parseTime } from '../common/views.js'
import { type AdminCustomersOptions, CustomerIdParams, tags } from './schemas.js'

// No `format` in request schemas: the validator has no formats; the handler parses the time.
const rangeEnd = (text: string) =>
  Type.String({ maxLength: 64, description: `${text} An RFC 3339 date-time, truncated to the start of its bucket.` })

export const CustomerUsageHistoryQuery = Type.Object(
  {
    granularity: Type.Optional(
      Type.Unsafe<'minute' | 'hour'>({
        type: 'string',
        enum: ['minute', 'hour'],
        default: 'minute',
        description: 'Bucket size (default minute).',
      }),
    ),
    from: Type.Optional(rangeEnd('First bucket (inclusive); default: 60 minutes or 24 hours before `to`.')),
    to: Type.Optional(rangeEnd('End (exclusive); default: the start of the bucket after the current one.')),
  },
  { additionalProperties: false },
)

/** The usage resource's answer (its component UsageHistory), named rather than imported: a resource imports no other. */
const UsageHistoryRef = Type.Unsafe<{ data: Array<{ start: string } & UsageBucket['counts']> }>({ $ref: 'UsageHistory#' })

/** GET /customers/{customerId}/usage/history (getCustomerUsageHistory). */
export function getCustomerUsageHistory(app: AdminApp, { customers }: AdminCustomersOptions): void {
  app.get(
    '/customers/:customerId/usage/history',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'getCustomerUsageHistory',
        summary: 'Usage history of a customer',
        description:
          'Per-minute or per-hour counts of every key of the customer summed (revoked ones included), in the shape and with the ranges, ' +
          'bounds and lateness of getKeyUsageHistory: zero-filled, oldest first.',
        tags,
        params: CustomerIdParams,
        querystring: CustomerUsageHistoryQuery,
        response: {
          200: { description: 'The buckets.', ...UsageHistoryRef, headers: rateLimitHeaderDocs },
          ...errorResponses(400, 401, 404, 429, 500, 503),
        },
      },
    },
    async (request) => {
      const { granularity = 'minute', from, to } = request.query
      const buckets = await customers.usageHistory(
        request.params.customerId,
        { granularity, from: parseTime('from', from) ?? undefined, to: parseTime('to', to) ?? undefined },
        changeContext(request),
      )
      return { data: buckets.map((b) => ({ start: iso(b.start), ...b.counts })) }
    },
  )
}
