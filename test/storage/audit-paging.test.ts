/**
 * What the pages of a bounded audit walk hold (src/storage/audit-query.ts), on both engines: with
 * small bounds (a page examines at most 7 rows; a time range of at most 20 entries bounds the walk
 * to their seqs), every combination of filters, both orders, followed page by page from nextAfter,
 * lists exactly the entries the filters select, in order, each once, also when entries' times do
 * not follow their seqs (writers' clocks); a page is short, even empty, only where the walk
 * stopped at its bound, and says where to go on.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, type TestContext, test } from 'node:test'
import pg from 'pg'
import { AUDIT_READ_ACTIONS, type AuditAction } from '../../src/changes/audit-actions.js'
import type { AuditEntry, AuditQuery, AuditRepository } from '../../src/changes/audit-log.js'
import type { AuditScanLimits } from '../../src/storage/audit-query.js'
import { PostgresAuditRepository } from '../../src/storage/postgres/audit-repository.js'
import { clientConfig, Db } from '../../src/storage/postgres/connection.js'
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js'
import { SqliteAuditRepository } from '../../src/storage/sqlite/audit-repository.js'
import { openMigrated } from '../../src/storage/sqlite/open-database.js'
import { PG_PATIENCE, PG_URL, requireService } from '../helpers/services.js'
import { dropSchema } from '../helpers/stores.js'

const LIMITS: AuditScanLimits = { rows: 7, timeRange: 20 }
const T0 = Date.UTC(2030, 0, 1)
const ACTIONS: AuditAction[] = ['key.create', 'key.read', 'key.update', 'key.list', 'key.revoke', 'audit_log.list', 'admin_token.create']

/** 240 entries, one a second but every 17th 40 s late and every 23rd 30 s early (times out of seq order). */
const LOG: Array<Omit<AuditEntry, 'seq'>> = Array.from({ length: 240 }, (_, i) => ({
  at: T0 + i * 1000 + (i % 17 === 0 ? -40_000 : i % 23 === 0 ? 30_000 : 0),
  actor: i % 11 === 0 ? { type: 'cli', id: 'ops' } : { type: 'admin_token', id: `adm_${i % 3}` },
  action: ACTIONS[(i * 5) % ACTIONS.length]!,
  keyId: i % 4 === 0 ? null : `key_${i % 5}`,
  details: { i },
  requestId: null,
}))

const FILTERS: Partial<AuditQuery> = { keyId: 'key_2', action: 'key.update', kind: 'change', actorType: 'admin_token', actorId: 'adm_1' }
const TIME_RANGES: Array<Partial<AuditQuery>> = [
  {},
  { from: T0 + 115_000, to: T0 + 130_000 }, // narrow (14 entries, fewer than LIMITS.timeRange), seq 93 in it out of order, 116 and 120 not
  { from: T0 + 60_000 }, // wide
  { from: T0 + 30_000, to: T0 + 200_000 },
]

function matches(e: Omit<AuditEntry, 'seq'>, q: AuditQuery): boolean {
  if (q.keyId !== undefined && e.keyId !== q.keyId) return false
  if (q.action !== undefined && e.action !== q.action) return false
  if (q.actorType !== undefined && e.actor.type !== q.actorType) return false
  if (q.actorId !== undefined && e.actor.id !== q.actorId) return false
  if (q.kind !== undefined && AUDIT_READ_ACTIONS.includes(e.action) !== (q.kind === 'read')) return false
  if (q.from !== undefined && e.at < q.from) return false
  if (q.to !== undefined && e.at >= q.to) return false
  return true
}

interface Engine {
  name: string
  open(t: TestContext): Promise<AuditRepository | undefined>
}

const ENGINES: Engine[] = [
  {
    name: 'SQLite',
    async open(t) {
      const db = openMigrated(':memory:', 'process')
      t.after(() => db.close())
      return new SqliteAuditRepository(db, LIMITS)
    },
  },
  {
    name: 'PostgreSQL',
    async open(t) {
      if (!(await requireService(t, 'PostgreSQL'))) return undefined
      const schema = `test_${randomBytes(6).toString('hex')}`
      const storage = await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema, listenUrl: 'off' })
      const pool = new pg.Pool({ ...clientConfig(PG_URL, schema), max: 2 })
      t.after(async () => {
        await pool.end()
        await storage.close()
        await dropSchema(schema)
      })
      return new PostgresAuditRepository(new Db(pool), LIMITS)
    },
  },
]

for (const engine of ENGINES) {
  describe(`bounded audit pages on ${engine.name}`, () => {
    test('every combination of filters, both orders, page by page: exactly the entries selected', async (t) => {
      const repo = await engine.open(t)
      if (repo === undefined) return
      for (const entry of LOG) await repo.write({ audit: [entry] })
      const names = Object.keys(FILTERS) as Array<keyof typeof FILTERS>
      let shortPages = 0
      for (let mask = 0; mask < 1 << names.length; mask++) {
        for (const range of TIME_RANGES) {
          for (const order of ['asc', 'desc'] as const) {
            const q = {
              limit: 4,
              order,
              ...range,
              ...Object.fromEntries(names.filter((_, i) => mask & (1 << i)).map((n) => [n, FILTERS[n]])),
            }
            const expected = LOG.map((e, i) => ({ seq: i + 1, e }))
              .filter(({ e }) => matches(e, q))
              .map(({ seq }) => seq)
            if (order === 'desc') expected.reverse()
            const listed: number[] = []
            let after: number | undefined
            for (let page = 0; ; page++) {
              assert.ok(page <= LOG.length, `the pages end: ${JSON.stringify(q)}`)
              const { entries, nextAfter } = await repo.list({ ...q, after })
              assert.ok(entries.length <= q.limit)
              listed.push(...entries.map((e) => e.seq))
              if (nextAfter === null) break
              if (entries.length < q.limit) shortPages++
              assert.ok(after === undefined || (order === 'asc' ? nextAfter > after : nextAfter < after), 'the cursor moves on')
              after = nextAfter
            }
            assert.deepEqual(listed, expected, JSON.stringify(q))
          }
        }
      }
      assert.ok(shortPages > 0, 'some walks stopped at their bound before a page was full')
    })

    test('an empty time range, and a cursor past the end, list nothing and end', async (t) => {
      const repo = await engine.open(t)
      if (repo === undefined) return
      for (const entry of LOG.slice(0, 30)) await repo.write({ audit: [entry] })
      assert.deepEqual(await repo.list({ limit: 5, from: T0 + 3_600_000 }), { entries: [], nextAfter: null })
      assert.deepEqual(await repo.list({ limit: 5, after: 30, actorId: 'adm_1', action: 'key.read' }), { entries: [], nextAfter: null })
      assert.deepEqual(await repo.list({ limit: 5, order: 'desc', after: 1, kind: 'read' }), { entries: [], nextAfter: null })
    })
  })
}
