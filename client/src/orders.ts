import type { components, operations } from './schema.js'
import type { CallOptions, Conditional, ConditionalOptions } from './transport.js'

export type Order = components['schemas']['Order']
export type OrderStatus = components['schemas']['OrderStatus']
export type ListOrdersQuery = NonNullable<operations['listOrders']['parameters']['query']>
/** An int64 value: a number when it is a safe integer, a bigint beyond 2^53. */
type Int64 = components['schemas']['NewOrder']['petId']

export interface PlaceOrderOptions extends CallOptions {
  /**
   * Sent as the Idempotency-Key header and reused by every retry of this call. Default: a new
   * random UUID per call. Pass your own (1 to 255 visible ASCII characters) to make an order safe
   * to repeat across calls or processes.
   */
  idempotencyKey?: string
}

/** What the store's methods are given of the client's requests (client.ts builds it). */
export interface SendInit {
  headers: Record<string, string>
  parseAs: 'text'
  fetch: (request: Request) => Promise<Response>
}

/**
 * The store's requests, typed and sent by client.ts (openapi-fetch stays out of these
 * declarations: it is bundled, not a dependency of the package).
 */
export interface StoreRequests {
  place(init: SendInit, petId: Int64, idempotencyKey: string): Promise<unknown>
  list(init: SendInit, query: ListOrdersQuery): Promise<unknown>
  get(init: SendInit, orderId: Int64): Promise<unknown>
  end(init: SendInit, orderId: Int64, change: 'cancel' | 'complete'): Promise<unknown>
}

export interface StoreCalls {
  requests: StoreRequests
  /** One typed request through the client's transport: its JSON (checked for its shape) and its next link. */
  send<T>(
    options: CallOptions,
    shape: 'array' | 'object',
    request: (init: SendInit) => Promise<unknown>,
  ): Promise<{ items: T; next: URL | undefined }>
  /** The same request as `send`, conditional on `options.etag` (If-None-Match). */
  conditional<T>(
    options: ConditionalOptions,
    shape: 'array' | 'object',
    request: (init: SendInit) => Promise<unknown>,
  ): Promise<Conditional<T>>
  /** The pages from `first` on, following Link rel="next". */
  walk<T>(first: { items: T[]; next: URL | undefined }, options: CallOptions): AsyncGenerator<T[], void, undefined>
  /** The Idempotency-Key header for a key (default: a new UUID). */
  idempotencyKey(key?: string): string
}

/**
 * The caller's orders (`client.orders`): an order holds an animal (`pending`) until it is
 * completed (`sold`), cancelled or its hold runs out (`available` again). Each method is one
 * operation of the document, named by its `@operationId`.
 */
export class OrdersClient {
  readonly #calls: StoreCalls

  constructor(calls: StoreCalls) {
    this.#calls = calls
  }

  /**
   * POST /store/orders: orders animal `petId`. Always sends an Idempotency-Key (the caller's or a
   * new UUID) and reuses it on every retry, so a retried order never holds a second animal.
   * Throws ApiError `pet_not_available` (409) when the animal is pending, sold or not for sale,
   * `unknown_pet` (422) when there is no such animal.
   * @operationId placeOrder
   */
  async place(petId: Int64, options: PlaceOrderOptions = {}): Promise<Order> {
    const idempotencyKey = this.#calls.idempotencyKey(options.idempotencyKey)
    const { requests, send } = this.#calls
    return (await send<Order>(options, 'object', (init) => requests.place(init, petId, idempotencyKey))).items
  }

  /**
   * GET /store/orders: the first page of the caller's orders (ascending id). Use `pages` or `all` to walk them all.
   * @operationId listOrders
   */
  async list(query: ListOrdersQuery = {}, options: CallOptions = {}): Promise<Order[]> {
    return (await this.#firstPage(query, options)).items
  }

  /** Every page of the caller's orders, following Link rel="next". Each page is one call (its own deadline). */
  async *pages(query: ListOrdersQuery = {}, options: CallOptions = {}): AsyncGenerator<Order[], void, undefined> {
    yield* this.#calls.walk(await this.#firstPage(query, options), options)
  }

  /** Every order of the caller (optionally only those with `status`), in ascending id order. */
  async *all(query: ListOrdersQuery = {}, options: CallOptions = {}): AsyncGenerator<Order, void, undefined> {
    for await (const page of this.pages(query, options)) yield* page
  }

  /**
   * GET /store/orders/{orderId}: one of the caller's orders (another caller's is ApiError `not_found`).
   * @operationId getOrder
   */
  async get(orderId: Int64, options: CallOptions = {}): Promise<Order> {
    const { requests, send } = this.#calls
    return (await send<Order>(options, 'object', (init) => requests.get(init, orderId))).items
  }

  /** `get`, unless the order is still as the ETag in `options.etag` says: then `notModified` (free of quota). */
  getIfChanged(orderId: Int64, options: ConditionalOptions = {}): Promise<Conditional<Order>> {
    const { requests, conditional } = this.#calls
    return conditional<Order>(options, 'object', (init) => requests.get(init, orderId))
  }

  /** `list` (the first page), unless it is still as the ETag in `options.etag` says: then `notModified` (free of quota). */
  listIfChanged(query: ListOrdersQuery = {}, options: ConditionalOptions = {}): Promise<Conditional<Order[]>> {
    const { requests, conditional } = this.#calls
    return conditional<Order[]>(options, 'array', (init) => requests.list(init, query))
  }

  /**
   * POST /store/orders/{orderId}/cancel: the animal is available again. Not retried after a lost
   * answer (it may have been done): ApiError `order_not_placed` (409) names the status an order reached.
   * @operationId cancelOrder
   */
  cancel(orderId: Int64, options: CallOptions = {}): Promise<Order> {
    return this.#end(orderId, 'cancel', options)
  }

  /**
   * POST /store/orders/{orderId}/complete: the animal is sold. Not retried after a lost answer (it
   * may have been done): ApiError `order_not_placed` (409) names the status an order reached.
   * @operationId completeOrder
   */
  complete(orderId: Int64, options: CallOptions = {}): Promise<Order> {
    return this.#end(orderId, 'complete', options)
  }

  async #end(orderId: Int64, change: 'cancel' | 'complete', options: CallOptions): Promise<Order> {
    const { requests, send } = this.#calls
    return (await send<Order>(options, 'object', (init) => requests.end(init, orderId, change))).items
  }

  #firstPage(query: ListOrdersQuery, options: CallOptions): Promise<{ items: Order[]; next: URL | undefined }> {
    const { requests, send } = this.#calls
    return send<Order[]>(options, 'array', (init) => requests.list(init, query))
  }
}
