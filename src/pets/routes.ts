import type { FastifyPluginAsync } from 'fastify'
import type { Clock } from '../clock.js'
import { ApiError } from '../http/errors.js'
import { DEPRECATED_AT, SUNSET_AT, deprecationHeaders } from '../http/deprecation.js'
import { errorResponses, rateLimitHeaderDocs } from '../http/openapi-docs.js'
import type { PetRepository } from './repository.js'
import { ListPetsQuery, NewPetSchema, PetIdParams, type Int64, type NewPet, type PetStatus } from './schemas.js'

export interface PetRoutesOptions {
  pets: PetRepository
  clock: Clock
  publicBaseUrl: string
}

const petRef = { $ref: 'Pet#' }

const deprecationHeaderDocs = {
  Deprecation: { type: 'string', description: 'RFC 9745: @<unix seconds> of the deprecation.' },
  Sunset: { type: 'string', description: 'RFC 8594: Thu, 05 Dec 2030 00:00:00 GMT.' },
  Link: { type: 'string', description: 'rel="successor-version" (/v1/pets) and rel="deprecation" (documentation).' },
}

function withHeaders(responses: Record<number, object>, headers: object): Record<number, object> {
  const out: Record<number, object> = {}
  for (const [status, r] of Object.entries(responses)) {
    out[Number(status)] = { ...r, headers: { ...(r as { headers?: object }).headers, ...headers } }
  }
  return out
}

export const petRoutes: FastifyPluginAsync<PetRoutesOptions> = async (app, { pets, clock, publicBaseUrl }) => {
  app.get<{ Querystring: { limit: number; status?: PetStatus; after?: Int64 } }>(
    '/pets',
    {
      config: { auth: true },
      schema: {
        operationId: 'listPets',
        summary: 'List animals',
        description:
          'Returns up to `limit` animals in ascending id order, optionally only those with `status`. ' +
          'When more exist, a `Link: <...>; rel="next"` header gives the next page (addition to the spec; the body stays a bare array).',
        tags: ['pets'],
        querystring: ListPetsQuery,
        response: {
          200: {
            description: 'Success: an array of animals.',
            type: 'array',
            items: petRef,
            headers: {
              ...rateLimitHeaderDocs,
              Link: { type: 'string', description: 'rel="next": the next page, present only when more animals exist.' },
            },
          },
          ...errorResponses(400, 401, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const { limit, status, after } = request.query
      // One extra row tells whether a next page exists without a count query.
      const rows = await pets.listPets({ limit: limit + 1, status, afterId: after })
      if (rows.length <= limit) return rows
      const lastId = rows[limit - 1]!.id
      const filter = status === undefined ? '' : `&status=${status}`
      reply.header('link', `<${publicBaseUrl}/v1/pets?limit=${limit}${filter}&after=${lastId}>; rel="next"`)
      return rows.slice(0, limit)
    },
  )

  app.post<{ Body: NewPet }>(
    '/pets',
    {
      config: { auth: true },
      schema: {
        operationId: 'createPet',
        summary: 'Add an animal',
        description:
          'Creates an animal and answers 201 with it, including the assigned id, once it is durable. ' +
          'The body is validated strictly: no type coercion, no unknown fields, no client-sent id; categoryId is int64 and exact.',
        tags: ['pets'],
        body: { $ref: 'NewPet#' },
        response: {
          201: {
            description: 'Animal added.',
            ...petRef,
            headers: {
              ...rateLimitHeaderDocs,
              Location: { type: 'string', description: 'Path of the new animal, /v1/pets/{id}.' },
            },
          },
          ...errorResponses(400, 401, 413, 415, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const pet = await pets.createPet(request.body)
      return reply.code(201).header('location', `/v1/pets/${pet.id}`).send(pet)
    },
  )

  const deprecation = deprecationHeaders(publicBaseUrl)
  app.get<{ Params: { petId: Int64 } }>(
    '/pets/:petId',
    {
      config: { auth: true },
      // Runs after authentication and limiting, before validation: after the sunset every call is 410.
      onRequest: async (_request, reply) => {
        reply.headers(deprecation)
        if (clock.now() >= SUNSET_AT) {
          throw new ApiError('gone', 'GET /v1/pets/{petId} was removed on 5 December 2030; use GET /v1/pets', deprecation)
        }
      },
      schema: {
        operationId: 'getPet',
        summary: 'Get an animal (deprecated)',
        description:
          `Deprecated since ${new Date(DEPRECATED_AT).toISOString().slice(0, 10)}; removal on 5 December 2030, after which it answers 410. ` +
          'Use GET /pets with the status filter instead. Responses carry Deprecation (RFC 9745), Sunset (RFC 8594) and Link headers.',
        tags: ['pets'],
        deprecated: true,
        params: PetIdParams,
        response: {
          200: {
            description: 'Success.',
            ...petRef,
            headers: { ...rateLimitHeaderDocs, ...deprecationHeaderDocs },
          },
          // Every answer of the operation, errors included, carries the deprecation headers.
          ...withHeaders(errorResponses(400, 401, 404, 410, 429, 500, 503), deprecationHeaderDocs),
        },
      },
    },
    async (request) => {
      const pet = await pets.getPet(request.params.petId)
      if (pet === undefined) throw new ApiError('not_found', `No animal with id ${request.params.petId}`)
      return pet
    },
  )
}
