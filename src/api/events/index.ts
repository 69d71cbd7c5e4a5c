import { EventSchema, EventTypeSchema } from '../../events/schemas.js'
import type { PublicApp, PublicRoutesOptions } from '../common/routes.js'
import { listEvents } from './list.js'

/** The event log (/events): its shared schemas, in the order of the document's components. */
export const EVENT_SCHEMAS = [EventTypeSchema, EventSchema]

/** Its operations, in the order of the document's paths. */
export function eventRoutes(app: PublicApp, options: PublicRoutesOptions): void {
  listEvents(app, options)
}
