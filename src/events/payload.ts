import { stringify } from 'lossless-json'
import type { EventRecord } from './event.js'

/**
 * An event's `data` as written: JSON text that keeps int64 fields exact (a pet's `categoryId` above
 * 2^53 is a bigint, which JSON.stringify refuses), shown later as it was written.
 */
export const eventDataText = (data: object): string => stringify(data) as string

const iso = (ms: number) => new Date(ms).toISOString()

/**
 * An event as the APIs show it, as JSON text: `{"id", "type", "timestamp", "data"}` and, for
 * operators, whose it is. The data is spliced in as stored, not parsed and written again, so its
 * numbers stay what they were.
 */
export function eventJson(event: EventRecord, owner = false): string {
  const head: Record<string, unknown> = { id: event.id, type: event.type, timestamp: iso(event.occurredAt) }
  if (owner) Object.assign(head, { customerId: event.customerId, keyChainId: event.keyChainId, keyId: event.keyId })
  const text = JSON.stringify(head)
  return `${text.slice(0, -1)},"data":${event.data}}`
}
