import { AUDIT_READ_ACTIONS } from '../changes/audit-actions.js'
import { AUDIT_SCAN_LIMIT, AUDIT_TIME_RANGE_LIMIT, type AuditEntry, type AuditPage, type AuditQuery } from '../changes/audit-log.js'
import { type AuditRow, toAuditEntry } from './audit-row.js'

/**
 * The SQL of an audit log page, the same on both engines but for their placeholders (`?` or `$n`),
 * and the reading of its rows. A page costs a bounded number of rows whatever the filters and
 * however long the log: an admin's reads must not hold SQLite's one thread (the event loop) for a
 * scan of millions of rows, nor PostgreSQL's CPU.
 *
 * - The page walks one index in the listing's order, chosen by the filters (`walkedFilters`):
 *   `(key_id, seq)`, `(actor_id, seq)`, `(action, seq)`, `(kind, seq)`, `(actor_type, seq)`,
 *   `(key_id:kind, seq)` (`kind` is an expression of the action, AUDIT_KIND_SQL), or the primary
 *   key; migration 006.
 * - The other filters are checked on the rows walked, in a form no index serves (`key_id || ''`,
 *   `at + 0`), so that the planner walks the chosen index and no other. Such a walk examines at
 *   most AUDIT_SCAN_LIMIT rows: a first statement finds where those end on the index alone, and
 *   the page stops there. When they hold fewer matches than the page asks for, the page is short
 *   (even empty) and `nextAfter` is that end: the next page goes on from there.
 * - `from`/`to`: when the time range holds at most AUDIT_TIME_RANGE_LIMIT entries (counted on the
 *   `(at, seq)` index), the walk is bounded by the lowest and highest seq among them, so it starts
 *   where they start and ends where they end (times follow seqs but for writers' clocks and
 *   transactions, so no seq bound is assumed from a time alone); a wider range is checked on the
 *   rows walked.
 */

/*
 * The bounds (AUDIT_SCAN_LIMIT, AUDIT_TIME_RANGE_LIMIT, in the key service's contract). A row
 * checked is read from the table: at worst (matches spread thin over a log much larger than
 * memory) a page read each, about 6 µs on the machine of docs/performance.md, so 1,000 of them
 * are a few ms of SQLite's thread. The time range is counted on the `(at, seq)` index alone, in
 * its order: about 0.6 µs an entry.
 */

/** The two bounds; tests pass smaller ones. */
export interface AuditScanLimits {
  rows: number
  timeRange: number
}

export const AUDIT_SCAN_LIMITS: AuditScanLimits = { rows: AUDIT_SCAN_LIMIT, timeRange: AUDIT_TIME_RANGE_LIMIT }

/** One statement and its parameters. */
export interface SqlText {
  sql: string
  params: unknown[]
}

/** How an engine runs a statement: its rows. */
export type RunSql = (statement: SqlText) => Promise<unknown[]>

/** Placeholder of the nth parameter (from 1): `?` on SQLite (positional, so bound in text order), `$n` on PostgreSQL. */
export type Placeholder = (n: number) => string

class Statement {
  readonly params: unknown[] = []
  constructor(private readonly placeholder: Placeholder) {}
  bind(value: unknown): string {
    this.params.push(value)
    return this.placeholder(this.params.length)
  }
}

/**
 * An entry's kind (`read` or `change`) in SQL, the expression that migration 006 indexes, word
 * for word: a planner uses an index on an expression only for a query that says the same. Its
 * list of reads is AUDIT_READ_ACTIONS as literals; a change of that list needs a migration that
 * recreates the two indexes on it (test/storage/audit-plans.test.ts fails until there is one).
 */
export const AUDIT_KIND_SQL = `CASE WHEN action IN (${literals(AUDIT_READ_ACTIONS)}) THEN 'read' ELSE 'change' END`

/**
 * A key's entries of one kind, as one value (`key_…:change`), for the index of migration 006 that
 * walks them. One expression rather than two columns: SQLite, without statistics, would walk the
 * `(kind, seq)` index for a key id and a kind between two seqs; this term no other index serves.
 */
export const AUDIT_KEY_KIND_SQL = `key_id || ':' || (${AUDIT_KIND_SQL})`

function literals(actions: readonly string[]): string {
  return actions
    .map((a) => {
      if (!/^[a-z_.]+$/.test(a)) throw new Error(`audit action ${JSON.stringify(a)} cannot be written as a literal`)
      return `'${a}'`
    })
    .join(', ')
}

type AuditFilter = 'keyId' | 'action' | 'actorType' | 'actorId' | 'kind' | 'from' | 'to'

