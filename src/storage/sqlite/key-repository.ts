import type Database from 'better-sqlite3'
import type { RecordedChange } from '../../changes/audit-log.js'
import type { ApiKeyRecord } from '../../keys/api-key.js'
import type {
  KeyChangeBatch,
  KeyPageFilter,
  KeyRepository,
  KeyRevocation,
  KeyRotation,
  KeyUpdate,
  KeyUpdated,
} from '../../keys/repository.js'
import { scopesToText } from '../../shared/scopes.js'
import { KEY_COLUMNS, type KeyRow, keyValues, toKeyRecord } from '../key-row.js'
import { writeChange } from './write-change.js'

/** WHERE clause of each key state at `now` (bound as the named parameter @now). */
const STATE_SQL = {
  active: 'revoked_at IS NULL AND (expires_at IS NULL OR expires_at > @now)',
  expired: 'revoked_at IS NULL AND expires_at IS NOT NULL AND expires_at <= @now',
  revoked: 'revoked_at IS NOT NULL',
} as const

/**
 * API keys in SQLite. better-sqlite3 is synchronous, so each mutation is one IMMEDIATE transaction
 * (the write lock first: no other process can change the key between the check and the write).
 */
export class SqliteKeyRepository implements KeyRepository {
  constructor(private readonly db: Database.Database) {}

  private insertRow(k: ApiKeyRecord): void {
    this.db.prepare(`INSERT INTO api_keys (${KEY_COLUMNS}) VALUES (${KEY_COLUMNS.replace(/\w+/g, '?')})`).run(...keyValues(k))
  }

  private logChange(hash: string, at: number): void {
    this.db.prepare('INSERT INTO key_changes (key_hash, changed_at) VALUES (?, ?)').run(hash, at)
  }

  async insertKey(record: ApiKeyRecord, recorded?: RecordedChange): Promise<void> {
    this.db
      .transaction(() => {
        this.insertRow(record)
        // A creation is in the change log too: every instance adds the key to its filter of known secrets.
        this.logChange(record.hash, record.createdAt)
        if (recorded !== undefined) writeChange(this.db, recorded)
      })
      .immediate()
  }

  async insertFirstKey(record: ApiKeyRecord, recorded?: RecordedChange): Promise<boolean> {
    return this.db
      .transaction(() => {
        if (this.db.prepare('SELECT 1 FROM api_keys LIMIT 1').get()) return false
        this.insertRow(record)
        this.logChange(record.hash, record.createdAt)
        if (recorded !== undefined) writeChange(this.db, recorded)
        return true
      })
      .immediate()
  }

