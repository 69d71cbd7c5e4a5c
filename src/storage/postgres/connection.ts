import { createHash } from 'node:crypto'
import pg from 'pg'
import { type Int64, toInt64 } from '../../shared/int64.js'
import { type StorageFault, StorageFaultError, StorageUnavailableError } from '../../shared/outages.js'

/** Client-side limits: every call either answers or fails fast, so a dead server means 503s, not hangs. */
export const TIMEOUTS = {
  /** Opening a connection, and waiting for a free pooled one. */
  connectMs: 2_000,
  /** Server-side cap on one statement (sent as a startup parameter). */
  statementMs: 5_000,
  /** Client-side cap on one query, for a server or network that stops answering altogether. */
  queryMs: 7_000,
  /** A transaction left open by a crashed caller must not hold locks for long. */
  idleInTransactionMs: 10_000,
  pingMs: 1_000,
} as const

const INT8_OID = 20

/** int8 text -> number when it is a safe integer, bigint otherwise; nothing is ever rounded. */
export function parseInt8(text: string): Int64 {
  // Up to 15 digits (and a sign) is below 2^53 in magnitude, so Number is exact: the common case.
  if (text.length <= 15) return Number(text)
  return toInt64(BigInt(text))
}

/** An Int64 as a query parameter: bigint goes as its exact decimal text. */
export const int8Param = (value: Int64): string | number => (typeof value === 'bigint' ? value.toString() : value)

/** Per-connection parsers rather than pg.types.setTypeParser, which would change every pg user in the process. */
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary' ? parseInt8 : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

