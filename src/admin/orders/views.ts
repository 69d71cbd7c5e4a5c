import type { Static } from 'typebox'
import type { OrderRecord } from '../../orders/repository.js'
import { iso, isoOrNull } from '../common/views.js'
import type { AdminOrderSchema } from './schemas.js'

export const orderJson = (r: OrderRecord): Static<typeof AdminOrderSchema> => ({
  id: r.id,
  petId: r.petId,
  status: r.status,
  owner: r.owner,
  keyId: r.keyId,
  createdAt: iso(r.createdAt),
  expiresAt: iso(r.expiresAt),
  endedAt: isoOrNull(r.endedAt),
})
