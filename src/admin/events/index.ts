import type { AdminApp } from '../common/routes.js'
import { type AdminEventsOptions, listAnyEvents } from './list.js'
import { AdminEventPageSchema, AdminEventSchema, EventTypeSchema } from './schemas.js'

export type { AdminEventsOptions } from './list.js'

/** The event log resource (/events): its shared schemas, in the order of the document's components. */
export const EVENT_SCHEMAS = [EventTypeSchema, AdminEventSchema, AdminEventPageSchema]

/** Its operation. */
export function eventRoutes(app: AdminApp, options: AdminEventsOptions): void {
  listAnyEvents(app, options)
}