const FILTERS: readonly AuditFilter[] = ['keyId', 'action', 'actorType', 'actorId', 'kind', 'from', 'to']

/** What each filter compares, and with which value of the query. */
const FILTER_SQL: Record<AuditFilter, { column: string; op: string; value: (q: AuditQuery) => unknown; text: boolean }> = {
  keyId: { column: 'key_id', op: '=', value: (q) => q.keyId, text: true },
  action: { column: 'action', op: '=', value: (q) => q.action, text: true },
  actorType: { column: 'actor_type', op: '=', value: (q) => q.actorType, text: true },
  actorId: { column: 'actor_id', op: '=', value: (q) => q.actorId, text: true },
  kind: { column: `(${AUDIT_KIND_SQL})`, op: '=', value: (q) => q.kind, text: true },
  from: { column: 'at', op: '>=', value: (q) => q.from, text: false },
  to: { column: 'at', op: '<', value: (q) => q.to, text: false },
}

/**
 * A filter's WHERE term. `walked`: as its index serves it. Otherwise as a check no index serves
 * (`|| ''` on text, `+ 0` on a number; the same value, NULL staying NULL, on both engines).
 */
function term(q: AuditQuery, filter: AuditFilter, s: Statement, walked: boolean): string {
  const { column, op, value, text } = FILTER_SQL[filter]
  const operand = walked ? column : text ? `${column} || ''` : `${column} + 0`
  return `${operand} ${op} ${s.bind(value(q))}`
}

const given = (q: AuditQuery) => FILTERS.filter((f) => FILTER_SQL[f].value(q) !== undefined)

/**
 * The filters whose index the page walks, most selective first (a key's entries, an actor's, an
 * action's, a kind's, an actor type's); none: the primary key. A key's entries of one kind have an
 * index of their own: the console's view of a key shows its changes, which the reads of a
 * much-viewed key would otherwise bury.
 */
function walkedFilters(q: AuditQuery): AuditFilter[] {
  if (q.keyId !== undefined && q.kind !== undefined) return ['keyId', 'kind']
  const first = (['keyId', 'actorId', 'action', 'kind', 'actorType'] as const).find((f) => q[f] !== undefined)
  return first === undefined ? [] : [first]
}

/** The seqs of the entries of a time range: the lowest and the highest. */
interface SeqRange {
  lo: number
  hi: number
}

/** Seq bounds of the walk, both exclusive: the cursor, the time range's seqs, the end of a bounded walk. */
interface SeqBounds {
  above: number
  below?: number
}

function seqBounds(q: AuditQuery, range: SeqRange | undefined): SeqBounds {
  const above = range === undefined ? 0 : range.lo - 1
  const below = range === undefined ? undefined : range.hi + 1
  if (q.order === 'desc') return { above, below: q.after === undefined || (below !== undefined && below < q.after) ? below : q.after }
  return { above: Math.max(q.after ?? 0, above), below }
}

/** The walk's WHERE: the walked filters as their index serves them, and the seq bounds. */
function walkWhere(q: AuditQuery, s: Statement, bounds: SeqBounds): string {
  const walked = walkedFilters(q)
  const where = walked.length === 2 ? [`${AUDIT_KEY_KIND_SQL} = ${s.bind(`${q.keyId}:${q.kind}`)}`] : walked.map((f) => term(q, f, s, true))
  where.push(`seq > ${s.bind(bounds.above)}`)
  if (bounds.below !== undefined) where.push(`seq < ${s.bind(bounds.below)}`)
  return where.join(' AND ')
}

const direction = (q: AuditQuery) => (q.order === 'desc' ? 'DESC' : 'ASC')

/**
 * The time range's entries on the `(at, seq)` index, at most `limit` + 1 of them: how many (`n`),
 * their lowest and highest seq (`lo`, `hi`). Undefined without `from` and `to`.
 */
function auditTimeRangeSql(q: AuditQuery, placeholder: Placeholder, limit = AUDIT_TIME_RANGE_LIMIT): SqlText | undefined {
  const filters = given(q).filter((f) => f === 'from' || f === 'to')
  if (filters.length === 0) return undefined
  const s = new Statement(placeholder)
  const where = filters.map((f) => term(q, f, s, true)).join(' AND ')
  const sql = `SELECT COUNT(*) AS n, MIN(seq) AS lo, MAX(seq) AS hi
    FROM (SELECT seq FROM audit_log WHERE ${where} ORDER BY at LIMIT ${s.bind(limit + 1)}) AS r`
  return { sql, params: s.params }
}

