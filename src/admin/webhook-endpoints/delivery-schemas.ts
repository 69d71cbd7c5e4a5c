import { type Static, Type } from 'typebox'
import { EVENT_TYPES } from '../../events/event-types.js'
import { DELIVERY_STATUSES, WEBHOOK_DELIVERY_ID_PATTERN } from '../../webhooks/delivery.js'
import { WEBHOOK_ENDPOINT_ID_PATTERN } from '../../webhooks/endpoint.js'
import { errorResponses } from '../common/routes.js'
import { nullableTime, time } from '../common/schemas.js'

/** The delivery log as the admin API shows it: a delivery, and one with its attempts. */

export const DeliveryIdParams = Type.Object({
  endpointId: Type.String({ pattern: WEBHOOK_ENDPOINT_ID_PATTERN, description: 'The webhook endpoint id (we_…).' }),
  deliveryId: Type.String({ pattern: WEBHOOK_DELIVERY_ID_PATTERN, description: 'The delivery id (dlv_…).' }),
})

const nullableInteger = (description: string) => Type.Union([Type.Integer(), Type.Null()], { description })
const nullableString = (description: string) => Type.Union([Type.String(), Type.Null()], { description })

const deliveryFields = {
  id: Type.String({ description: 'Delivery id (dlv_…): one per event and endpoint.' }),
  endpointId: Type.String({ description: 'The endpoint (we_…).' }),
  eventId: Type.String({ description: 'The event sent (evt_…): the `webhook-id` header of every attempt.' }),
  eventType: Type.Unsafe<string>({ type: 'string', enum: [...EVENT_TYPES], description: 'The event’s type.' }),
  status: Type.Unsafe<(typeof DELIVERY_STATUSES)[number]>({
    type: 'string',
    enum: [...DELIVERY_STATUSES],
    description:
      '`pending`: an attempt is due at `nextAttemptAt`, or in flight; `delivered`: the receiver answered 2xx; `failed`: given up (the retry schedule ended, the receiver answered 410, or the endpoint was disabled).',
  }),
  attempts: Type.Integer({ minimum: 0, description: 'Attempts made (one in flight counts).' }),
  nextAttemptAt: nullableTime(
    'When the next attempt is due (while one is in flight: when it is made again should its answer never be recorded); null unless pending.',
  ),
  lastStatusCode: nullableInteger(
    'The last attempt’s answer, or null: none yet, or none came (timeout, network error, a refused address).',
  ),
  lastDurationMs: nullableInteger('How long the last attempt took, in ms.'),
  lastError: nullableString(
    'Why the last attempt failed (`the receiver answered 500`, `timed out after 10000 ms`, `redirect not followed …`, `refused: …`), or null.',
  ),
  createdAt: time('When the delivery was made: when its first attempt was claimed (or a replay made it).'),
  updatedAt: time('When the delivery last changed.'),
}

export const AdminWebhookDeliverySchema = Type.Object(deliveryFields, {
  $id: 'AdminWebhookDelivery',
  title: 'AdminWebhookDelivery',
  additionalProperties: false,
  description: 'One event sent to one endpoint, until a 2xx answer or until given up.',
})
export type AdminWebhookDelivery = Static<typeof AdminWebhookDeliverySchema>

export const DeliveryAttemptSchema = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1, description: '1, 2, … in the order made.' }),
    startedAt: time('When it started.'),
    durationMs: nullableInteger('How long it took, in ms; null when its outcome was never recorded (the instance making it stopped).'),
    statusCode: nullableInteger('The receiver’s answer, or null: none came.'),
    error: nullableString('Why it failed, or null.'),
    responseExcerpt: nullableString('The first 1,024 characters of the answer’s body (at most 64 KiB of it is read), or null.'),
  },
  { $id: 'WebhookDeliveryAttempt', title: 'WebhookDeliveryAttempt', additionalProperties: false },
)

export const AdminWebhookDeliveryDetailSchema = Type.Object(
  {
    ...deliveryFields,
    attemptLog: Type.Array(Type.Unsafe<Static<typeof DeliveryAttemptSchema>>({ $ref: 'WebhookDeliveryAttempt#' }), {
      description: 'Every attempt, oldest first.',
    }),
  },
  { $id: 'AdminWebhookDeliveryDetail', title: 'AdminWebhookDeliveryDetail', additionalProperties: false },
)
export type AdminWebhookDeliveryDetail = Static<typeof AdminWebhookDeliveryDetailSchema>

/** The 404 of an operation on one delivery. */
export const deliveryNotFoundDoc = {
  404: { ...errorResponses(404)[404], description: 'No webhook endpoint, or no delivery of it, with that id. Code: `not_found`.' },
}
