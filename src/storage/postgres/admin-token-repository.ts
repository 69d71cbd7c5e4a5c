import type pg from 'pg'
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
import type { Db } from './connection.js'
import { logKeyChanges } from './key-change-log.js'
import { writeChange } from './write-change.js'

/**
 * Every change of admin tokens (an insert, a revocation) takes this lock first, one at a time
 * (SHARE ROW EXCLUSIVE conflicts with itself; reads take none it conflicts with). Without it, under
 * READ COMMITTED, a revocation walking the tree could miss a token whose insert checked the maker
 * before the revocation and committed after the walk's snapshot: the minted token would survive its
 * maker. Admin token changes are rare; the lookups of a request are plain reads.
 */
const lockTokens = (client: pg.PoolClient) => client.query('LOCK TABLE admin_tokens IN SHARE ROW EXCLUSIVE MODE')

export class PostgresAdminTokenRepository implements AdminTokenRepository {
  constructor(private readonly db: Db) {}

  /** The key change log carries new admin tokens too: every instance adds the token to its filter of known secrets. */
  async insert(t: AdminTokenRecord, recorded?: RecordedChange): Promise<AdminTokenInsert> {
    return this.db.transaction(async (client) => {
      await lockTokens(client)
      if (t.createdBy !== null) {
        const { rows } = await client.query<Pick<AdminTokenRow, 'role' | 'revoked_at'>>(
          'SELECT role, revoked_at FROM admin_tokens WHERE id = $1',
          [t.createdBy],
        )
        const maker = rows[0]
        if (maker === undefined || maker.revoked_at !== null) return 'maker_revoked'
        if (!withinRole(t.role, maker.role)) return 'above_maker'
      }
      await client.query(
        `INSERT INTO admin_tokens (${ADMIN_TOKEN_COLUMNS}) VALUES (${ADMIN_TOKEN_COLUMNS.split(', ').map((_, i) => `$${i + 1}`)})`,
        adminTokenValues(t),
      )
      await logKeyChanges(client, [t.hash], t.createdAt)
      if (recorded !== undefined) await writeChange(client, recorded)
      return 'inserted'
    })
  }

  async findByHash(hash: string): Promise<AdminTokenRecord | undefined> {
    const [row] = await this.db.query<AdminTokenRow>('SELECT * FROM admin_tokens WHERE hash = $1', [hash])
    return row && toAdminTokenRecord(row)
  }

  async list(): Promise<AdminTokenRecord[]> {
    return (await this.db.query<AdminTokenRow>('SELECT * FROM admin_tokens ORDER BY created_at, id')).map(toAdminTokenRecord)
  }

  /** The key change log carries revoked admin tokens too: every instance drops them from its cache. */
  async revoke(
    id: string,
    at: number,
    recorded?: (revocation: AdminTokenRevocation) => RecordedChange,
  ): Promise<AdminTokenRevocation | undefined> {
    return this.db.transaction(async (client) => {
      await lockTokens(client)
      const { rows } = await client.query<AdminTokenRow>(ADMIN_TOKEN_TREE.postgres, ADMIN_TOKEN_TREE.values({ id }))
      if (rows.length === 0) return undefined
      const { changed, revocation } = revocationOf(rows, at)
      if (changed.length > 0) {
        await client.query('UPDATE admin_tokens SET revoked_at = $1 WHERE id = ANY($2::text[]) AND revoked_at IS NULL', [
          at,
          changed.map((t) => t.id),
        ])
        await logKeyChanges(
          client,
          changed.map((t) => t.hash),
          at,
        )
      }
      if (recorded !== undefined) await writeChange(client, recorded(revocation))
      return revocation
    })
  }
}
