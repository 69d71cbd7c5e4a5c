import { Type } from 'typebox'
import { apiKeyOf } from '../../auth/admission.js'
import { errorResponses, rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { parseIdempotencyKey } from '../../idempotency/header.js'
import { idempotencyScope } from '../../idempotency/scope.js'
import { keyEventOwner } from '../../keys/api-key.js'
import { petCreated } from '../../pets/events.js'
import { NewPetSchema, PetSchema } from '../../pets/schemas.js'
import { type PublicApp, type PublicRoutesOptions, V1_PREFIX } from '../common/routes.js'
import { ref } from '../common/schemas.js'

/** POST /pets (createPet), optionally under an Idempotency-Key (pets/idempotent-creates.ts). */
export function createPet(app: PublicApp, { pets, creates, clock }: PublicRoutesOptions): void {
  app.post(
    '/pets',
    {
      config: { scope: 'pets:write' },
      schema: {
        operationId: 'createPet',
        summary: 'Add an animal',
        description:
          'Creates an animal and answers 201 with it, including the assigned id, once it is durable. ' +
          'The body is validated strictly: no type coercion, no unknown fields, no client-sent id; categoryId is int64 and exact. ' +
          'With an `Idempotency-Key` (IETF draft-ietf-httpapi-idempotency-key-header), the animal is created once per customer and key ' +
          '(whose quota and orders the API key shares: every key of its customer, or for a key without one, the key and the keys it was rotated to; so a retry sent through another key of the customer, or with the new key of a rotation, is still a retry): ' +
          'a retry with the same key and body answers 201 with the same animal and `Idempotent-Replayed: true`; ' +
          'the same key with another body is 422 `idempotency_key_reused`; while the first request is still processed, 409 `idempotency_conflict`. ' +
          'Keys are kept 24 hours.',
        tags: ['pets'],
        headers: Type.Object({
          'Idempotency-Key': Type.Optional(
            Type.String({
              description:
                'Makes the create safe to retry: 1 to 255 visible ASCII characters, as the draft\'s quoted string ("8e03978e-...") or bare; ' +
                'both forms name the same key. Scoped to the customer (see the operation), kept 24 hours. A new UUID per animal is a good key.',
            }),
          ),
        }),
        body: ref(NewPetSchema),
        response: {
          201: {
            description: 'Animal added.',
            ...ref(PetSchema),
            headers: {
              ...rateLimitHeaderDocs,
              Location: { type: 'string', description: 'Path of the new animal, /v1/pets/{id}.' },
              'Idempotent-Replayed': {
                type: 'string',
                enum: ['true'],
                description: 'Present on a replay: an earlier request with this Idempotency-Key created the animal.',
              },
            },
          },
          ...errorResponses(400, 401, 'idempotency_conflict', 413, 415, 422, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const key = parseIdempotencyKey(request.headers['idempotency-key'])
      const apiKey = apiKeyOf(request)
      const recorded = petCreated(keyEventOwner(apiKey), clock.now())
      if (key === undefined) {
        const created = await pets.createPet(request.body, recorded)
        return reply.code(201).header('location', `${V1_PREFIX}/pets/${created.id}`).send(created)
      }
      const { pet: created, replayed } = await creates.create(idempotencyScope(apiKey), key, request.body, recorded)
      if (replayed) reply.header('idempotent-replayed', 'true')
      return reply.code(201).header('location', `${V1_PREFIX}/pets/${created.id}`).send(created)
    },
  )
}
