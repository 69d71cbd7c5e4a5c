import type { EventPage, EventQuery, EventRepository } from '../events/event.js'
import type { ChangeContext } from './audit-log.js'
import type { ChangeRecorder } from './change-recorder.js'

/** Every caller's events, as operators read them (the admin API's `GET /events`), each read on record as `event.list`. */
export class EventLogService {
  constructor(
    private readonly events: Pick<EventRepository, 'list'>,
    private readonly recorder: ChangeRecorder,
  ) {}

  async list(query: EventQuery, ctx?: ChangeContext): Promise<EventPage> {
    const page = await this.events.list(query)
    const { limit, after, types, customerId, keyId } = query
    await this.recorder.read(ctx, { action: 'event.list', keyId: keyId ?? null, details: { limit, after, type: types?.[0], customerId } })
    return page
  }
}
