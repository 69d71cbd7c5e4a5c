import type { OrderRecord } from '../orders/repository.js'
import { OPEN_STATUS, type OrderChange, type OrderStatus, TRANSITIONS } from '../orders/state.js'
import { type Int64, toInt64 } from '../shared/int64.js'

/** A parameter, `:name` (not `::type`, a PostgreSQL cast). */
const PARAMETER = /(?<![:\w]):([a-z][a-z_]*)/g

/**
 * The SQL of orders, the same text on both engines, made from the state machines of
 * orders/state.ts: every change is a conditional UPDATE whose WHERE holds the transition's `from`,
 * so a change that lost a race (the animal is no longer available, the order no longer placed)
 * changes no row, and the store can tell by the count. Parameters are written `:name`: SQLite
 * binds them by name, PostgreSQL gets them as $1, $2, … (`Named.postgres`).
 */
export class Named {
  /** The text for PostgreSQL, `:name` -> `$n`. */
  readonly postgres: string
  /** The parameters' names in `$n` order. */
  readonly names: string[] = []

  /** The text for SQLite, `:name` -> `@name` (better-sqlite3 binds an object's fields by name). */
  readonly sqlite: string

  constructor(text: string) {
    this.sqlite = text.replace(PARAMETER, '@$1')
    this.postgres = text.replace(PARAMETER, (_, name: string) => {
      let index = this.names.indexOf(name)
      if (index < 0) index = this.names.push(name) - 1
      return `$${index + 1}`
    })
  }

  /** The values for PostgreSQL, in `$n` order. */
  values(params: Record<string, unknown>): unknown[] {
    return this.names.map((name) => {
      if (!(name in params)) throw new Error(`no value for :${name}`)
      return params[name]
    })
  }
}

/** One Named per text, so that a store can keep one prepared statement per Named. */
const made = new Map<string, Named>()
const named = (text: string): Named => {
  let statement = made.get(text)
  if (statement === undefined) {
    statement = new Named(text)
    made.set(text, statement)
  }
  return statement
}

export const ORDER_COLUMNS = 'id, pet_id, status, owner, key_id, created_at, expires_at, ended_at, version'

/** The animal's side of `change` (:pet): one row when its status is the transition's `from`, else none. */
export const petTransition = (change: OrderChange): Named => {
  const { from, to } = TRANSITIONS[change].pet
  return named(`UPDATE pets SET status = '${to}', version = version + 1 WHERE id = :pet AND status = '${from}'`)
}

/** Which placed order an ending change applies to. (Whose it is, the store checks first: an owner never changes.) */
type Target =
  /** Order :id. */
  | 'id'
  /** Order :id, only when its hold ran out at :now. */
  | 'due'
  /** The placed order of animal :pet, only when its hold ran out at :now. */
  | 'due-of-pet'

const TARGETS: Record<Target, string> = {
  id: 'id = :id',
  due: 'id = :id AND expires_at <= :now',
  'due-of-pet': 'pet_id = :pet AND expires_at <= :now',
}

/** The order's side of an ending change (:now is its end): the order as changed, or no row when it was not placed (or not due). */
export const orderTransition = (change: Exclude<OrderChange, 'place'>, target: Target): Named => {
  const { from, to } = TRANSITIONS[change].order
  return named(
    `UPDATE orders SET status = '${to}', ended_at = :now, version = version + 1
      WHERE ${TARGETS[target]} AND status = '${from}' RETURNING ${ORDER_COLUMNS}`,
  )
}

export const INSERT_ORDER = named(
  `INSERT INTO orders (pet_id, status, owner, key_id, created_at, expires_at)
   VALUES (:pet, '${OPEN_STATUS}', :owner, :key_id, :now, :expires_at) RETURNING ${ORDER_COLUMNS}`,
)

/** The placed orders due at :now, oldest hold first (the sweep; an index on expires_at of placed orders serves it). */
export const DUE_ORDERS = named(
  `SELECT id FROM orders WHERE status = '${OPEN_STATUS}' AND expires_at <= :now ORDER BY expires_at, id LIMIT :limit`,
)

/**
 * A page of orders: the filters given, keyset paging on the id (:after, past it in the listing's
 * order), ascending or newest first. Each filter's index ends in the id (migration 008), and is
 * walked backwards for newest first.
 */
export function ordersPage(filters: { owner: boolean; keyId: boolean; status: boolean; after: boolean; desc: boolean }): Named {
  const where: string[] = []
  if (filters.after) where.push(filters.desc ? 'id < :after' : 'id > :after')
  if (filters.owner) where.push('owner = :owner')
  if (filters.keyId) where.push('key_id = :key_id')
  if (filters.status) where.push('status = :status')
  const filtered = where.length === 0 ? '' : ` WHERE ${where.join(' AND ')}`
  return named(`SELECT ${ORDER_COLUMNS} FROM orders${filtered} ORDER BY id${filters.desc ? ' DESC' : ''} LIMIT :limit`)
}

/**
 * The `after` of a page as the engines can bind it: an id beyond int64 (a cursor is any integer
 * the API accepts) is past every order, or before them all, depending on the order: no page at all
 * (`'none'`), or no bound (undefined).
 */
export function pageBound(afterId: Int64 | undefined, desc: boolean, fits: (id: Int64) => boolean): Int64 | undefined | 'none' {
  if (afterId === undefined || fits(afterId)) return afterId
  return afterId > 0 !== desc ? 'none' : undefined
}

/** An orders row as both engines return it (same column names in both migrations). */
export interface OrderRow {
  id: Int64
  pet_id: Int64
  status: OrderStatus
  owner: string
  key_id: string
  created_at: Int64
  expires_at: Int64
  ended_at: Int64 | null
  version: Int64
}

/** Ids, times and versions are safe integers; one beyond 2^53 is refused loudly rather than rounded (as pet ids are). */
function safe(value: Int64, what: string): number {
  const exact = typeof value === 'bigint' ? toInt64(value) : value
  if (typeof exact !== 'number') throw new Error(`${what} ${value} is beyond 2^53`)
  return exact
}

export function toOrder(row: OrderRow): OrderRecord {
  return {
    id: safe(row.id, 'order id'),
    petId: safe(row.pet_id, 'pet id'),
    status: row.status,
    owner: row.owner,
    keyId: row.key_id,
    createdAt: safe(row.created_at, 'created_at'),
    expiresAt: safe(row.expires_at, 'expires_at'),
    endedAt: row.ended_at === null ? null : safe(row.ended_at, 'ended_at'),
    version: safe(row.version, 'version'),
  }
}
