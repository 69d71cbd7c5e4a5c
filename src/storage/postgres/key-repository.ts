import type pg from 'pg'
import type { ApiKeyRecord } from '../../keys/api-key.js'
import type { KeyRepository, RevocationBatch } from '../../keys/repository.js'
import { type KeyRow, toKeyRecord } from '../key-row.js'
import type { Db } from './connection.js'
import { REVOCATION_CHANNEL, type RevocationWatcher } from './revocation-watcher.js'

const INSERT = `INSERT INTO api_keys (id, name, plan, per_minute, per_day, hash, prefix, created_at, revoked_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`
const insertValues = (k: ApiKeyRecord) => [k.id, k.name, k.plan, k.perMinute, k.perDay, k.hash, k.prefix, k.createdAt, k.revokedAt]

export class PostgresKeyRepository implements KeyRepository {
  constructor(
    private readonly db: Db,
    /** None when LISTEN is off: then watchRevocations is absent and polling alone sees revocations. */
    watcher: RevocationWatcher | undefined,
  ) {
    if (watcher !== undefined) this.watchRevocations = (listener) => watcher.subscribe(listener)
  }

  readonly watchRevocations?: (listener: (hash: string) => void) => Promise<() => Promise<void>>

  async insertKey(record: ApiKeyRecord): Promise<void> {
    await this.db.query(INSERT, insertValues(record))
  }

  async insertFirstKey(record: ApiKeyRecord): Promise<boolean> {
    // Every start after the first one ends here, without taking a lock.
    if ((await this.db.query('SELECT 1 FROM api_keys LIMIT 1')).length > 0) return false
    return this.db.transaction(async (client) => {
      // Self-conflicting and conflicting with INSERT: the check below and the insert are one step
      // for every process, and no other key can slip in between. Plain reads are not blocked.
      await client.query('LOCK TABLE api_keys IN SHARE ROW EXCLUSIVE MODE')
      if ((await client.query('SELECT 1 FROM api_keys LIMIT 1')).rowCount) return false
      await client.query(INSERT, insertValues(record))
      return true
    })
  }

  async findKeyByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const [row] = await this.db.query<KeyRow>('SELECT * FROM api_keys WHERE hash = $1', [hash])
    return row && toKeyRecord(row)
  }

  async listKeys(): Promise<ApiKeyRecord[]> {
    return (await this.db.query<KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id')).map(toKeyRecord)
  }

  async revokeKey(id: string, at: number): Promise<boolean> {
    return this.db.transaction(async (client: pg.PoolClient) => {
      const { rows } = await client.query<{ hash: string }>(
        'UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING hash',
        [at, id],
      )
      const hash = rows[0]?.hash
      if (hash === undefined) return false
      // A sequence hands out numbers in call order, not commit order: without this lock a poller
      // could read seq 6, move its cursor past 5, and never see 5 commit. Revocations are rare.
      await client.query('LOCK TABLE key_revocations IN SHARE ROW EXCLUSIVE MODE')
      await client.query('INSERT INTO key_revocations (key_hash, revoked_at) VALUES ($1, $2)', [hash, at])
      // Delivered to listeners only if and when the transaction commits.
      await client.query('SELECT pg_notify($1, $2)', [REVOCATION_CHANNEL, hash])
      return true
    })
  }

  async revocationsSince(cursor: number | null): Promise<RevocationBatch> {
    if (cursor === null) {
      const [row] = await this.db.query<{ seq: number }>('SELECT COALESCE(MAX(seq), 0) AS seq FROM key_revocations')
      return { cursor: row?.seq ?? 0, hashes: [] }
    }
    const rows = await this.db.query<{ seq: number; key_hash: string }>(
      'SELECT seq, key_hash FROM key_revocations WHERE seq > $1 ORDER BY seq',
      [cursor],
    )
    return { cursor: rows.length ? rows[rows.length - 1]!.seq : cursor, hashes: rows.map((r) => r.key_hash) }
  }
}
