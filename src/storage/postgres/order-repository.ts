import type pg from 'pg'
import type { IdempotencyClaim } from '../../idempotency/claim.js'
import { orderChange } from '../../orders/events.js'
import type {
  ChangeOptions,
  ChangeOutcome,
  Inventory,
  ListOrdersOptions,
  NewOrder,
  OrderRecord,
  OrderRecording,
  OrderRepository,
  PlaceOutcome,
} from '../../orders/repository.js'
import { type ClientChange, TRANSITIONS } from '../../orders/state.js'
import type { PetStatus } from '../../pets/schemas.js'
import type { Clock } from '../../shared/clock.js'
import { INT64_MAX, INT64_MIN, type Int64 } from '../../shared/int64.js'
import {
  DUE_ORDERS,
  INSERT_ORDER,
  type Named,
  ORDER_COLUMNS,
  type OrderRow,
  ordersPage,
  orderTransition,
  pageBound,
  petTransition,
  toOrder,
} from '../order-sql.js'
import { type Db, int8Param } from './connection.js'
import { writeChange } from './write-change.js'

type Params = Record<string, unknown>

const inInt64 = (v: Int64): boolean => typeof v === 'number' || (v >= INT64_MIN && v <= INT64_MAX)
const int8 = (v: Int64) => int8Param(v)

/**
 * Reserving an animal that another transaction released a moment ago (a cancel, the sweep) is
 * tried again: under READ COMMITTED each statement sees the last commit, so the next try finds it
 * available. Bounded: a caller racing a stream of releases gets a 409 rather than a loop.
 */
const PLACE_ATTEMPTS = 3

/** The animals of a sweep's batch moved back in one statement (PostgreSQL's `= ANY`), from the same table of transitions. */
const releasePets = (() => {
  const { from, to } = TRANSITIONS.expire.pet
  return `UPDATE pets SET status = '${to}', version = version + 1 WHERE id = ANY($1::bigint[]) AND status = '${from}'`
})()
const expireOrders = (() => {
  const { from, to } = TRANSITIONS.expire.order
  return `UPDATE orders SET status = '${to}', ended_at = $1, version = version + 1
           WHERE id = ANY($2::bigint[]) AND status = '${from}' AND expires_at <= $1 RETURNING ${ORDER_COLUMNS}`
})()

/**
 * The database's time, epoch ms: `now()`, the start of the transaction, the same for each of its
 * statements (a change and the expiry it checks first are judged at one instant).
 */
const DATABASE_NOW = 'SELECT floor(extract(epoch FROM now()) * 1000)::bigint AS now'

/**
 * Orders on PostgreSQL, each method one transaction (READ COMMITTED). The conditional UPDATEs of
 * order-sql.ts take the row they change: a second transaction that wants the same animal or order
 * waits for the first to end, then finds its `from` no longer holds and changes nothing. Row locks
 * are always taken in one order: orders, then pets, then the counts (their trigger), so two
 * transactions never wait on each other in a circle.
 *
 * Holds are judged by the database's clock, read first in each transaction that places, changes
 * or expires orders: instances whose clocks disagree (by seconds, say) judge a hold alike, and the
 * `expiresAt` a client was shown is the one every instance applies. (`holdClock`, for tests
 * only, replaces it.)
 */
export class PostgresOrderRepository implements OrderRepository {
  constructor(
    private readonly db: Db,
    private readonly holdClock?: Clock,
  ) {}

