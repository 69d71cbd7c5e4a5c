import type Database from 'better-sqlite3'
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
import type { ClientChange } from '../../orders/state.js'
import type { PetStatus } from '../../pets/schemas.js'
import type { Clock } from '../../shared/clock.js'
import type { Int64 } from '../../shared/int64.js'
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
import type { CatalogueClock } from './catalogue-clock.js'
import { writeChange } from './write-change.js'

type Params = Record<string, unknown>

/** A rowid is at most 2^63-1: anything beyond is no row (and better-sqlite3 would refuse to bind it). */
const inRange = (id: Int64): boolean => typeof id === 'number' || (id >= -(2n ** 63n) && id < 2n ** 63n)

/**
 * Orders on SQLite. Each method is one IMMEDIATE transaction: it takes the database's write lock
 * before its first read, so its conditional updates (TRANSITIONS, through order-sql.ts) see the
 * last commit of every connection, other worker processes included, and nothing else commits in
 * between. Group commit is not needed here: an order is far rarer than a read.
 *
 * Holds are judged by `clock`, read once per transaction under the write lock: the clock of the
 * machine that holds the file, the one every process using it reads (the workers of `serve
 * --workers` are on that machine; a SQLite file is never shared across machines).
 */
export class SqliteOrderRepository implements OrderRepository {
  private readonly statements = new Map<Named, Database.Statement>()
  private readonly petStatus
  private readonly byId
  private readonly findClaim
  private readonly insertClaim
  private readonly counts
  private readonly place
  private readonly change
  private readonly expire

