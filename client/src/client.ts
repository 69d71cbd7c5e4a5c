import createClient, { type Client } from 'openapi-fetch'
import { UnexpectedResponseError } from './errors.js'
import { EventsClient } from './events.js'
import { parseJson, stringifyJson } from './json.js'
import { nextLink } from './link.js'
import { OrdersClient, type SendInit } from './orders.js'
import { type RetryPolicy, retryPolicy } from './retry.js'
import type { components, operations, paths } from './schema.js'
import {
  type AttemptEvent,
  type CallOptions,
  type Clock,
  type Conditional,
  type ConditionalOptions,
  systemClock,
  Transport,
} from './transport.js'

export type Pet = components['schemas']['Pet']
export type NewPet = components['schemas']['NewPet']
export type PetStatus = components['schemas']['PetStatus']
/** An int64 value: a number when it is a safe integer, a bigint beyond 2^53. */
export type Int64 = Pet['id']
export type ListPetsQuery = NonNullable<operations['listPets']['parameters']['query']>

export type Inventory = components['schemas']['Inventory']
/** The caller's key, its windows, its ban and the budget of `rateLimit` itself (GET /rate_limit). */
export type RateLimitStatus = components['schemas']['RateLimitStatus']

type ListPetsAnswer = operations['listPets']['responses'][200]['content']['application/json']
type CreatePetAnswer = operations['createPet']['responses'][201]['content']['application/json']
type GetPetAnswer = operations['getPet']['responses'][200]['content']['application/json']

export interface ClientOptions {
  /** The API's base address, /v1 included: https://api.animal-store.example/v1 */
  baseUrl: string
  apiKey: string
  retry?: Partial<RetryPolicy>
  /** Called after every HTTP attempt (answer or failure), e.g. for logs and metrics. */
  onAttempt?: (event: AttemptEvent) => void
  /** Defaults to the global fetch. */
  fetch?: typeof fetch
  /** Defaults to real time; tests inject a virtual clock. */
  clock?: Clock
  /** Uniform in [0, 1): the jitter's source; defaults to Math.random. */
  random?: () => number
}

export interface CreatePetOptions extends CallOptions {
  /**
   * Sent as the Idempotency-Key header and reused by every retry of this call. Default: a new
   * random UUID per call. Pass your own (1 to 255 visible ASCII characters) to make a create
   * safe to repeat across calls or processes.
   */
  idempotencyKey?: string
}

/** A 2xx answer, its body, and the URL it was requested from. */
interface Answer {
  response: Response
  text: string
  url: string
  attempts: number
}

const VISIBLE_ASCII = /^[\x21-\x7e]{1,255}$/

/**
 * The Idempotency-Key header for `key` (default: a new random UUID), in the draft's form: a
 * Structured Field string (quoted, with \ and " escaped). The same value goes with every retry.
 */
export function idempotencyKeyHeader(key: string = crypto.randomUUID()): string {
  if (!VISIBLE_ASCII.test(key)) throw new TypeError('idempotencyKey must be 1 to 255 visible ASCII characters')
  return `"${key.replace(/[\\"]/g, '\\$&')}"`
}

/** A page of a list and the link to the next one. */
interface Page<T> {
  items: T[]
  next: URL | undefined
}

/** The Animal Store API: typed from its OpenAPI document, with retries that respect its limits. */
export class AnimalStoreClient {
  readonly #api: Client<paths>
  readonly #transport: Transport
  readonly #origin: string
  readonly #authorization: string

  /** The store's orders: `place`, `list` (and `pages`, `all`), `get`, `cancel`, `complete` (client/src/orders.ts). */
  readonly orders: OrdersClient
  /** The caller's events: `list` (and `pages`, `all`) (client/src/events.ts). */
  readonly events: EventsClient

