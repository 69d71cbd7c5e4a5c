import type { FastifyInstance } from 'fastify'
import type { Config } from '../config/config.js'
import type { EntityTags } from '../http/conditional-reads.js'
import { registerOpenApi } from '../http/openapi.js'
import type { Clock } from '../shared/clock.js'
import { CachedPetRepository } from './cached-pet-repository.js'
import { petsApiDescription } from './openapi.js'
import type { PetRepository } from './repository.js'
import { petRoutes } from './routes.js'
import { NewPetSchema, PetSchema, PetStatusSchema } from './schemas.js'

export interface PetsApiOptions {
  config: Config
  pets: PetRepository
  clock: Clock
  /** '' (relative links) or the public base URL. */
  linkBase: string
  /** The tags of the reads' answers (conditional reads). */
  entityTags: EntityTags
}

/**
 * The public API as one unit for app.ts: its shared schemas (the document's components), its
 * OpenAPI document and console (/v1/openapi.json, /docs), and its routes under /v1, reading the
 * store through the one cache of pets.
 */
export async function registerPetsApi(app: FastifyInstance, { config, pets, clock, linkBase, entityTags }: PetsApiOptions): Promise<void> {
  for (const schema of [PetStatusSchema, NewPetSchema, PetSchema]) app.addSchema(schema)
  await registerOpenApi(app, config, petsApiDescription(config))
  await app.register(petRoutes, { prefix: '/v1', pets: new CachedPetRepository(pets), clock, linkBase, entityTags })
}
