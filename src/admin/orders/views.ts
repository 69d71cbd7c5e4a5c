import type { Static } from 'typebox'
import type { KeyAdministration, KeyView } from '../../keys/administration.js'
import type { OrderRecord } from '../../orders/repository.js'
import { Refusal } from '../../shared/refusal.js'
import { iso, isoOrNull } from '../common/views.js'
import type { AdminOrderSchema } from './schemas.js'

/** What an order shows of the key that placed it. */
export type PlacingKey = Pick<KeyView, 'name' | 'customerId'> | undefined

/**
 * The keys that placed `orders`, each read once (a page names a few keys many times). Read without
 * an audit entry of their own: the operation's entry (`order.list`, `order.read`, `order.cancel`)
 * is the record of what the operator saw.
 */
export async function placingKeys(admin: KeyAdministration, orders: OrderRecord[]): Promise<Map<string, PlacingKey>> {
  const ids = [...new Set(orders.map((order) => order.keyId))]
  const keys = await Promise.all(
    ids.map((id) =>
      admin.getKey(id).catch((error: unknown) => {
        if (error instanceof Refusal && error.kind === 'not_found') return undefined
        throw error
      }),
    ),
  )
  return new Map(ids.map((id, i) => [id, keys[i]]))
}

/** An order as the admin API answers it, with the name and customer of the key that placed it. */
export const orderJson = (r: OrderRecord, key: PlacingKey): Static<typeof AdminOrderSchema> => ({
  id: r.id,
  petId: r.petId,
  status: r.status,
  owner: r.owner,
  keyId: r.keyId,
  keyName: key?.name ?? null,
  customerId: key?.customerId ?? null,
  createdAt: iso(r.createdAt),
  expiresAt: iso(r.expiresAt),
  endedAt: isoOrNull(r.endedAt),
})

/** One order as answered, with its key read. */
export async function oneOrderJson(admin: KeyAdministration, order: OrderRecord): Promise<Static<typeof AdminOrderSchema>> {
  return orderJson(order, (await placingKeys(admin, [order])).get(order.keyId))
}
