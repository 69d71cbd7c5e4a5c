import type pg from 'pg'
import { KEY_CHANGE_CHANNEL_SQL } from './key-change-watcher.js'

/**
 * Inside the caller's transaction: appends the hashes of created or changed secrets (API keys;
 * admin tokens created or revoked) to the change log and NOTIFYs them (delivered only on commit).
 */
export async function logKeyChanges(client: pg.PoolClient, hashes: string[], at: number): Promise<void> {
  // A sequence hands out numbers in call order, not commit order: without this lock a poller
  // could read seq 6, move its cursor past 5, and never see 5 commit. Key changes are rare.
  await client.query('LOCK TABLE key_changes IN SHARE ROW EXCLUSIVE MODE')
  await client.query('INSERT INTO key_changes (key_hash, changed_at) SELECT unnest($1::text[]), $2', [hashes, at])
  for (const hash of hashes) await client.query(`SELECT pg_notify(${KEY_CHANGE_CHANNEL_SQL}, $1)`, [hash])
}
