import type Database from 'better-sqlite3'
import type { Storage } from '../../src/storage/storage.js'

/**
 * What the API does not show, read straight from a store's database (tests only): a row's
 * version, the counts a check compares with the inventory.
 */
export async function rawQuery<R = Record<string, unknown>>(storage: Storage, sql: string): Promise<R[]> {
  const inner = storage as unknown as { db: Database.Database | { query(sql: string): Promise<R[]> } }
  if (storage.kind === 'sqlite') {
    const statement = (inner.db as Database.Database).prepare(sql)
    if (!statement.reader) {
      statement.run()
      return []
    }
    return statement.all() as R[]
  }
  return (inner.db as { query(sql: string): Promise<R[]> }).query(sql)
}

export async function petVersion(storage: Storage, id: number): Promise<number> {
  const [row] = await rawQuery<{ version: number | bigint }>(storage, `SELECT version FROM pets WHERE id = ${id}`)
  return Number(row?.version)
}

/**
 * The store's invariants, from its tables: an animal an order made pending is held by a placed
 * order (one created pending never had one), every placed order holds a pending animal; the
 * inventory's counts are the animals'.
 * Empty when they hold.
 */
export async function invariantProblems(storage: Storage): Promise<string[]> {
  const problems: string[] = []
  const orphans = await rawQuery<{ id: number }>(
    storage,
    `SELECT id FROM pets WHERE status = 'pending' AND id IN (SELECT pet_id FROM orders)
        AND id NOT IN (SELECT pet_id FROM orders WHERE status = 'placed')`,
  )
  if (orphans.length > 0) problems.push(`animals an order made pending, without a placed order: ${orphans.map((r) => r.id).join(', ')}`)
  const unheld = await rawQuery<{ id: number }>(
    storage,
    `SELECT o.id FROM orders o JOIN pets p ON p.id = o.pet_id WHERE o.status = 'placed' AND (p.status IS NULL OR p.status <> 'pending')`,
  )
  if (unheld.length > 0) problems.push(`placed orders whose animal is not pending: ${unheld.map((r) => r.id).join(', ')}`)
  const counted = await storage.orders.inventory()
  const actual = { available: 0, pending: 0, sold: 0 }
  for (const row of await rawQuery<{ status: keyof typeof actual; n: number | bigint }>(
    storage,
    'SELECT status, count(*) AS n FROM pets WHERE status IS NOT NULL GROUP BY status',
  ))
    actual[row.status] = Number(row.n)
  if (JSON.stringify(counted) !== JSON.stringify(actual))
    problems.push(`inventory ${JSON.stringify(counted)} but the animals are ${JSON.stringify(actual)}`)
  return problems
}
