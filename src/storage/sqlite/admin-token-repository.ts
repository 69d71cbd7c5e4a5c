import type Database from 'better-sqlite3'
import {
  type AdminTokenInsert,
  type AdminTokenRecord,
  type AdminTokenRepository,
  type AdminTokenRevocation,
  withinRole,
} from '../../admin-tokens/admin-token-repository.js'
import type { RecordedChange } from '../../changes/audit-log.js'
import {
  ADMIN_TOKEN_COLUMNS,
  ADMIN_TOKEN_TREE,
  type AdminTokenRow,
  adminTokenValues,
  revocationOf,
  toAdminTokenRecord,
} from '../admin-token-row.js'
import { writeChange } from './write-change.js'

/**
 * Admin tokens in SQLite. Each change is one IMMEDIATE transaction (the write lock first), so a
 * token's maker is checked and a tree revoked with no other process writing in between.
 */
export class SqliteAdminTokenRepository implements AdminTokenRepository {
  private readonly insertRow
  private readonly byId
  private readonly byHash
  private readonly all
  private readonly tree
  private readonly revokeRow
  private readonly logChange
  private readonly insertLogged
  private readonly revokeLogged

  constructor(db: Database.Database) {
    this.insertRow = db.prepare(`INSERT INTO admin_tokens (${ADMIN_TOKEN_COLUMNS}) VALUES (${ADMIN_TOKEN_COLUMNS.replace(/\w+/g, '?')})`)
    this.byId = db.prepare<[string], Pick<AdminTokenRow, 'role' | 'revoked_at'>>('SELECT role, revoked_at FROM admin_tokens WHERE id = ?')
    this.byHash = db.prepare<[string], AdminTokenRow>('SELECT * FROM admin_tokens WHERE hash = ?')
    this.all = db.prepare<[], AdminTokenRow>('SELECT * FROM admin_tokens ORDER BY created_at, id')
    this.tree = db.prepare<[{ id: string }], AdminTokenRow>(ADMIN_TOKEN_TREE.sqlite)
    this.revokeRow = db.prepare<[number, string]>('UPDATE admin_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL')
    this.logChange = db.prepare('INSERT INTO key_changes (key_hash, changed_at) VALUES (?, ?)')
    // The key change log carries admin tokens too: every instance learns of a new token (its filter
    // of known secrets) and drops a revoked one from its cache.
    this.insertLogged = db.transaction((t: AdminTokenRecord, recorded?: RecordedChange): AdminTokenInsert => {
      if (t.createdBy !== null) {
        const maker = this.byId.get(t.createdBy)
        if (maker === undefined || maker.revoked_at !== null) return 'maker_revoked'
        if (!withinRole(t.role, maker.role)) return 'above_maker'
      }
      this.insertRow.run(...adminTokenValues(t))
      this.logChange.run(t.hash, t.createdAt)
      if (recorded !== undefined) writeChange(db, recorded)
      return 'inserted'
    })
    this.revokeLogged = db.transaction(
      (id: string, at: number, recorded?: (revocation: AdminTokenRevocation) => RecordedChange): AdminTokenRevocation | undefined => {
        const tree = this.tree.all({ id })
        if (tree.length === 0) return undefined
        const { changed, revocation } = revocationOf(tree, at)
        for (const t of changed) {
          this.revokeRow.run(at, t.id)
          this.logChange.run(t.hash, at)
        }
        if (recorded !== undefined) writeChange(db, recorded(revocation))
        return revocation
      },
    )
  }

  async insert(t: AdminTokenRecord, recorded?: RecordedChange): Promise<AdminTokenInsert> {
    return this.insertLogged.immediate(t, recorded)
  }

  async findByHash(hash: string): Promise<AdminTokenRecord | undefined> {
    const row = this.byHash.get(hash)
    return row && toAdminTokenRecord(row)
  }

  async list(): Promise<AdminTokenRecord[]> {
    return this.all.all().map(toAdminTokenRecord)
  }

  async revoke(
    id: string,
    at: number,
    recorded?: (revocation: AdminTokenRevocation) => RecordedChange,
  ): Promise<AdminTokenRevocation | undefined> {
    return this.revokeLogged.immediate(id, at, recorded)
  }
}
