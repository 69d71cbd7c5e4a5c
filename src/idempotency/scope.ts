import type { ApiKeyRecord } from '../keys/api-key.js'

/**
 * Whose Idempotency-Key records a request uses: the owner of its orders and of its quota
 * (`orderOwner` and `limiterIdentity` in keys/api-key.ts), its key's customer, for every key of it,
 * or else its key's quota, shared along its rotation chain. So a retry sent through another key of
 * the customer, or with the successor of a rotated key, replays the first answer instead of
 * creating a second animal (or, for an order, being refused the animal its first attempt took).
 * Stored as the customer's id or the quota's (a key id), which cannot collide (`cus_…`, `key_…`):
 * the records of a key without a customer keep the form they had before customers, and migration
 * 018 moved those of a customer's keys.
 */
export const idempotencyScope = (apiKey: Pick<ApiKeyRecord, 'quotaId' | 'customerId'>): string => apiKey.customerId ?? apiKey.quotaId