export function assertSchemaName(schema: string): void {
  // Interpolated into DDL and a startup option: only plain unquoted identifiers are accepted.
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid PostgreSQL schema name: ${JSON.stringify(schema)}`)
}

export function clientConfig(
  databaseUrl: string,
  schema: string | undefined,
  connectTimeoutMs: number = TIMEOUTS.connectMs,
): pg.ClientConfig {
  return {
    connectionString: databaseUrl,
    types,
    connectionTimeoutMillis: connectTimeoutMs,
    statement_timeout: TIMEOUTS.statementMs,
    query_timeout: TIMEOUTS.queryMs,
    idle_in_transaction_session_timeout: TIMEOUTS.idleInTransactionMs,
    // Detects a silently dropped connection (e.g. a failed-over server) on idle and LISTEN clients.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    application_name: 'animal-store',
    // A startup parameter applies before the first query on every connection, with no race.
    ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
  }
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
])

/**
 * SQLSTATEs meaning "the server cannot serve this now" rather than "this request is wrong":
 * class 08 (connection exception), 53 (insufficient resources: too many connections, disk
 * full, out of memory), 57P01-57P05 (shutdown, crash, starting up, idle timeouts), 57014
 * (statement timeout), and the server refusing the service's own connection: class 28 (its
 * login refused: 28000, a password that no longer matches: 28P01) and 3D000 (its database
 * missing). No request causes or fixes those; the service is down until an operator (or a
 * failover) does, as /readyz says, so they map to 503 with Retry-After like any other outage.
 */
function isUnavailableSqlState(code: string): boolean {
  return (
    code.startsWith('08') ||
    code.startsWith('53') ||
    code.startsWith('57P') ||
    code === '57014' ||
    code.startsWith('28') ||
    code === '3D000'
  )
}

/** pg and pg-pool report client-side connection trouble with plain Errors and these messages. */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated/,
  /is not queryable$/,
  /^timeout exceeded when trying to connect$/,
  /^timeout expired$/, // a bare Client's connectionTimeoutMillis
  /^Query read timeout$/,
  /^Cannot use a pool after calling end on the pool$/,
]

export function isUnavailable(error: unknown, depth = 0): boolean {
  if (depth > 4 || typeof error !== 'object' || error === null) return false
  const e = error as { code?: unknown; message?: unknown; errors?: unknown; cause?: unknown }
  if (typeof e.code === 'string' && (NETWORK_CODES.has(e.code) || (/^[0-9A-Z]{5}$/.test(e.code) && isUnavailableSqlState(e.code)))) {
    return true
  }
  if (typeof e.message === 'string' && UNAVAILABLE_MESSAGES.some((re) => re.test(e.message as string))) return true
  // Node's happy-eyeballs connect reports an AggregateError of per-address failures.
  if (Array.isArray(e.errors) && e.errors.some((inner) => isUnavailable(inner, depth + 1))) return true
  return isUnavailable(e.cause, depth + 1)
}

/**
 * SQLSTATEs of a server that cannot write (or read) what it holds, whoever asks: 53100 disk_full,
 * class 58 (system errors: I/O), XX001/XX002 (data or index corrupted), 25006 (a read-only
 * transaction: a standby, or default_transaction_read_only). Class 53 is unavailable anyway;
 * the others would be a 500 without this.
 */
export function postgresFault(code: string): StorageFault | undefined {
  if (code === '53100') return 'disk_full'
  if (code.startsWith('58')) return 'io_error'
  if (code === 'XX001' || code === 'XX002') return 'corrupt'
  if (code === '25006') return 'read_only'
  return undefined
}

export function toStorageError(error: unknown): unknown {
  if (error instanceof StorageUnavailableError) return error
  const code = codeIn(error)?.code
  const fault = code !== undefined && /^[0-9A-Z]{5}$/.test(code) ? postgresFault(code) : undefined
  if (fault !== undefined) return new StorageFaultError(fault, error)
  return isUnavailable(error) ? new StorageUnavailableError(error) : error
}

/** A query with its own client-side timeout: pg reads query_timeout from the config, though its type does not declare it. */
const timedQuery = (text: string, values: unknown[], timeoutMs: number): pg.QueryConfig =>
  ({ text, values, query_timeout: timeoutMs }) as pg.QueryConfig
const rowsOf = (result: pg.QueryResult): unknown[] => result.rows
const rethrowAsStorageError = (error: unknown): never => {
  throw toStorageError(error)
}

/**
 * Every transaction begins holding a lock on `events` (ROW EXCLUSIVE: what an INSERT takes, so it
 * waits for nothing but DDL), in the same round trip as BEGIN and before anything gives it an xid:
 * the event log's listing tells a transaction that may write an event from one that will not by
 * that lock (event-repository.ts, WRITERS_HORIZON). Any of them may call writeChange.
 */
const BEGIN_WRITER = 'BEGIN; LOCK TABLE events IN ROW EXCLUSIVE MODE'

/**
 * A statement's text and the name it is prepared under on each connection: derived from the text,
 * so one name always means one text, on any connection, whoever prepared it.
 */
interface NamedStatement {
  readonly name: string
  readonly text: string
}

/** Names of the texts queryNamed has met, at most this many (a text beyond them goes unnamed). */
const NAMED_KEPT = 64

/**
 * SQLSTATEs of a prepared statement that is not on the connection the client thinks it is (26000:
 * does not exist) or that is there already (42P05): a pooler in transaction mode (PgBouncer before
 * 1.21, or without max_prepared_statements) gives each transaction whichever server connection is
 * free. Either fails before the statement runs.
 */
const LOST_STATEMENT = new Set(['26000', '42P05'])

/** The pool plus the two ways the repositories use it; every failure leaves here already classified. */
export class Db {
  private readonly names = new Map<string, NamedStatement>()
  /** Set once a pooler has lost a prepared statement: from then on every statement goes unnamed. */
  private unnamedOnly = false

  constructor(readonly pool: pg.Pool) {}

  /**
   * query, for a statement outside a transaction that the request path runs again and again, with
   * no choice of plan that a parameter's value should make (a generic plan is fine): prepared once
   * per connection, so PostgreSQL parses and plans it once, not at every call (the create's
   * statement with its event: 334 against 168 µs of the server's time a call, measured with
   * pgbench). Through a pooler that cannot keep prepared statements, the first statement it loses
   * is sent again unnamed, and every later one goes unnamed.
   */
  queryNamed<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<R[]> {
    const statement = this.unnamedOnly ? undefined : this.namedStatement(text)
    if (statement === undefined) return this.query<R>(text, values)
    let result: Promise<pg.QueryResult<R>>
    try {
      result = this.pool.query<R>({ name: statement.name, text, values })
    } catch (error) {
      return Promise.reject(toStorageError(error))
    }
    return result.then(rowsOf, (error: unknown) => {
      const code = codeIn(error)?.code
      if (code === undefined || !LOST_STATEMENT.has(code)) throw toStorageError(error)
      if (!this.unnamedOnly) {
        this.unnamedOnly = true
        process.emitWarning(
          `PostgreSQL lost a prepared statement (${code}): a pooler in transaction mode; statements go unnamed from now on`,
          {
            code: 'ANIMAL_STORE_UNNAMED_STATEMENTS',
          },
        )
      }
      return this.query<R>(text, values)
    }) as Promise<R[]>
  }

  private namedStatement(text: string): NamedStatement | undefined {
    let statement = this.names.get(text)
    if (statement === undefined && this.names.size < NAMED_KEPT) {
      statement = { name: `as_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`, text }
      this.names.set(text, statement)
    }
    return statement
  }

  query<R extends pg.QueryResultRow>(text: string, values: unknown[] = [], timeoutMs?: number): Promise<R[]> {
    // Text and values as two arguments, not one config object: pg copies a config object through
    // its property descriptors on every query (utils.cloneQueryConfig: 1.8% of a CPU profile of
    // the list route). One `then` rather than an async function: one promise fewer per query.
    let result: Promise<pg.QueryResult<R>>
    try {
      result = timeoutMs === undefined ? this.pool.query<R>(text, values) : this.pool.query<R>(timedQuery(text, values, timeoutMs))
    } catch (error) {
      return Promise.reject(toStorageError(error))
    }
    return result.then(rowsOf, rethrowAsStorageError) as Promise<R[]>
  }

  /** Runs `work` in BEGIN/COMMIT on one connection; rolls back on any failure. */
  async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    let client: pg.PoolClient
    try {
      client = await this.pool.connect()
    } catch (error) {
      throw toStorageError(error)
    }
    let broken: Error | undefined
    // pg-pool listens for 'error' only on idle clients; a checked-out one that loses its socket
    // between two queries would emit it unhandled and crash the process.
    const onError = (error: Error) => (broken = error)
    client.on('error', onError)
    try {
      await client.query(BEGIN_WRITER)
      const result = await work(client)
      await client.query('COMMIT')
      return result
    } catch (error) {
      const asError = error instanceof Error ? error : new Error(String(error))
      // A dead or stuck connection is discarded, not rolled back: the server aborts the
      // transaction when the socket closes, and a ROLLBACK would only queue behind the hang.
      if (isUnavailable(error)) broken = asError
      else await client.query('ROLLBACK').catch(() => (broken = asError))
      throw toStorageError(error)
    } finally {
      client.removeListener('error', onError)
      client.release(broken)
    }
  }
}

/** host:port a connection string points at, as pg reads it (a `host` query parameter wins; defaults localhost:5432). */
export function serverAddress(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl)
    const host = url.searchParams.get('host') ?? (url.hostname === '' ? 'localhost' : decodeURIComponent(url.hostname))
    return `${host}:${url.searchParams.get('port') ?? (url.port || '5432')}`
  } catch {
    return 'the server'
  }
}

/** The first error in a chain (cause, AggregateError members) with a string code. */
function codeIn(error: unknown, depth = 0): { code: string; message: string } | undefined {
  if (depth > 4 || typeof error !== 'object' || error === null) return undefined
  const e = error as { code?: unknown; message?: unknown; errors?: unknown; cause?: unknown }
  if (typeof e.code === 'string') return { code: e.code, message: String(e.message) }
  for (const inner of Array.isArray(e.errors) ? e.errors : []) {
    const found = codeIn(inner, depth + 1)
    if (found) return found
  }
  return codeIn(e.cause, depth + 1)
}

/** The message of the error itself, beneath our own StorageUnavailableError wrapper. */
function messageOf(error: unknown): string {
  const inner = error instanceof StorageUnavailableError ? error.cause : error
  return inner instanceof Error ? inner.message : String(inner)
}

/** One line for an operator: why PostgreSQL at `databaseUrl` could not be used at start (never the password). */
export function describeConnectFailure(error: unknown, databaseUrl: string): string {
  const at = `PostgreSQL at ${serverAddress(databaseUrl)}`
  const found = codeIn(error)
  const message = messageOf(error)
  switch (found?.code) {
    case 'ECONNREFUSED':
      return `${at} refused the connection (nothing listens there)`
    case 'ETIMEDOUT':
      return `${at} did not answer: the connection timed out (ETIMEDOUT)`
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${at}: the host name cannot be resolved (${found.code})`
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `${at} is unreachable (${found.code})`
    case 'ECONNRESET':
      return `${at} closed the connection (ECONNRESET)`
  }
  if (found !== undefined && /^[0-9A-Z]{5}$/.test(found.code)) return `${at}: ${message} (SQLSTATE ${found.code})`
  // pg's own connect timeout is a plain Error without a code.
  if (/^timeout expired$|connection timeout/i.test(message))
    return `${at} did not answer within ${TIMEOUTS.connectMs / 1000} s: the connection timed out`
  return `${at}: ${message}`
}
