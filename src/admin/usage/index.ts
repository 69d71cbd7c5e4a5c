import type { AdminApp, AdminRoutesOptions } from '../common/routes.js'
import { getKeyUsageHistory, UsageBucketSchema, UsageHistorySchema } from './history.js'
import { listTopUsage, TopUsageEntrySchema, TopUsageSchema } from './top.js'

/** The usage history resource (/keys/{keyId}/usage/history, /usage/top): its shared schemas, in the order of the document's components. */
export const USAGE_SCHEMAS = [UsageBucketSchema, UsageHistorySchema, TopUsageEntrySchema, TopUsageSchema]

/** Its operations, in the order of the document's paths. */
export function usageRoutes(app: AdminApp, options: AdminRoutesOptions): void {
  for (const route of [getKeyUsageHistory, listTopUsage]) route(app, options)
}
