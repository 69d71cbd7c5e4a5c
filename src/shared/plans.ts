export const PLAN_NAMES = ['free', 'pro', 'business', 'enterprise'] as const
export type PlanName = (typeof PLAN_NAMES)[number]

export interface Quota {
  perMinute: number
  perDay: number
}

/** The spec's plan table. Enterprise has no default: its limits are set per key. */
export const PLAN_QUOTAS: Record<Exclude<PlanName, 'enterprise'>, Quota> = {
  free: { perMinute: 60, perDay: 1_000 },
  pro: { perMinute: 300, perDay: 10_000 },
  business: { perMinute: 1_000, perDay: 100_000 },
}

/** Requests without a valid key are limited per client address at the Free plan's rates. */
export const ANONYMOUS_QUOTA: Quota = PLAN_QUOTAS.free

/**
 * Every admin token is limited at this fixed quota (the admin API, /admin/v1): ample for an
 * operator's scripts and dashboards, small enough that a leaked token cannot flood storage.
 */
export const ADMIN_QUOTA: Quota = { perMinute: 600, perDay: 100_000 }

export const MAX_CUSTOM_LIMIT = 1_000_000_000

export function isPlanName(value: string): value is PlanName {
  return (PLAN_NAMES as readonly string[]).includes(value)
}
