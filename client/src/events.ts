import type { SendInit, StoreCalls } from './orders.js'
import type { components, operations } from './schema.js'
import type { CallOptions } from './transport.js'

export type Event = components['schemas']['Event']
export type EventType = components['schemas']['EventType']
export type ListEventsQuery = NonNullable<operations['listEvents']['parameters']['query']>

/** The event log's requests, typed and sent by client.ts. */
export interface EventRequests {
  list(init: SendInit, query: ListEventsQuery): Promise<unknown>
}

export interface EventCalls extends Pick<StoreCalls, 'send' | 'walk'> {
  requests: EventRequests
}

/**
 * The caller's events (`client.events`): what happened to its customer's (or its key chain's)
 * orders, animals and keys, oldest first. Order events need the key's `orders:read` scope.
 */
export class EventsClient {
  readonly #calls: EventCalls

  constructor(calls: EventCalls) {
    this.#calls = calls
  }

  /**
   * GET /events: the first page of the caller's events (oldest first), optionally of one `type`.
   * Use `pages` or `all` to walk them all.
   * @operationId listEvents
   */
  async list(query: ListEventsQuery = {}, options: CallOptions = {}): Promise<Event[]> {
    return (await this.#firstPage(query, options)).items
  }

  /** Every page of the caller's events, following Link rel="next". Each page is one call (its own deadline). */
  async *pages(query: ListEventsQuery = {}, options: CallOptions = {}): AsyncGenerator<Event[], void, undefined> {
    yield* this.#calls.walk(await this.#firstPage(query, options), options)
  }

  /** Every event of the caller, oldest first. */
  async *all(query: ListEventsQuery = {}, options: CallOptions = {}): AsyncGenerator<Event, void, undefined> {
    for await (const page of this.pages(query, options)) yield* page
  }

  #firstPage(query: ListEventsQuery, options: CallOptions) {
    const { requests, send } = this.#calls
    return send<Event[]>(options, 'array', (init) => requests.list(init, query))
  }
}
