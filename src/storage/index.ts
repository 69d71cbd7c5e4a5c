import { type Config, isPostgresUrl } from '../config/config.js'
import type { Clock } from '../shared/clock.js'
import { UnusableFileError } from '../shared/file-location.js'
import { redactUrl, StartupError } from '../shared/startup-error.js'
import type { ServerLock } from './sqlite/server-lock.js'
import type { Storage } from './storage.js'

/**
 * Opens the engine DATABASE_URL names: postgres:// for PostgreSQL, anything else is a SQLite file.
 * A database that cannot be opened or reached is a StartupError naming DATABASE_URL and the cause.
 * `clock` (the service's) judges orders' holds on SQLite; PostgreSQL judges them by the
 * database's clock, whatever the service's says (orders/repository.ts).
 */
export async function openStorage(
  config: Pick<Config, 'databaseUrl' | 'databaseListenUrl' | 'durability'>,
  clock?: Clock,
): Promise<Storage> {
  if (isPostgresUrl(config.databaseUrl)) {
    const { PostgresStorage } = await import('./postgres/postgres-storage.js')
    const { describeConnectFailure } = await import('./postgres/connection.js')
    try {
      return await PostgresStorage.open({ databaseUrl: config.databaseUrl, listenUrl: config.databaseListenUrl })
    } catch (error) {
      throw new StartupError({ DATABASE_URL: redactUrl(config.databaseUrl) }, describeConnectFailure(error, config.databaseUrl))
    }
  }
  const { SqliteStorage } = await import('./sqlite/sqlite-storage.js')
  try {
    return new SqliteStorage({ ...config, holdClock: clock })
  } catch (error) {
    if (error instanceof UnusableFileError) throw new StartupError({ DATABASE_URL: config.databaseUrl }, error.message)
    throw error
  }
}

/**
 * The server's claim on its SQLite file (see sqlite/server-lock.ts), or undefined on PostgreSQL and
 * in memory. A file another server holds is a StartupError naming DATABASE_URL, the file and the holder.
 * `cli` is the CLI command as the banner prints it, for the hint.
 */
export async function lockStorage(config: Pick<Config, 'databaseUrl'>, cli: string): Promise<ServerLock | undefined> {
  if (isPostgresUrl(config.databaseUrl)) return undefined
  const { lockSqliteDatabase } = await import('./sqlite/server-lock.js')
  try {
    return lockSqliteDatabase(config.databaseUrl, cli)
  } catch (error) {
    if (error instanceof UnusableFileError) throw new StartupError({ DATABASE_URL: config.databaseUrl }, error.message)
    throw error
  }
}
