import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { type Static, type TSchema, Type } from 'typebox'
import { type EntityTags, sendConditional } from '../http/conditional-reads.js'
import { errorResponses, etagHeaderDoc, ifNoneMatchHeaders, notModifiedResponse, rateLimitHeaderDocs } from '../http/openapi-docs.js'
import { parseIdempotencyKey } from '../idempotency/header.js'
import { idempotencyScope } from '../idempotency/scope.js'
import type { Clock } from '../shared/clock.js'
import { ApiError } from '../shared/errors.js'
import { PETS_KEPT } from './cached-pet-repository.js'
import { IdempotentCreates } from './idempotent-creates.js'
import type { PetRepository } from './repository.js'
import { LIST_LIMIT, ListPetsQuery, NewPetSchema, type Pet, PetIdParams, PetSchema, type PetStatus } from './schemas.js'

export interface PetRoutesOptions {
  pets: PetRepository
  /** Time of the idempotency records. */
  clock: Clock
  /** Prefix of the links the routes build: '' for relative links, or an absolute origin. */
  linkBase: string
  /** The tags of the reads' answers. */
  entityTags: EntityTags
}

/** A reference to a shared schema (a component in the OpenAPI document), typed as the schema. */
const ref = <T extends TSchema>(schema: T) => Type.Unsafe<Static<T>>({ $ref: `${String((schema as { $id?: string }).$id)}#` })
const pet = ref(PetSchema)

/** Deprecated with the 1.0.0 release; removal announced by the spec for 5 December 2030. */
export const GET_PET_DEPRECATION = { since: Date.UTC(2026, 0, 1), sunset: Date.UTC(2030, 11, 5), successor: '/v1/pets' }

/**
 * A list page as answered: its body and its Link header. Bodies are kept as strings, not Buffers:
 * a string lives in the V8 heap, while a Buffer over 4 KB is a separate allocation outside it (the
 * benchmark showed the same throughput either way and a lower p99 with strings).
 */
interface ListAnswer {
  limit: number
  status: PetStatus | undefined
  body: string
  link: string | undefined
  /** Of the body and the Link header: a page that gains a next page is another answer. */
  etag: string
}

/** A pet as answered. */
interface PetAnswer {
  body: string
  etag: string
}

/** The animal catalogue: listPets, createPet and the deprecated getPet, under the /v1 prefix. */
export const petRoutes: FastifyPluginAsyncTypebox<PetRoutesOptions> = async (app, { pets, clock, linkBase, entityTags }) => {
  // The serialized answer of a shared (frozen) page or pet, kept as long as the repository keeps
  // that value (CachedPetRepository decides what is shared and for how long): serializing it is
  // then done once, not per request. Other values get no entry: one per request outlived
  // young-generation GCs (the PostgreSQL path promoted ~50% more to the old generation with them,
  // measured with --trace-gc-nvp).
  const answers = new WeakMap<readonly Pet[], ListAnswer>()
  const petAnswers = new WeakMap<Pet, PetAnswer>()
  const idempotent = new IdempotentCreates(pets, clock)

  app.get(
    '/pets',
    {
      config: { conditional: true, scope: 'pets:read' },
      schema: {
        operationId: 'listPets',
        summary: 'List animals',
        description:
          'Returns up to `limit` animals in ascending id order, optionally only those with `status`. ' +
          'When more exist, a `Link: <...>; rel="next"` header gives the next page (addition to the spec; the body stays a bare array).',
        tags: ['pets'],
        querystring: ListPetsQuery,
        headers: ifNoneMatchHeaders,
        response: {
          200: {
            description: 'Success: an array of animals.',
            type: 'array',
            items: pet,
            headers: {
              ...rateLimitHeaderDocs,
              ...etagHeaderDoc,
              Link: { type: 'string', description: 'rel="next": the next page, present only when more animals exist.' },
            },
          },
          ...notModifiedResponse,
          ...errorResponses(400, 401, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const { limit = LIST_LIMIT.default, status, after } = request.query
      // One extra row tells whether a next page exists without a count query.
      const rows = await pets.listPets({ limit: limit + 1, status, afterId: after })
      const shared = Object.isFrozen(rows)
      let page = shared ? answers.get(rows) : undefined
      if (page === undefined || page.limit !== limit || page.status !== status) {
        const more = rows.length > limit
        const filter = status === undefined ? '' : `&status=${status}`
        // The route's own serializer (its response schema), as for any other answer.
        const body = reply.serialize(more ? rows.slice(0, limit) : rows) as string
        const link = more ? `<${linkBase}/v1/pets?limit=${limit}${filter}&after=${rows[limit - 1]!.id}>; rel="next"` : undefined
        page = { limit, status, body, link, etag: entityTags.of(body, link) }
        if (shared) answers.set(rows, page)
      }
      if (page.link !== undefined) reply.header('link', page.link)
      return sendConditional(request, reply, page.body, page.etag)
    },
  )

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
            ...pet,
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
      if (key === undefined) {
        const created = await pets.createPet(request.body)
        return reply.code(201).header('location', `/v1/pets/${created.id}`).send(created)
      }
      const { pet: created, replayed } = await idempotent.create(idempotencyScope(request.apiKey!), key, request.body)
      if (replayed) reply.header('idempotent-replayed', 'true')
      return reply.code(201).header('location', `/v1/pets/${created.id}`).send(created)
    },
  )

  app.get(
    '/pets/:petId',
    {
      config: { deprecation: GET_PET_DEPRECATION, conditional: true, scope: 'pets:read' },
      schema: {
        operationId: 'getPet',
        summary: 'Get an animal (deprecated)',
        description:
          'Use GET /pets with the status filter instead. An animal changes only by its status (an order); the answer always shows its status as of the last acknowledged change, on every instance. ' +
          `On SQLite an instance keeps the answer for an animal it has served (up to ${PETS_KEPT.toLocaleString('en-US')}) until an animal changes; on PostgreSQL every request reads the database.`,
        tags: ['pets'],
        params: PetIdParams,
        headers: ifNoneMatchHeaders,
        response: {
          200: { description: 'Success.', ...pet, headers: { ...rateLimitHeaderDocs, ...etagHeaderDoc } },
          ...notModifiedResponse,
          ...errorResponses(400, 401, 404, 410, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const id = request.params.petId
      const pet = await pets.getPet(id)
      if (pet === undefined) throw new ApiError('not_found', `No animal with id ${id}`)
      let answer = petAnswers.get(pet)
      if (answer === undefined) {
        // The route's own serializer (its response schema), as for any other answer.
        const body = reply.serialize(pet) as string
        answer = { body, etag: entityTags.of(body) }
        if (Object.isFrozen(pet)) petAnswers.set(pet, answer)
      }
      return sendConditional(request, reply, answer.body, answer.etag)
    },
  )
}
