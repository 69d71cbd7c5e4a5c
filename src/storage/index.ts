import type { Config } from '../config.js'
import type { Storage } from './storage.js'

/** Opens the engine DATABASE_URL names: postgres:// for PostgreSQL, anything else is a SQLite file. */
export async function openStorage(config: Pick<Config, 'databaseUrl' | 'durability'>): Promise<Storage> {
  if (/^postgres(ql)?:\/\//.test(config.databaseUrl)) {
    const { PostgresStorage } = await import('./postgres/postgres-storage.js')
    return PostgresStorage.open({ databaseUrl: config.databaseUrl })
  }
  const { SqliteStorage } = await import('./sqlite/sqlite-storage.js')
  return new SqliteStorage(config)
}