  constructor(options: ClientOptions) {
    const base = new URL(options.baseUrl)
    if (base.protocol !== 'https:' && base.protocol !== 'http:') throw new TypeError(`baseUrl must be http(s), got ${base.protocol}`)
    if (typeof options.apiKey !== 'string' || !/^[\x21-\x7e]+$/.test(options.apiKey))
      throw new TypeError('apiKey must be a non-empty API key')
    this.#origin = base.origin
    this.#authorization = `Bearer ${options.apiKey}`
    this.#transport = new Transport({
      fetch: options.fetch ?? globalThis.fetch,
      clock: options.clock ?? systemClock,
      random: options.random ?? Math.random,
      policy: retryPolicy(options.retry),
      onAttempt: options.onAttempt,
    })
    this.#api = createClient<paths>({ baseUrl: base.href.replace(/\/$/, ''), bodySerializer: stringifyJson })
    const api = this.#api
    this.orders = new OrdersClient({
      requests: {
        place: (init, petId, key) =>
          api.POST('/store/orders', { ...init, params: { header: { 'Idempotency-Key': key } }, body: { petId } }),
        list: (init, query) => api.GET('/store/orders', { ...init, params: { query } }),
        get: (init, orderId) => api.GET('/store/orders/{orderId}', { ...init, params: { path: { orderId } } }),
        end: (init, orderId, change) =>
          change === 'cancel'
            ? api.POST('/store/orders/{orderId}/cancel', { ...init, params: { path: { orderId } } })
            : api.POST('/store/orders/{orderId}/complete', { ...init, params: { path: { orderId } } }),
      },
      send: (options, shape, request) => this.#send(options, shape, request),
      conditional: (options, shape, request) => this.#conditional(options, shape, request),
      walk: (first, options) => this.#walk(first, options),
      idempotencyKey: idempotencyKeyHeader,
    })
    this.events = new EventsClient({
      requests: { list: (init, query) => api.GET('/events', { ...init, params: { query } }) },
      send: (options, shape, request) => this.#send(options, shape, request),
      walk: (first, options) => this.#walk(first, options),
    })
  }

  /**
   * GET /store/inventory: how many animals are available, pending and sold (an animal without a
   * status is in none).
   * @operationId getInventory
   */
  async inventory(options: CallOptions = {}): Promise<Inventory> {
    return (await this.#send<Inventory>(options, 'object', (init) => this.#api.GET('/store/inventory', { ...init }))).items
  }

  /**
   * GET /rate_limit: this client's key (id, prefix, plan, customer, scopes, expiry), every window
   * it is limited by (limit, used, remaining, reset), its ban if any, and the budget of this call.
   * Not counted against the quota (within its own budget), and answered even while the key is
   * limited or banned: ask it before waiting out a 429.
   * @operationId getRateLimit
   */
  async rateLimit(options: CallOptions = {}): Promise<RateLimitStatus> {
    return (await this.#send<RateLimitStatus>(options, 'object', (init) => this.#api.GET('/rate_limit', { ...init }))).items
  }

  /** `inventory`, unless the counts are still as the ETag in `options.etag` says: then `notModified` (free of quota). */
  inventoryIfChanged(options: ConditionalOptions = {}): Promise<Conditional<Inventory>> {
    return this.#conditional<Inventory>(options, 'object', (init) => this.#api.GET('/store/inventory', { ...init }))
  }

  /** `listPets` (the first page), unless it is still as the ETag in `options.etag` says: then `notModified` (free of quota). */
  listPetsIfChanged(query: ListPetsQuery = {}, options: ConditionalOptions = {}): Promise<Conditional<Pet[]>> {
    return this.#conditional<Pet[]>(options, 'array', (init) => this.#api.GET('/pets', { ...init, params: { query } }))
  }

  /** GET /pets: the first page (up to `limit` animals, ascending id). Use `pages` or `allPets` to walk them all. */
  async listPets(query: ListPetsQuery = {}, options: CallOptions = {}): Promise<Pet[]> {
    return (await this.#listPage(query, options)).items
  }

  /**
   * POST /pets. Always sends an Idempotency-Key (the caller's or a new UUID) and reuses it on
   * every retry, so a retried create never adds the animal twice.
   */
  async createPet(pet: NewPet, options: CreatePetOptions = {}): Promise<Pet> {
    const idempotencyKey = idempotencyKeyHeader(options.idempotencyKey)
    return (
      await this.#send<CreatePetAnswer>(options, 'object', (init) =>
        this.#api.POST('/pets', { ...init, params: { header: { 'Idempotency-Key': idempotencyKey } }, body: pet }),
      )
    ).items
  }

  /**
   * GET /pets/{petId}.
   * @deprecated The service removes this operation on 5 December 2030 (it then answers 410 gone).
   * Use `listPets` / `allPets` with the `status` filter instead.
   */
  async getPet(petId: Int64, options: CallOptions = {}): Promise<Pet> {
    return (
      await this.#send<GetPetAnswer>(options, 'object', (init) => this.#api.GET('/pets/{petId}', { ...init, params: { path: { petId } } }))
    ).items
  }

  /** Every page of GET /pets, following Link rel="next" until there is none. Each page is one call (its own deadline). */
  async *pages(query: ListPetsQuery = {}, options: CallOptions = {}): AsyncGenerator<Pet[], void, undefined> {
    yield* this.#walk(await this.#listPage(query, options), options)
  }

  /** Every animal (optionally only those with `status`), in ascending id order, across all pages. */
  async *allPets(query: ListPetsQuery = {}, options: CallOptions = {}): AsyncGenerator<Pet, void, undefined> {
    for await (const page of this.pages(query, options)) yield* page
  }

  #listPage(query: ListPetsQuery, options: CallOptions): Promise<Page<Pet>> {
    return this.#send<ListPetsAnswer>(options, 'array', (init) => this.#api.GET('/pets', { ...init, params: { query } }))
  }

  /** The pages from `first` on, following Link rel="next" (any list of the API). */
  async *#walk<T>(first: Page<T>, options: CallOptions): AsyncGenerator<T[], void, undefined> {
    let page = first
    const seen = new Set<string>()
    for (;;) {
      yield page.items
      if (page.next === undefined) return
      // A server that links a page to itself (or back) would otherwise keep this loop going forever.
      if (seen.has(page.next.href))
        throw new UnexpectedResponseError(`Link rel="next" repeats ${page.next.href}`, 200, { requestId: undefined, attempts: 0 })
      seen.add(page.next.href)
      page = await this.#pageAt<T>(page.next, options)
    }
  }

  async #pageAt<T>(url: URL, options: CallOptions): Promise<Page<T>> {
    const request = new Request(url, { headers: this.#headers() })
    const answer = { ...(await this.#transport.send(request, options)), url: request.url }
    return { items: this.#json<T[]>(answer, 'array'), next: this.#next(answer) }
  }

  /**
   * One call: `request` builds the typed request (openapi-fetch) with the client's headers and
   * sends it through the transport (retries); its answer's JSON, checked for its shape, and the
   * link to the next page, if any.
   */
  async #send<T>(
    options: CallOptions,
    shape: 'array' | 'object',
    request: (init: SendInit) => Promise<unknown>,
  ): Promise<{ items: T; next: URL | undefined }> {
    const via = this.#via(options)
    await request({ headers: this.#headers(), parseAs: 'text', fetch: via.fetch })
    const answer = via.answer()
    return { items: this.#json<T>(answer, shape), next: shape === 'array' ? this.#next(answer) : undefined }
  }

  /** `#send` with If-None-Match when the caller holds an ETag: a 304 is `notModified`, anything else the answer and its ETag. */
  async #conditional<T>(
    options: ConditionalOptions,
    shape: 'array' | 'object',
    request: (init: SendInit) => Promise<unknown>,
  ): Promise<Conditional<T>> {
    const { etag, ...call } = options
    const via = this.#via(call)
    const headers = etag === undefined ? this.#headers() : { ...this.#headers(), 'if-none-match': etag }
    await request({ headers, parseAs: 'text', fetch: via.fetch })
    const answer = via.answer()
    const current = answer.response.headers.get('etag') ?? undefined
    if (answer.response.status === 304) return { notModified: true, etag: current ?? etag! }
    return { notModified: false, value: this.#json<T>(answer, shape), etag: current }
  }

  #next({ response, url, attempts }: Answer): URL | undefined {
    // Relative links resolve against the URL the request was sent to.
    const next = nextLink(response.headers.get('link'), response.url || url)
    // The next request carries the API key: never to another origin than the one configured.
    if (next !== undefined && next.origin !== this.#origin) {
      throw new UnexpectedResponseError(`Link rel="next" points to another origin (${next.origin})`, response.status, {
        requestId: response.headers.get('x-request-id') ?? undefined,
        attempts,
      })
    }
    return next
  }

  #headers(): Record<string, string> {
    return { authorization: this.#authorization, accept: 'application/json', 'x-request-id': crypto.randomUUID() }
  }

  /**
   * openapi-fetch builds the typed request; `fetch` sends it through the transport (retries) and
   * keeps the answer, whose body was read there once.
   */
  #via(options: CallOptions): { fetch: (request: Request) => Promise<Response>; answer: () => Answer } {
    let answer: Answer | undefined
    return {
      fetch: async (request) => {
        const sent = await this.#transport.send(request, options)
        answer = { ...sent, url: request.url }
        // A 304 can have no body, not even an empty one (the Response constructor refuses it).
        const body = sent.response.status === 304 ? null : sent.text
        return new Response(body, { status: sent.response.status, headers: sent.response.headers })
      },
      answer: () => answer!,
    }
  }

  #json<T>({ response, text, attempts }: Answer, shape: 'array' | 'object'): T {
    let value: unknown
    try {
      value = parseJson(text)
    } catch {
      value = undefined
    }
    const ok = shape === 'array' ? Array.isArray(value) : typeof value === 'object' && value !== null && !Array.isArray(value)
    if (!ok) {
      const requestId = response.headers.get('x-request-id') ?? undefined
      throw new UnexpectedResponseError(`Expected a JSON ${shape} from the service`, response.status, { requestId, attempts })
    }
    return value as T
  }
}
