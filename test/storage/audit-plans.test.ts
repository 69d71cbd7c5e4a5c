/**
 * An audit log page never scans the audit table, on either engine (src/storage/audit-query.ts):
 * every statement the repository runs, for every combination of filters (key, action, kind, actor
 * type, actor, a narrow or a wide time range), both orders, with and without a cursor, walks an
 * index (EXPLAIN QUERY PLAN on SQLite, EXPLAIN on PostgreSQL) and, on SQLite, the one its filters
 * call for, in seq order (no sort). What the pages hold is test/storage/audit-paging.test.ts's.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, type TestContext, test } from 'node:test'
import type Database from 'better-sqlite3'
import pg from 'pg'
import type { AuditQuery, AuditRepository } from '../../src/changes/audit-log.js'
import { PostgresAuditRepository } from '../../src/storage/postgres/audit-repository.js'
import { clientConfig, Db } from '../../src/storage/postgres/connection.js'
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js'
import { SqliteAuditRepository } from '../../src/storage/sqlite/audit-repository.js'
import { openMigrated } from '../../src/storage/sqlite/open-database.js'
import { PG_PATIENCE, PG_URL, requireService } from '../helpers/services.js'
import { dropSchema } from '../helpers/stores.js'

const ROWS = 40_000
const T0 = Date.UTC(2030, 0, 1)
const ACTIONS = [
  'key.create',
  'key.update',
  'key.rotate',
  'key.revoke',
  'key.list',
  'key.read',
  'key.usage',
  'audit_log.list',
  'key.usage_history',
  'usage.top',
  'order.cancel',
  'order.list',
  'order.read',
  'admin_token.create',
  'admin_token.revoke',
  'event.list',
]

/**
 * ROWS entries, one a second: one in fifty by the CLI, the others by seven admin tokens; every
 * action in turn; thirteen keys, and one entry in five about no key. The same SELECT on both engines.
 */
const FILL_SELECT = `SELECT ${T0} + i * 1000,
    CASE WHEN i % 50 = 0 THEN 'cli' ELSE 'admin_token' END,
    CASE WHEN i % 50 = 0 THEN 'ops' ELSE 'adm_' || (i % 7) END,
    (${`CASE i % ${ACTIONS.length} ${ACTIONS.map((a, n) => `WHEN ${n} THEN '${a}'`).join(' ')} END`}),
    CASE WHEN i % 5 = 0 THEN NULL ELSE 'key_' || (i % 13) END,
    '{}', NULL`
const INSERT = 'INSERT INTO audit_log (at, actor_type, actor_id, action, key_id, details, request_id)'

const EQUALITY_FILTERS = {
  keyId: 'key_3',
  action: 'key.update',
  kind: 'change',
  actorType: 'cli',
  actorId: 'adm_2',
} as const satisfies Partial<AuditQuery>

/** A narrow range (fewer entries than the repository counts on the time index) and a wide one (more). */
const TIME_RANGES: Array<Partial<AuditQuery>> = [
  {},
  { from: T0 + 20_000_000, to: T0 + 20_500_000 },
  { from: T0 + 5_000_000 },
  { to: T0 + 30_000_000 },
]

function* queries(): Generator<AuditQuery> {
  const names = Object.keys(EQUALITY_FILTERS) as Array<keyof typeof EQUALITY_FILTERS>
  for (let mask = 0; mask < 1 << names.length; mask++) {
    const equal = Object.fromEntries(names.filter((_, i) => mask & (1 << i)).map((n) => [n, EQUALITY_FILTERS[n]]))
    for (const range of TIME_RANGES)
      for (const order of ['asc', 'desc'] as const)
        for (const after of [undefined, ROWS / 2]) yield { limit: 20, order, after, ...equal, ...range } as AuditQuery
  }
}

/** The index a page walks, as docs/keys.md states the rule: a key's of one kind, a key's, an actor's, an action's, a kind's, an actor type's, else the seq. */
function expectedIndex(q: AuditQuery): string {
  if (q.keyId !== undefined && q.kind !== undefined) return 'audit_log_key_id_kind_seq'
  if (q.keyId !== undefined) return 'audit_log_key_id_seq'
  if (q.actorId !== undefined) return 'audit_log_actor_id_seq'
  if (q.action !== undefined) return 'audit_log_action_seq'
  if (q.kind !== undefined) return 'audit_log_kind_seq'
  if (q.actorType !== undefined) return 'audit_log_actor_type_seq'
  return 'INTEGER PRIMARY KEY'
}

