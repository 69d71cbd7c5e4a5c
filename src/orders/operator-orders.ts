import type { ChangeContext, ListOrder } from '../changes/audit-log.js'
import type { ChangeRecorder } from '../changes/change-recorder.js'
import { customerOrderOwner } from '../keys/api-key.js'
import type { Clock } from '../shared/clock.js'
import type { Int64 } from '../shared/int64.js'
import { notFound, Refusal } from '../shared/refusal.js'
import type { OrderRecord, OrderRepository } from './repository.js'
import type { OrderStatus } from './state.js'

export interface AnyOrdersQuery {
  /** 1 to 100. */
  limit: number
  /** Keyset paging: only ids strictly greater than this. */
  after?: Int64
  status?: OrderStatus
  /** Only the orders placed with this API key. */
  keyId?: string
  /** Only the orders of this customer, placed with any of its keys. */
  customerId?: string
  /** `desc`: newest first; ascending (the default) otherwise. */
  order?: ListOrder
}

/**
 * Every caller's orders as operators see and change them (the admin API): no owner, and every call
 * on record, with the key that placed the order as the entry's key, so that a key's audit history
 * shows what operators did to its orders.
 */
export class OperatorOrders {
  constructor(
    private readonly orders: OrderRepository,
    private readonly recorder: ChangeRecorder,
    private readonly clock: Clock,
  ) {}

  /** A page in ascending id order (descending with `order: 'desc'`); `nextAfter` when another page follows. */
  async list(query: AnyOrdersQuery, ctx?: ChangeContext): Promise<{ orders: OrderRecord[]; nextAfter: string | null }> {
    const { limit, after, status, keyId, customerId, order } = query
    const owner = customerId === undefined ? undefined : customerOrderOwner(customerId)
    // One more than the page: whether there is a next page, without a count.
    const rows = await this.orders.listOrders({ limit: limit + 1, afterId: after, order, status, keyId, owner })
    const orders = rows.slice(0, limit)
    // `after` may be a bigint (int64 above 2^53), which JSON cannot hold: the audit details keep its digits.
    await this.recorder.read(ctx, {
      action: 'order.list',
      keyId: keyId ?? null,
      details: { limit, after: after === undefined ? undefined : String(after), order, status, customerId },
    })
    return { orders, nextAfter: rows.length > limit ? String(orders[orders.length - 1]!.id) : null }
  }

  async get(id: Int64, ctx?: ChangeContext): Promise<OrderRecord> {
    const order = await this.orders.getOrder(id)
    if (order === undefined) throw notFound('order', String(id))
    await this.recorder.read(ctx, { action: 'order.read', keyId: order.keyId, details: { orderId: String(id) } })
    return order
  }

  /**
   * Cancels a placed order of anyone, as its owner would: its entry (`order.cancel`) is written in
   * the cancel's own transaction, as a key change's is. An order the cancel found expired on the
   * way records nothing of that (no entry: the hold ran out, no operator ended it).
   */
  async cancel(id: Int64, ctx: ChangeContext): Promise<OrderRecord> {
    const result = await this.orders.changeOrder(id, 'cancel', {
      recorded: (order) =>
        this.recorder.change(
          ctx,
          this.clock.now(),
          ...(order.status === 'cancelled'
            ? [{ action: 'order.cancel' as const, keyId: order.keyId, details: { orderId: String(order.id), owner: order.owner } }]
            : []),
        ),
    })
    if (result.outcome === 'not_found') throw notFound('order', String(id))
    if (result.outcome === 'not_placed')
      throw new Refusal('order_not_placed', `Order ${result.order.id} cannot be cancelled: it is ${result.order.status}`)
    return result.order
  }
}
