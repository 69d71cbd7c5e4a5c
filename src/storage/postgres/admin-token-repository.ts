import type { AdminTokenRecord, AdminTokenRepository } from '../../admin-tokens/admin-token-repository.js'
import { type AdminTokenRow, toAdminTokenRecord } from '../admin-token-row.js'
import type { Db } from './connection.js'
import { logKeyChanges } from './key-change-log.js'

export class PostgresAdminTokenRepository implements AdminTokenRepository {
  constructor(private readonly db: Db) {}

  /** The key change log carries new admin tokens too: every instance adds the token to its filter of known secrets. */
  async insert(t: AdminTokenRecord): Promise<void> {
    await this.db.transaction(async (client) => {
      await client.query(
        'INSERT INTO admin_tokens (id, name, hash, prefix, role, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
        [t.id, t.name, t.hash, t.prefix, t.role, t.createdAt, t.revokedAt],
      )
      await logKeyChanges(client, [t.hash], t.createdAt)
    })
  }

  async findByHash(hash: string): Promise<AdminTokenRecord | undefined> {
    const [row] = await this.db.query<AdminTokenRow>('SELECT * FROM admin_tokens WHERE hash = $1', [hash])
    return row && toAdminTokenRecord(row)
  }

  async list(): Promise<AdminTokenRecord[]> {
    return (await this.db.query<AdminTokenRow>('SELECT * FROM admin_tokens ORDER BY created_at, id')).map(toAdminTokenRecord)
  }

  /** The key change log carries revoked admin tokens too: every instance drops the token from its cache. */
  async revoke(id: string, at: number): Promise<boolean> {
    return this.db.transaction(async (client) => {
      const { rows } = await client.query<{ hash: string }>(
        'UPDATE admin_tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING hash',
        [at, id],
      )
      const hash = rows[0]?.hash
      if (hash === undefined) return false
      await logKeyChanges(client, [hash], at)
      return true
    })
  }
}
