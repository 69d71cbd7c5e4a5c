import { Type } from 'typebox'
import { sendConditional } from '../../http/conditional-reads.js'
import { errorResponses, etagHeaderDoc, ifNoneMatchHeaders, notModifiedResponse, rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { PETS_KEPT } from '../../pets/kept-pages.js'
import { type Pet, PetSchema } from '../../pets/schemas.js'
import { ApiError } from '../../shared/errors.js'
import type { PublicApp, PublicRoutesOptions } from '../common/routes.js'
import { int64, ref } from '../common/schemas.js'

export const PetIdParams = Type.Object({ petId: int64('The identifier of the animal.', { example: 1 }) })

/** Deprecated with the 1.0.0 release; removal announced by the spec for 5 December 2030. */
export const GET_PET_DEPRECATION = { since: Date.UTC(2026, 0, 1), sunset: Date.UTC(2030, 11, 5), successor: '/v1/pets' }

/** A pet as answered. */
interface PetAnswer {
  body: string
  etag: string
}

/** GET /pets/{petId} (getPet, deprecated). */
export function getPet(app: PublicApp, { pets, entityTags }: PublicRoutesOptions): void {
  // The serialized answer of a shared (frozen) pet, kept as long as the repository keeps it (as listPets keeps its pages').
  const answers = new WeakMap<Pet, PetAnswer>()
  app.get(
    '/pets/:petId',
    {
      config: { deprecation: GET_PET_DEPRECATION, conditional: true, scope: 'pets:read' },
      schema: {
        operationId: 'getPet',
        summary: 'Get an animal (deprecated)',
        description:
          'Use GET /pets with the status filter instead. An animal changes only by its status (an order); the answer always shows its status as of the last acknowledged change, on every instance. ' +
          `An instance keeps the answer for an animal it has served (up to ${PETS_KEPT.toLocaleString('en-US')}) until an animal changes: on SQLite it learns of changes from the file, on PostgreSQL from a check of the database before each answer it keeps.`,
        tags: ['pets'],
        params: PetIdParams,
        headers: ifNoneMatchHeaders,
        response: {
          200: { description: 'Success.', ...ref(PetSchema), headers: { ...rateLimitHeaderDocs, ...etagHeaderDoc } },
          ...notModifiedResponse,
          ...errorResponses(400, 401, 404, 410, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const id = request.params.petId
      const pet = await pets.getPet(id)
      if (pet === undefined) throw new ApiError('not_found', `No animal with id ${id}`)
      let answer = answers.get(pet)
      if (answer === undefined) {
        // The route's own serializer (its response schema), as for any other answer.
        const body = reply.serialize(pet) as string
        answer = { body, etag: entityTags.of(body) }
        if (Object.isFrozen(pet)) answers.set(pet, answer)
      }
      return sendConditional(request, reply, answer.body, answer.etag)
    },
  )
}
