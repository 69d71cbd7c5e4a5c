import { NewPetSchema, PetSchema, PetStatusSchema } from '../../pets/schemas.js'
import type { PublicApp, PublicRoutesOptions } from '../common/routes.js'
import { createPet } from './create.js'
import { getPet } from './get.js'
import { listPets } from './list.js'

/** The animal catalogue (/pets…): its shared schemas, in the order of the document's components. */
export const PET_SCHEMAS = [PetStatusSchema, NewPetSchema, PetSchema]

/** Its operations, in the order of the document's paths. */
export function petRoutes(app: PublicApp, options: PublicRoutesOptions): void {
  for (const route of [listPets, createPet, getPet]) route(app, options)
}