  async placeOrder(order: NewOrder, claim?: IdempotencyClaim, recorded?: OrderRecording): Promise<PlaceOutcome> {
    if (!inInt64(order.petId)) return { outcome: 'unknown_pet' }
    return this.db.transaction(async (client) => {
      if (claim !== undefined) {
        // The lock pets' creates take for the same key (one key names one request, whichever operation).
        const lock = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS ok', [
          `idempotency:${claim.scope}:${claim.key}`,
        ])
        if (!lock.rows[0]!.ok) return { outcome: 'in_flight' }
        const earlier = await client.query<{ fingerprint: string; order_id: Int64 | null }>(
          'SELECT fingerprint, order_id FROM idempotency_keys WHERE key_id = $1 AND idem_key = $2',
          [claim.scope, claim.key],
        )
        const found = earlier.rows[0]
        if (found !== undefined) {
          const placed = found.order_id === null ? undefined : await this.orderIn(client, found.order_id)
          if (found.fingerprint !== claim.fingerprint || placed === undefined) return { outcome: 'reused' }
          return { outcome: 'replayed', order: placed }
        }
      }
      const pet = { pet: int8(order.petId) }
      const now = await this.now(client)
      for (let attempt = 1; ; attempt++) {
        if ((await run(client, petTransition('place'), pet)).rowCount === 1) break
        // A hold that ran out frees the animal for this order at once, sweep or not.
        if (await this.expireOrder(client, orderTransition('expire', 'due-of-pet'), { pet: pet.pet, now }, recorded)) continue
        const found = await client.query<{ status: PetStatus | null }>('SELECT status FROM pets WHERE id = $1', [pet.pet])
        if (found.rows.length === 0) return { outcome: 'unknown_pet' }
        const status = found.rows[0]!.status
        if (status !== 'available' || attempt >= PLACE_ATTEMPTS) return { outcome: 'not_available', petStatus: status }
      }
      const row = (
        await run(client, INSERT_ORDER, {
          pet: pet.pet,
          owner: order.owner,
          key_id: order.keyId,
          now,
          expires_at: order.holdEnds(now),
        })
      ).rows[0] as OrderRow
      const placed = toOrder(row)
      if (claim !== undefined)
        await client.query(
          'INSERT INTO idempotency_keys (key_id, idem_key, fingerprint, pet_id, order_id, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
          [claim.scope, claim.key, claim.fingerprint, placed.petId, placed.id, claim.createdAt],
        )
      await writeChange(client, orderChange(placed, recorded))
      return { outcome: 'placed', order: placed }
    })
  }

  async changeOrder(id: Int64, change: ClientChange, { owner, recorded }: ChangeOptions): Promise<ChangeOutcome> {
    if (!inInt64(id)) return { outcome: 'not_found' }
    return this.db.transaction(async (client) => {
      const found = await this.orderIn(client, id)
      if (found === undefined || (owner !== undefined && found.owner !== owner)) return { outcome: 'not_found' }
      const now = await this.now(client)
      await this.expireOrder(client, orderTransition('expire', 'due'), { id: int8(id), now }, recorded)
      const changed = (await run(client, orderTransition(change, 'id'), { id: int8(id), now })).rows[0] as OrderRow | undefined
      if (changed === undefined) return { outcome: 'not_placed', order: (await this.orderIn(client, id))! }
      await movePet(client, change, changed.pet_id)
      const order = toOrder(changed)
      await writeChange(client, orderChange(order, recorded))
      return { outcome: 'changed', order }
    })
  }

  async getOrder(id: Int64, { owner }: { owner?: string } = {}): Promise<OrderRecord | undefined> {
    if (!inInt64(id)) return undefined
    const [row] = await this.db.query<OrderRow>(`SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1`, [int8(id)])
    return row === undefined || (owner !== undefined && row.owner !== owner) ? undefined : toOrder(row)
  }

  async listOrders({ limit, owner, keyId, status, afterId, order }: ListOrdersOptions): Promise<OrderRecord[]> {
    const desc = order === 'desc'
    const after = pageBound(afterId, desc, inInt64)
    if (after === 'none') return []
    const page = ordersPage({
      owner: owner !== undefined,
      keyId: keyId !== undefined,
      status: status !== undefined,
      after: after !== undefined,
      desc,
    })
    const bound = after === undefined ? undefined : int8(after)
    const rows = await this.db.query<OrderRow>(page.postgres, page.values({ after: bound, limit, owner, key_id: keyId, status }))
    return rows.map(toOrder)
  }

  /**
   * One batch: the due orders no other transaction holds (SKIP LOCKED: several instances sweep
   * side by side without waiting on each other), expired and their animals released together.
   */
  async expireDue(limit: number, recorded?: OrderRecording): Promise<number> {
    return this.db.transaction(async (client) => {
      const now = await this.now(client)
      const due = await client.query<{ id: Int64 }>(`${DUE_ORDERS.postgres} FOR UPDATE SKIP LOCKED`, DUE_ORDERS.values({ now, limit }))
      if (due.rows.length === 0) return 0
      const expired = await client.query<OrderRow>(expireOrders, [now, due.rows.map((r) => String(r.id))])
      const pets = expired.rows.map((r) => String(r.pet_id))
      const released = await client.query(releasePets, [pets])
      if (released.rowCount !== pets.length)
        throw new Error(
          `order invariant broken: ${pets.length - (released.rowCount ?? 0)} animals were not pending under their placed orders`,
        )
      // One write for the batch: its events (and any entries) in one statement each.
      const changes = expired.rows.map((row) => orderChange(toOrder(row), recorded))
      await writeChange(client, { audit: changes.flatMap((c) => c.audit), events: changes.flatMap((c) => c.events ?? []) })
      return pets.length
    })
  }

  async inventory(): Promise<Inventory> {
    const inventory: Inventory = { available: 0, pending: 0, sold: 0 }
    const rows = await this.db.query<{ status: PetStatus; pets: Int64 }>(
      'SELECT status, sum(pets)::bigint AS pets FROM pet_status_counts GROUP BY status',
    )
    for (const { status, pets } of rows) inventory[status] = Number(pets)
    return inventory
  }

  /** The time of this transaction's changes: the database's (or, in tests, `holdClock`'s). */
  private async now(client: pg.PoolClient): Promise<number> {
    if (this.holdClock !== undefined) return this.holdClock.now()
    const { rows } = await client.query<{ now: Int64 }>(DATABASE_NOW)
    return Number(rows[0]!.now)
  }

  private async orderIn(client: pg.PoolClient, id: Int64): Promise<OrderRecord | undefined> {
    const found = await client.query<OrderRow>(`SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1`, [int8(id)])
    return found.rows[0] === undefined ? undefined : toOrder(found.rows[0])
  }

  /** Expires the placed order `statement` names if its hold ran out, with its animal and its record; whether it did. */
  private async expireOrder(
    client: pg.PoolClient,
    statement: Named,
    params: Params,
    recorded: OrderRecording | undefined,
  ): Promise<boolean> {
    const expired = (await run(client, statement, params)).rows[0] as OrderRow | undefined
    if (expired === undefined) return false
    await movePet(client, 'expire', expired.pet_id)
    await writeChange(client, orderChange(toOrder(expired), recorded))
    return true
  }
}

function run(client: pg.PoolClient, statement: Named, params: Params): Promise<pg.QueryResult> {
  return client.query(statement.postgres, statement.values(params))
}

/** The animal's side of an order's change: it must apply, or the invariant "pending while placed" is broken (rolled back). */
async function movePet(client: pg.PoolClient, change: ClientChange | 'expire', petId: Int64): Promise<void> {
  const moved = await run(client, petTransition(change), { pet: int8(petId) })
  if (moved.rowCount !== 1) throw new Error(`order invariant broken: animal ${petId} was not pending under its placed order`)
}