/**
 * The first `scanLimit` rows of the walk, on its index alone: how many (`n`) and the seq of the
 * last (`last`), where a page that checks filters on the rows walked stops.
 */
function auditWalkEndSql(q: AuditQuery, placeholder: Placeholder, bounds: SeqBounds, scanLimit = AUDIT_SCAN_LIMIT): SqlText {
  const s = new Statement(placeholder)
  const where = walkWhere(q, s, bounds)
  const sql = `SELECT COUNT(*) AS n, ${q.order === 'desc' ? 'MIN' : 'MAX'}(seq) AS last
    FROM (SELECT seq FROM audit_log WHERE ${where} ORDER BY seq ${direction(q)} LIMIT ${s.bind(scanLimit)}) AS w`
  return { sql, params: s.params }
}

/** The page: the walk within `bounds`, the other filters checked on its rows, one row more than the page. */
function auditPageSql(q: AuditQuery, placeholder: Placeholder, bounds: SeqBounds): SqlText {
  const s = new Statement(placeholder)
  // Placeholders are positional on SQLite: each part is bound in the order it stands in the text.
  const where = [walkWhere(q, s, bounds)]
  const walked = walkedFilters(q)
  for (const f of given(q)) if (!walked.includes(f)) where.push(term(q, f, s, false))
  const sql = `SELECT * FROM audit_log WHERE ${where.join(' AND ')} ORDER BY seq ${direction(q)} LIMIT ${s.bind(q.limit + 1)}`
  return { sql, params: s.params }
}

/** Whether filters are checked on the rows walked (rather than all served by the index walked). */
const checksRows = (q: AuditQuery) => given(q).length > walkedFilters(q).length

/**
 * The names of the admin tokens among a page's actors, read when the page is: one statement on
 * the primary key of admin_tokens for at most a page of ids. Read rather than written into each
 * entry: a token's name never changes and a token is never deleted (revoked only), so every entry,
 * those written before names were shown included, gets its name, and the page's own SQL (its
 * walk of one index) stays as it is.
 */
async function withTokenNames(entries: AuditEntry[], run: RunSql, placeholder: Placeholder): Promise<AuditEntry[]> {
  const ids = [...new Set(entries.filter((e) => e.actor.type === 'admin_token').map((e) => e.actor.id))]
  if (ids.length === 0) return entries
  const s = new Statement(placeholder)
  const sql = `SELECT id, name FROM admin_tokens WHERE id IN (${ids.map((id) => s.bind(id)).join(', ')})`
  const names = new Map(((await run({ sql, params: s.params })) as Array<{ id: string; name: string }>).map((r) => [r.id, r.name]))
  for (const entry of entries) {
    const name = entry.actor.type === 'admin_token' ? names.get(entry.actor.id) : undefined
    if (name !== undefined) entry.actor = { ...entry.actor, name }
  }
  return entries
}

/** A page of the log, on either engine: at most three statements, each examining a bounded number of rows. */
export async function listAuditPage(
  q: AuditQuery,
  run: RunSql,
  placeholder: Placeholder,
  limits: AuditScanLimits = AUDIT_SCAN_LIMITS,
): Promise<AuditPage> {
  const empty: AuditPage = { entries: [], nextAfter: null }
  const scanLimit = limits.rows
  let range: SeqRange | undefined
  const timeRange = auditTimeRangeSql(q, placeholder, limits.timeRange)
  if (timeRange !== undefined) {
    const [found] = (await run(timeRange)) as Array<{ n: number; lo: number | null; hi: number | null }>
    if (found === undefined || Number(found.n) === 0) return empty
    if (Number(found.n) <= limits.timeRange) range = { lo: Number(found.lo), hi: Number(found.hi) }
  }
  let bounds = seqBounds(q, range)
  let stop: number | undefined
  if (checksRows(q)) {
    const [end] = (await run(auditWalkEndSql(q, placeholder, bounds, scanLimit))) as Array<{ n: number; last: number | null }>
    if (end === undefined || Number(end.n) === 0) return empty
    const last = Number(end.last)
    if (Number(end.n) >= scanLimit) stop = last
    bounds = q.order === 'desc' ? { above: last - 1, below: bounds.below } : { above: bounds.above, below: last + 1 }
  }
  const rows = (await run(auditPageSql(q, placeholder, bounds))) as AuditRow[]
  const entries = await withTokenNames(rows.slice(0, q.limit).map(toAuditEntry), run, placeholder)
  if (rows.length > q.limit) return { entries, nextAfter: entries[entries.length - 1]!.seq }
  // Short of a page: the walk ended, at the end of the log (or of the range), or where it was bounded.
  return { entries, nextAfter: stop ?? null }
}
