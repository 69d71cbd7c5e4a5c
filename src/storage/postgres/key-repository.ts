import type pg from 'pg'
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
import type { Db } from './connection.js'
import { logKeyChanges } from './key-change-log.js'
import type { KeyChangeWatcher } from './key-change-watcher.js'
import { writeChange } from './write-change.js'

const INSERT = `INSERT INTO api_keys (${KEY_COLUMNS}) VALUES (${KEY_COLUMNS.split(', ')
  .map((_, i) => `$${i + 1}`)
  .join(', ')})`

/** WHERE clause of a time-dependent key state; `now` is bound as the parameter numbered `n`. */
const stateSql = (state: 'active' | 'expired', n: number): string =>
  state === 'active'
    ? `revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $${n})`
    : `revoked_at IS NULL AND expires_at IS NOT NULL AND expires_at <= $${n}`

const metadataParam = (m: Record<string, unknown> | null) => (m === null ? null : JSON.stringify(m))

export class PostgresKeyRepository implements KeyRepository {
  constructor(
    private readonly db: Db,
    /** None when LISTEN is off: then watchChanges is absent and polling alone sees changes. */
    watcher: KeyChangeWatcher | undefined,
  ) {
    if (watcher !== undefined) this.watchChanges = (listener) => watcher.subscribe(listener)
  }

  readonly watchChanges?: (listener: (hash: string) => void) => Promise<() => Promise<void>>

  async insertKey(record: ApiKeyRecord, recorded?: RecordedChange): Promise<void> {
    await this.db.transaction(async (client) => {
      await client.query(INSERT, keyValues(record))
      // A creation is in the change log too: every instance adds the key to its filter of known secrets.
      await logKeyChanges(client, [record.hash], record.createdAt)
      if (recorded !== undefined) await writeChange(client, recorded)
    })
  }

  async insertFirstKey(record: ApiKeyRecord, recorded?: RecordedChange): Promise<boolean> {
    // Every start after the first one ends here, without taking a lock.
    if ((await this.db.query('SELECT 1 FROM api_keys LIMIT 1')).length > 0) return false
    return this.db.transaction(async (client) => {
      // Self-conflicting and conflicting with INSERT: the check below and the insert are one step
      // for every process, and no other key can slip in between. Plain reads are not blocked.
      await client.query('LOCK TABLE api_keys IN SHARE ROW EXCLUSIVE MODE')
      if ((await client.query('SELECT 1 FROM api_keys LIMIT 1')).rowCount) return false
      await client.query(INSERT, keyValues(record))
      await logKeyChanges(client, [record.hash], record.createdAt)
      if (recorded !== undefined) await writeChange(client, recorded)
      return true
    })
  }

