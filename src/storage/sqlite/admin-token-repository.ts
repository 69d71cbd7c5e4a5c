import type Database from 'better-sqlite3'
import type { AdminTokenRecord, AdminTokenRepository } from '../../admin-tokens/admin-token-repository.js'
import { type AdminTokenRow, toAdminTokenRecord } from '../admin-token-row.js'

export class SqliteAdminTokenRepository implements AdminTokenRepository {
  private readonly insertRow
  private readonly byHash
  private readonly all
  private readonly revokeRow
  private readonly logChange
  private readonly revokeLogged
  private readonly insertLogged

  constructor(db: Database.Database) {
    this.insertRow = db.prepare(
      'INSERT INTO admin_tokens (id, name, hash, prefix, role, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    )
    this.byHash = db.prepare<[string], AdminTokenRow>('SELECT * FROM admin_tokens WHERE hash = ?')
    this.all = db.prepare<[], AdminTokenRow>('SELECT * FROM admin_tokens ORDER BY created_at, id')
    this.revokeRow = db.prepare<[number, string], { hash: string }>(
      'UPDATE admin_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL RETURNING hash',
    )
    this.logChange = db.prepare('INSERT INTO key_changes (key_hash, changed_at) VALUES (?, ?)')
    // The key change log carries admin tokens too: every instance learns of a new token (its filter
    // of known secrets) and drops a revoked one from its cache.
    this.insertLogged = db.transaction((t: AdminTokenRecord) => {
      this.insertRow.run(t.id, t.name, t.hash, t.prefix, t.role, t.createdAt, t.revokedAt)
      this.logChange.run(t.hash, t.createdAt)
    })
    this.revokeLogged = db.transaction((id: string, at: number): boolean => {
      const row = this.revokeRow.get(at, id)
      if (row === undefined) return false
      this.logChange.run(row.hash, at)
      return true
    })
  }

  async insert(t: AdminTokenRecord): Promise<void> {
    this.insertLogged.immediate(t)
  }

  async findByHash(hash: string): Promise<AdminTokenRecord | undefined> {
    const row = this.byHash.get(hash)
    return row && toAdminTokenRecord(row)
  }

  async list(): Promise<AdminTokenRecord[]> {
    return this.all.all().map(toAdminTokenRecord)
  }

  async revoke(id: string, at: number): Promise<boolean> {
    return this.revokeLogged.immediate(id, at)
  }
}