interface Statement {
  sql: string
  params: unknown[]
}

/** Runs every query through the repository and hands each statement it ran to `check`. */
async function everyStatement(repo: AuditRepository, ran: Statement[], check: (q: AuditQuery, s: Statement) => Promise<void>) {
  let statements = 0
  for (const q of queries()) {
    ran.length = 0
    await repo.list(q)
    assert.ok(ran.length > 0, 'the repository ran a statement')
    for (const s of ran) await check(q, s)
    statements += ran.length
  }
  return statements
}

describe('audit log pages walk an index, never the table', () => {
  test('on SQLite: the index of the filters, in seq order, for every combination', async (t: TestContext) => {
    const db = openMigrated(':memory:', 'process')
    t.after(() => db.close())
    db.prepare(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) ${INSERT} ${FILL_SELECT} FROM n`).run(ROWS)
    const ran: Statement[] = []
    const recording = {
      prepare(sql: string) {
        const statement = db.prepare(sql)
        return {
          all: (...params: unknown[]) => {
            ran.push({ sql, params })
            return statement.all(...params)
          },
        }
      },
    } as unknown as Database.Database
    const statements = await everyStatement(new SqliteAuditRepository(recording), ran, async (q, s) => {
      const plan = db
        .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${s.sql}`)
        .all(...s.params)
        .map((r) => r.detail)
      const where = `${JSON.stringify(q)}\n${s.sql}\n${plan.join('\n')}`
      // The names of a page's admin tokens: by their primary key, a page of ids at most.
      if (/\bFROM admin_tokens\b/.test(s.sql)) {
        assert.deepEqual(plan, ['SEARCH admin_tokens USING INDEX sqlite_autoindex_admin_tokens_1 (id=?)'], where)
        return
      }
      const reads = plan.filter((line) => /\baudit_log\b/.test(line))
      assert.ok(reads.length > 0, where)
      for (const line of reads) assert.match(line, /^SEARCH audit_log USING /, `a search on an index, not a scan: ${where}`)
      assert.ok(!plan.some((line) => line.includes('TEMP B-TREE')), `no sort: ${where}`)
      const index = s.sql.includes('ORDER BY at') ? 'audit_log_at_seq' : expectedIndex(q)
      assert.ok(reads.some((line) => line.includes(index)) && reads.length === 1, `walks ${index}: ${where}`)
    })
    assert.ok(statements > 512)
  })

  test('on PostgreSQL: an index scan, never a sequential scan of audit_log, for every combination', async (t: TestContext) => {
    if (!(await requireService(t, 'PostgreSQL'))) return
    const schema = `test_${randomBytes(6).toString('hex')}`
    const storage = await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema, listenUrl: 'off' })
    const pool = new pg.Pool({ ...clientConfig(PG_URL, schema), max: 2 })
    t.after(async () => {
      await pool.end()
      await storage.close()
      await dropSchema(schema)
    })
    const db = new Db(pool)
    await db.query(`${INSERT} ${FILL_SELECT} FROM generate_series(1, ${ROWS}) AS i`)
    await db.query('ANALYZE audit_log')
    const ran: Statement[] = []
    const recording = {
      query: (sql: string, params: unknown[]) => {
        ran.push({ sql, params })
        return db.query(sql, params)
      },
    } as unknown as Db
    const statements = await everyStatement(new PostgresAuditRepository(recording), ran, async (q, s) => {
      // The names of a page's admin tokens (a table of a few rows, by its primary key): any plan is cheap.
      if (/\bFROM admin_tokens\b/.test(s.sql)) return
      const [row] = await db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${s.sql}`, s.params)
      const plan = (row!['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan
      const scans = nodes(plan).filter((n) => n['Relation Name'] === 'audit_log')
      const where = `${JSON.stringify(q)}\n${s.sql}\n${JSON.stringify(plan)}`
      assert.ok(scans.length > 0, where)
      for (const scan of scans) assert.match(scan['Node Type'], /^(Index Scan|Index Only Scan|Bitmap Heap Scan)$/, where)
    })
    assert.ok(statements > 512)
  })
})

interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  Plans?: PlanNode[]
}

const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)]