  async findKeyByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const [row] = await this.db.query<KeyRow>('SELECT * FROM api_keys WHERE hash = $1', [hash])
    return row && toKeyRecord(row)
  }

  async findKeyById(id: string): Promise<ApiKeyRecord | undefined> {
    const [row] = await this.db.query<KeyRow>('SELECT * FROM api_keys WHERE id = $1', [id])
    return row && toKeyRecord(row)
  }

  async listKeys(): Promise<ApiKeyRecord[]> {
    return (await this.db.query<KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id')).map(toKeyRecord)
  }

  async pageKeys({ plan, customerId, state, name, prefix, limit, after, now }: KeyPageFilter): Promise<ApiKeyRecord[]> {
    // Newest first, keyset-paged on (created_at, id): `after` is the last key of the previous page,
    // whose creation time the query reads itself (keys are never deleted, so the cursor stays valid).
    // COLLATE "C": the same byte order as SQLite's, whatever the database's collation.
    const values: unknown[] = []
    const where: string[] = []
    if (after !== undefined) {
      values.push(after)
      where.push('(created_at, id COLLATE "C") < (SELECT created_at, id COLLATE "C" FROM api_keys WHERE id = $1)')
    }
    if (plan !== undefined) {
      values.push(plan)
      where.push(`plan = $${values.length}`)
    }
    if (customerId !== undefined) {
      values.push(customerId)
      where.push(`customer_id = $${values.length}`)
    }
    if (state === 'revoked') where.push('revoked_at IS NOT NULL')
    else if (state !== undefined) {
      values.push(now)
      where.push(stateSql(state, values.length))
    }
    if (name !== undefined) {
      values.push(name)
      // strpos, not LIKE: no wildcard in the name can change the meaning.
      where.push(`strpos(lower(name), lower($${values.length})) > 0`)
    }
    if (prefix !== undefined) {
      values.push(prefix)
      where.push(`prefix COLLATE "C" = $${values.length}`)
    }
    values.push(limit)
    const rows = await this.db.query<KeyRow>(
      `SELECT * FROM api_keys ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`}
        ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $${values.length}`,
      values,
    )
    return rows.map(toKeyRecord)
  }

  async updateKey(id: string, expectedUpdatedAt: number, u: KeyUpdate, recorded: RecordedChange): Promise<KeyUpdated | undefined> {
    return this.db.transaction(async (client) => {
      const { rows } = await client.query<KeyRow>(
        `UPDATE api_keys SET name = $1, plan = $2, per_minute = $3, per_day = $4, expires_at = $5, metadata = $6, scopes = $7, updated_at = $8
          WHERE id = $9 AND updated_at = $10 AND revoked_at IS NULL AND rotated_to IS NULL RETURNING *`,
        [
          u.name,
          u.plan,
          u.perMinute,
          u.perDay,
          u.expiresAt,
          metadataParam(u.metadata),
          scopesToText(u.scopes),
          u.updatedAt,
          id,
          expectedUpdatedAt,
        ],
      )
      const row = rows[0]
      if (row === undefined) return undefined
      // The quota is shared along the rotation chain: so are its limits, and so are its scopes
      // (an old key in its grace period may do no more than the key that replaced it).
      const others = await client.query<{ hash: string }>(
        `UPDATE api_keys SET plan = $1, per_minute = $2, per_day = $3, scopes = $4, updated_at = $5
          WHERE quota_id = $6 AND id <> $7 AND revoked_at IS NULL
            AND (plan <> $1 OR per_minute <> $2 OR per_day <> $3 OR scopes <> $4) RETURNING hash`,
        [u.plan, u.perMinute, u.perDay, scopesToText(u.scopes), u.updatedAt, row.quota_id, id],
      )
      const chain = others.rows.map((r) => r.hash)
      await logKeyChanges(client, [row.hash, ...chain], u.updatedAt)
      await writeChange(client, recorded)
      return { record: toKeyRecord(row), chain }
    })
  }

  async rotateKey(r: KeyRotation, recorded: RecordedChange): Promise<boolean> {
    return this.db.transaction(async (client) => {
      const { rows } = await client.query<{ hash: string }>(
        `UPDATE api_keys SET rotated_to = $1, expires_at = $2, revoked_at = $3, updated_at = $4
          WHERE id = $5 AND updated_at = $6 AND revoked_at IS NULL AND rotated_to IS NULL RETURNING hash`,
        [r.successor.id, r.expiresAt, r.revokedAt, r.at, r.id, r.expectedUpdatedAt],
      )
      const hash = rows[0]?.hash
      if (hash === undefined) return false
      await client.query(INSERT, keyValues(r.successor))
      await logKeyChanges(client, [hash, r.successor.hash], r.at)
      await writeChange(client, recorded)
      return true
    })
  }

  async revokeKey(id: string, at: number, recorded?: (revocation: KeyRevocation) => RecordedChange): Promise<KeyRevocation> {
    return this.db.transaction(async (client: pg.PoolClient) => {
      // The chain's rows locked in one order first: two revocations in one chain wait, never deadlock.
      await client.query('SELECT 1 FROM api_keys WHERE quota_id = (SELECT quota_id FROM api_keys WHERE id = $1) ORDER BY id FOR UPDATE', [
        id,
      ])
      const { rows } = await client.query<{ hash: string }>(
        'UPDATE api_keys SET revoked_at = $1, updated_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING hash',
        [at, id],
      )
      const graces = await client.query<KeyRow>(
        `UPDATE api_keys SET revoked_at = $1, updated_at = $1
          WHERE quota_id = (SELECT quota_id FROM api_keys WHERE id = $2) AND id <> $2
            AND rotated_to IS NOT NULL AND revoked_at IS NULL AND expires_at > $1 RETURNING *`,
        [at, id],
      )
      const revocation = { revoked: rows.length > 0, graces: graces.rows.map(toKeyRecord) }
      const hashes = [...rows, ...graces.rows].map((r) => r.hash)
      if (hashes.length > 0) await logKeyChanges(client, hashes, at)
      if (recorded !== undefined) await writeChange(client, recorded(revocation))
      return revocation
    })
  }

  async recordLastUsed(times: ReadonlyMap<string, number>): Promise<void> {
    if (times.size === 0) return
    // One statement for the whole batch, whatever its size.
    await this.db.query(
      `UPDATE api_keys AS k SET last_used_at = v.at
         FROM unnest($1::text[], $2::bigint[]) AS v(id, at)
        WHERE k.id = v.id AND (k.last_used_at IS NULL OR k.last_used_at < v.at)`,
      [[...times.keys()], [...times.values()]],
    )
  }

  async secretHashes(): Promise<string> {
    const [row] = await this.db.query<{ hashes: string | null }>(
      "SELECT string_agg(hash, ',') AS hashes FROM (SELECT hash FROM api_keys UNION ALL SELECT hash FROM admin_tokens) AS secrets",
    )
    return row?.hashes ?? ''
  }

  async changesSince(cursor: number | null): Promise<KeyChangeBatch> {
    if (cursor === null) {
      const [row] = await this.db.query<{ seq: number }>('SELECT COALESCE(MAX(seq), 0) AS seq FROM key_changes')
      return { cursor: row?.seq ?? 0, hashes: [] }
    }
    const rows = await this.db.query<{ seq: number; key_hash: string }>(
      'SELECT seq, key_hash FROM key_changes WHERE seq > $1 ORDER BY seq',
      [cursor],
    )
    return { cursor: rows.length ? rows[rows.length - 1]!.seq : cursor, hashes: rows.map((r) => r.key_hash) }
  }
}
