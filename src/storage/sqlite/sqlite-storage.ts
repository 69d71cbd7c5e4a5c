import type Database from 'better-sqlite3'
import { type Durability, sqliteFilename } from '../../config.js'
import type { AuditRepository } from '../../keys/administration.js'
import type { KeyRepository } from '../../keys/repository.js'
import type { PetRepository } from '../../pets/repository.js'
import type { UsageRepository } from '../../usage/repository.js'
import type { Storage } from '../storage.js'
import { SqliteAdminTokenRepository } from './admin-token-repository.js'
import { SqliteAuditRepository } from './audit-repository.js'
import { SqliteKeyRepository } from './key-repository.js'
import { openMigrated } from './open-database.js'
import { SqlitePetRepository } from './pet-repository.js'
import { prepareSqliteFile } from './sqlite-file.js'
import { SqliteUsageRepository } from './usage-repository.js'

export interface SqliteOptions {
  databaseUrl: string
  durability: Durability
}

export class SqliteStorage implements Storage {
  readonly kind = 'sqlite'
  readonly pets: PetRepository
  readonly keys: KeyRepository
  readonly adminTokens: SqliteAdminTokenRepository
  readonly audit: AuditRepository
  readonly usage: UsageRepository
  private readonly db: Database.Database

  /** Throws UnusableFileError, with the cause, when the file cannot be created, opened, written or migrated. */
  constructor({ databaseUrl, durability }: SqliteOptions) {
    const name = sqliteFilename(databaseUrl)
    const filename = name === ':memory:' || name === '' ? name : prepareSqliteFile(name)
    this.db = openMigrated(filename, durability)
    this.pets = new SqlitePetRepository(this.db)
    this.keys = new SqliteKeyRepository(this.db)
    this.adminTokens = new SqliteAdminTokenRepository(this.db)
    this.audit = new SqliteAuditRepository(this.db)
    this.usage = new SqliteUsageRepository(this.db)
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get()
  }

  /** For tests and the fault suite: SQLite's own consistency check. */
  integrityCheck(): string {
    return this.db.pragma('integrity_check', { simple: true }) as string
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close()
  }
}
