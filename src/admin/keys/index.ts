import type { AdminApp, AdminRoutesOptions } from '../common/routes.js'
import { CreatedKeySchema, CreateKeyBody, createKey } from './create.js'
import { getKey } from './get.js'
import { KeyPageSchema, listKeys } from './list.js'
import { LookupKeyBody, lookupKey } from './lookup.js'
import { RevokedKeySchema, revokeKey } from './revoke.js'
import { RotatedKeySchema, RotateKeyBody, rotateKey } from './rotate.js'
import { AdminKeySchema } from './schemas.js'
import { UpdateKeyBody, updateKey } from './update.js'
import { getKeyUsage, KeyUsageSchema } from './usage.js'

/** The keys resource (/keys…): its shared schemas, in the order of the document's components. */
export const KEY_SCHEMAS = [
  AdminKeySchema,
  CreateKeyBody,
  UpdateKeyBody,
  RotateKeyBody,
  CreatedKeySchema,
  RotatedKeySchema,
  RevokedKeySchema,
  KeyPageSchema,
  KeyUsageSchema,
  LookupKeyBody,
]

/** Its operations, in the order of the document's paths. */
export function keyRoutes(app: AdminApp, options: AdminRoutesOptions): void {
  for (const route of [createKey, listKeys, lookupKey, getKey, updateKey, rotateKey, revokeKey, getKeyUsage]) route(app, options)
}
