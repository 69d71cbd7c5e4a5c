export {
  AnimalStoreClient,
  type ClientOptions,
  type CreatePetOptions,
  type Int64,
  type Inventory,
  type ListPetsQuery,
  type NewPet,
  type Pet,
  type PetStatus,
  type RateLimitStatus,
} from './client.js'
export { AnimalStoreError, ApiError, ERROR_CODES, type ErrorCode, isErrorCode, NetworkError, UnexpectedResponseError } from './errors.js'
export { type Event, EventsClient, type EventType, type ListEventsQuery } from './events.js'
export { type ListOrdersQuery, type Order, type OrderStatus, OrdersClient, type PlaceOrderOptions } from './orders.js'
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry.js'
export type { components, operations, paths } from './schema.js'
export { type AttemptEvent, type CallOptions, type Clock, type Conditional, type ConditionalOptions, systemClock } from './transport.js'