  constructor(
    private readonly db: Database.Database,
    private readonly catalogue: CatalogueClock,
    private readonly clock: Clock,
  ) {
    this.petStatus = db.prepare<[Int64], { status: PetStatus | null }>('SELECT status FROM pets WHERE id = ?')
    this.byId = db.prepare<[Int64], OrderRow>(`SELECT ${ORDER_COLUMNS} FROM orders WHERE id = ?`)
    this.findClaim = db.prepare<[string, string], { fingerprint: string; order_id: number | null }>(
      'SELECT fingerprint, order_id FROM idempotency_keys WHERE key_id = ? AND idem_key = ?',
    )
    this.insertClaim = db.prepare(
      'INSERT INTO idempotency_keys (key_id, idem_key, fingerprint, pet_id, order_id, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    )
    this.counts = db.prepare<[], { status: PetStatus; pets: number }>('SELECT status, pets FROM pet_status_counts')
    this.place = db.transaction((order: NewOrder, claim: IdempotencyClaim | undefined, recorded: OrderRecording | undefined) =>
      this.placeNow(order, claim, recorded),
    )
    this.change = db.transaction((id: Int64, change: ClientChange, options: ChangeOptions) =>
      this.changeNow(id, change, options, this.clock.now()),
    )
    this.expire = db.transaction((limit: number, recorded: OrderRecording | undefined) => {
      const now = this.clock.now()
      let expired = 0
      for (const { id } of this.statement(DUE_ORDERS).all({ now, limit }) as Array<{ id: number }>)
        if (this.expireOrder({ id, now }, 'due', recorded)) expired++
      return expired
    })
  }

  async placeOrder(order: NewOrder, claim?: IdempotencyClaim, recorded?: OrderRecording): Promise<PlaceOutcome> {
    if (!inRange(order.petId)) return { outcome: 'unknown_pet' }
    try {
      return this.place.immediate(order, claim, recorded)
    } finally {
      this.catalogue.committed()
    }
  }

  async changeOrder(id: Int64, change: ClientChange, options: ChangeOptions): Promise<ChangeOutcome> {
    if (!inRange(id)) return { outcome: 'not_found' }
    try {
      return this.change.immediate(id, change, options)
    } finally {
      // (Also after a refusal: the order may have been expired on the way.)
      this.catalogue.committed()
    }
  }

  async getOrder(id: Int64, { owner }: { owner?: string } = {}): Promise<OrderRecord | undefined> {
    if (!inRange(id)) return undefined
    const row = this.byId.get(id)
    return row === undefined || (owner !== undefined && row.owner !== owner) ? undefined : toOrder(row)
  }

  async listOrders({ limit, owner, keyId, status, afterId, order }: ListOrdersOptions): Promise<OrderRecord[]> {
    const desc = order === 'desc'
    const after = pageBound(afterId, desc, inRange)
    if (after === 'none') return []
    const page = ordersPage({
      owner: owner !== undefined,
      keyId: keyId !== undefined,
      status: status !== undefined,
      after: after !== undefined,
      desc,
    })
    const params: Params = { limit }
    if (after !== undefined) params.after = after
    if (owner !== undefined) params.owner = owner
    if (keyId !== undefined) params.key_id = keyId
    if (status !== undefined) params.status = status
    return (this.statement(page).all(params) as OrderRow[]).map(toOrder)
  }

  async expireDue(limit: number, recorded?: OrderRecording): Promise<number> {
    try {
      return this.expire.immediate(limit, recorded)
    } finally {
      this.catalogue.committed()
    }
  }

  async inventory(): Promise<Inventory> {
    const inventory: Inventory = { available: 0, pending: 0, sold: 0 }
    for (const { status, pets } of this.counts.all()) inventory[status] = pets
    return inventory
  }

  /** Inside the transaction. Never throws for a refusal: only a broken invariant rolls it back. */
  private placeNow(order: NewOrder, claim: IdempotencyClaim | undefined, recorded: OrderRecording | undefined): PlaceOutcome {
    const now = this.clock.now()
    if (claim !== undefined) {
      const earlier = this.findClaim.get(claim.scope, claim.key)
      if (earlier !== undefined) {
        const placed = earlier.order_id === null ? undefined : this.byId.get(earlier.order_id)
        if (earlier.fingerprint !== claim.fingerprint || placed === undefined) return { outcome: 'reused' }
        return { outcome: 'replayed', order: toOrder(placed) }
      }
    }
    const pet = { pet: order.petId }
    let reserved = this.run(petTransition('place'), pet).changes === 1
    // A hold that ran out frees the animal for this order at once, sweep or not.
    if (!reserved && this.expireOrder({ pet: order.petId, now }, 'due-of-pet', recorded))
      reserved = this.run(petTransition('place'), pet).changes === 1
    if (!reserved) {
      const found = this.petStatus.get(order.petId)
      return found === undefined ? { outcome: 'unknown_pet' } : { outcome: 'not_available', petStatus: found.status }
    }
    const row = this.statement(INSERT_ORDER).get({
      pet: order.petId,
      owner: order.owner,
      key_id: order.keyId,
      now,
      expires_at: order.holdEnds(now),
    }) as OrderRow
    const placed = toOrder(row)
    if (claim !== undefined) this.insertClaim.run(claim.scope, claim.key, claim.fingerprint, placed.petId, placed.id, claim.createdAt)
    writeChange(this.db, orderChange(placed, recorded))
    return { outcome: 'placed', order: placed }
  }

  private changeNow(id: Int64, change: ClientChange, { owner, recorded }: ChangeOptions, now: number): ChangeOutcome {
    const row = this.byId.get(id)
    if (row === undefined || (owner !== undefined && row.owner !== owner)) return { outcome: 'not_found' }
    this.expireOrder({ id, now }, 'due', recorded)
    const changed = this.statement(orderTransition(change, 'id')).get({ id, now }) as OrderRow | undefined
    if (changed === undefined) return { outcome: 'not_placed', order: toOrder(this.byId.get(id)!) }
    this.movePet(change, changed.pet_id)
    const order = toOrder(changed)
    writeChange(this.db, orderChange(order, recorded))
    return { outcome: 'changed', order }
  }

  /** Expires the placed order `target` names if its hold ran out, with its animal and its record; whether it did. */
  private expireOrder(params: Params, target: 'due' | 'due-of-pet', recorded: OrderRecording | undefined): boolean {
    const expired = this.statement(orderTransition('expire', target)).get(params) as OrderRow | undefined
    if (expired === undefined) return false
    this.movePet('expire', expired.pet_id)
    writeChange(this.db, orderChange(toOrder(expired), recorded))
    return true
  }

  /** The animal's side of an order's change: it must apply, or the invariant "pending while placed" is broken. */
  private movePet(change: ClientChange | 'expire', petId: Int64): void {
    if (this.run(petTransition(change), { pet: petId }).changes !== 1)
      throw new Error(`order invariant broken: animal ${petId} was not pending under its placed order`)
  }

  private run(named: Named, params: Params): Database.RunResult {
    return this.statement(named).run(params)
  }

  /** One prepared statement per text (made once, on first use), parameters bound by name. */
  private statement(named: Named): Database.Statement {
    let statement = this.statements.get(named)
    if (statement === undefined) {
      statement = this.db.prepare(named.sqlite)
      this.statements.set(named, statement)
    }
    return statement
  }
}
