import type { Static } from 'typebox'
import type { OrderRecord } from '../../orders/repository.js'
import { ApiError } from '../../shared/errors.js'
import type { Int64 } from '../../shared/int64.js'
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

export const orderNotFound = (id: Int64) => new ApiError('not_found', `No order with id ${id}`)