  async findKeyByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const row = this.db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE hash = ?').get(hash)
    return row && toKeyRecord(row)
  }

  async findKeyById(id: string): Promise<ApiKeyRecord | undefined> {
    const row = this.db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE id = ?').get(id)
    return row && toKeyRecord(row)
  }

  async listKeys(): Promise<ApiKeyRecord[]> {
    return this.db.prepare<[], KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id').all().map(toKeyRecord)
  }

  async pageKeys({ plan, customerId, state, name, prefix, limit, after, now }: KeyPageFilter): Promise<ApiKeyRecord[]> {
    // Newest first, keyset-paged on (created_at, id): `after` is the last key of the previous page,
    // whose creation time the query reads itself (keys are never deleted, so the cursor stays valid).
    const where = after === undefined ? [] : ['(created_at, id) < (SELECT created_at, id FROM api_keys WHERE id = @after)']
    if (plan !== undefined) where.push('plan = @plan')
    if (customerId !== undefined) where.push('customer_id = @customerId')
    if (state !== undefined) where.push(STATE_SQL[state])
    // instr, not LIKE: no wildcard in the name can change the meaning. lower() folds ASCII only.
    if (name !== undefined) where.push('instr(lower(name), lower(@name)) > 0')
    if (prefix !== undefined) where.push('prefix = @prefix')
    return this.db
      .prepare<[Record<string, unknown>], KeyRow>(
        `SELECT * FROM api_keys ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`} ORDER BY created_at DESC, id DESC LIMIT @limit`,
      )
      .all({
        after: after ?? null,
        plan: plan ?? null,
        customerId: customerId ?? null,
        name: name ?? null,
        prefix: prefix ?? null,
        now,
        limit,
      })
      .map(toKeyRecord)
  }

  async updateKey(id: string, expectedUpdatedAt: number, u: KeyUpdate, recorded: RecordedChange): Promise<KeyUpdated | undefined> {
    return this.db
      .transaction(() => {
        const row = this.db
          .prepare<unknown[], KeyRow>(
            `UPDATE api_keys SET name = ?, plan = ?, per_minute = ?, per_day = ?, expires_at = ?, metadata = ?, scopes = ?, updated_at = ?
              WHERE id = ? AND updated_at = ? AND revoked_at IS NULL AND rotated_to IS NULL RETURNING *`,
          )
          .get(
            u.name,
            u.plan,
            u.perMinute,
            u.perDay,
            u.expiresAt,
            u.metadata === null ? null : JSON.stringify(u.metadata),
            scopesToText(u.scopes),
            u.updatedAt,
            id,
            expectedUpdatedAt,
          )
        if (row === undefined) return undefined
        // The quota is shared along the rotation chain: so are its limits, and so are its scopes
        // (an old key in its grace period may do no more than the key that replaced it).
        const scopes = scopesToText(u.scopes)
        const others = this.db
          .prepare<unknown[], { hash: string }>(
            `UPDATE api_keys SET plan = ?, per_minute = ?, per_day = ?, scopes = ?, updated_at = ?
              WHERE quota_id = ? AND id <> ? AND revoked_at IS NULL
                AND (plan <> ? OR per_minute <> ? OR per_day <> ? OR scopes <> ?) RETURNING hash`,
          )
          .all(u.plan, u.perMinute, u.perDay, scopes, u.updatedAt, row.quota_id, id, u.plan, u.perMinute, u.perDay, scopes)
        for (const { hash } of [row, ...others]) this.logChange(hash, u.updatedAt)
        writeChange(this.db, recorded)
        return { record: toKeyRecord(row), chain: others.map((o) => o.hash) }
      })
      .immediate()
  }

  async rotateKey(r: KeyRotation, recorded: RecordedChange): Promise<boolean> {
    return this.db
      .transaction(() => {
        const old = this.db
          .prepare<unknown[], { hash: string }>(
            `UPDATE api_keys SET rotated_to = ?, expires_at = ?, revoked_at = ?, updated_at = ?
              WHERE id = ? AND updated_at = ? AND revoked_at IS NULL AND rotated_to IS NULL RETURNING hash`,
          )
          .get(r.successor.id, r.expiresAt, r.revokedAt, r.at, r.id, r.expectedUpdatedAt)
        if (old === undefined) return false
        this.insertRow(r.successor)
        this.logChange(old.hash, r.at)
        this.logChange(r.successor.hash, r.at)
        writeChange(this.db, recorded)
        return true
      })
      .immediate()
  }

  async revokeKey(id: string, at: number, recorded?: (revocation: KeyRevocation) => RecordedChange): Promise<KeyRevocation> {
    return this.db
      .transaction((): KeyRevocation => {
        const row = this.db
          .prepare<[number, number, string], { hash: string }>(
            'UPDATE api_keys SET revoked_at = ?, updated_at = ? WHERE id = ? AND revoked_at IS NULL RETURNING hash',
          )
          .get(at, at, id)
        const graces = this.db
          .prepare<[number, number, string, string, number], KeyRow>(
            `UPDATE api_keys SET revoked_at = ?, updated_at = ?
              WHERE quota_id = (SELECT quota_id FROM api_keys WHERE id = ?) AND id <> ?
                AND rotated_to IS NOT NULL AND revoked_at IS NULL AND expires_at > ? RETURNING *`,
          )
          .all(at, at, id, id, at)
          .map(toKeyRecord)
        const revocation = { revoked: row !== undefined, graces }
        for (const { hash } of [...(row === undefined ? [] : [row]), ...graces]) this.logChange(hash, at)
        if (recorded !== undefined) writeChange(this.db, recorded(revocation))
        return revocation
      })
      .immediate()
  }

  async recordLastUsed(times: ReadonlyMap<string, number>): Promise<void> {
    if (times.size === 0) return
    const update = this.db.prepare<[number, string, number]>(
      'UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)',
    )
    this.db.transaction(() => {
      for (const [id, at] of times) update.run(at, id, at)
    })()
  }

  async secretHashes(): Promise<string> {
    const row = this.db
      .prepare<[], { hashes: string | null }>(
        "SELECT group_concat(hash, ',') AS hashes FROM (SELECT hash FROM api_keys UNION ALL SELECT hash FROM admin_tokens)",
      )
      .get()
    return row?.hashes ?? ''
  }

  async changesSince(cursor: number | null): Promise<KeyChangeBatch> {
    if (cursor === null) {
      const row = this.db.prepare<[], { seq: number }>('SELECT COALESCE(MAX(seq), 0) AS seq FROM key_changes').get()
      return { cursor: row?.seq ?? 0, hashes: [] }
    }
    const rows = this.db
      .prepare<[number], { seq: number; key_hash: string }>('SELECT seq, key_hash FROM key_changes WHERE seq > ? ORDER BY seq')
      .all(cursor)
    return { cursor: rows.length ? rows[rows.length - 1]!.seq : cursor, hashes: rows.map((r) => r.key_hash) }
  }
}
