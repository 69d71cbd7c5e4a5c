/**
 * Throwaway PgBouncer and HAProxy in front of throwaway (or test) servers, for test/system/deploy/: each
 * runs the configuration shipped in deploy/ with only the site's addresses, ports and paths
 * replaced, in a temp dir of its own, on free 127.0.0.1 ports; it is stopped and removed after the
 * test, on the test process's exit, or by the watchdog of test/system/helpers/faults.ts. Debian's own
 * pgbouncer/haproxy services, ports and /etc files are never used.
 *
 *   startThrowawayPgBouncer(t, postgres, { default_pool_size: '4' })
 *       pgbouncer (as `postgres` when root) with deploy/pgbouncer.ini's [pgbouncer] section, trust
 *       auth, database `test` -> the throwaway PostgreSQL; `url` is postgres://postgres@…/test,
 *       `admin(sql)` runs a console command (SHOW POOLS) and returns its rows.
 *   startThrowawayHaproxy(t, servers)
 *       haproxy -f deploy/haproxy.cfg with AS_* environment naming the frontend, the servers and a
 *       stats socket in its dir; `serverStates()` reads `show stat`.
 */
import { chownSync, readFileSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import pg from 'pg'
import { pgAnswers, postgresUser, startThrowaway, type ThrowawayServer } from './faults.js'
import { ROOT } from './process.js'

// ---------------------------------------------------------------------------------------------
// PgBouncer.

/** The settings PgBouncer gets from the test rather than from deploy/pgbouncer.ini. */
const SITE_SETTINGS = ['listen_addr', 'listen_port', 'auth_type', 'auth_file', 'unix_socket_dir', 'logfile', 'pidfile', 'admin_users']

/** `key = value` pairs of one [section] of an ini file (comments and blank lines dropped). */
export function iniSection(text: string, section: string): Map<string, string> {
  const settings = new Map<string, string>()
  let current = ''
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (line === '' || line.startsWith(';') || line.startsWith('#')) continue
    const header = /^\[(.+)\]$/.exec(line)
    if (header) current = header[1]!
    else if (current === section) {
      const eq = line.indexOf('=')
      if (eq > 0) settings.set(line.slice(0, eq).trim(), line.slice(eq + 1).trim())
    }
  }
  return settings
}

export interface ThrowawayPgBouncer extends ThrowawayServer {
  /** The [pgbouncer] settings it runs with. */
  readonly settings: ReadonlyMap<string, string>
  /** One admin console command (SHOW POOLS, SHOW STATS…), its rows. */
  admin<R extends pg.QueryResultRow = Record<string, unknown>>(command: string): Promise<R[]>
}

export async function startThrowawayPgBouncer(
  t: TestContext,
  postgres: ThrowawayServer,
  overrides: Record<string, string> = {},
): Promise<ThrowawayPgBouncer> {
  const user = postgresUser()
  const shipped = iniSection(readFileSync(join(ROOT, 'deploy/pgbouncer.ini'), 'utf8'), 'pgbouncer')
  let settings = new Map<string, string>()
  const server = await startThrowaway(
    t,
    'throwaway pgbouncer',
    async (dir, port) => {
      if (user) chownSync(dir, user.uid, user.gid)
      const userlist = join(dir, 'userlist.txt')
      writeFileSync(userlist, '"postgres" ""\n')
      settings = new Map(shipped)
      for (const name of SITE_SETTINGS) settings.delete(name)
      for (const [name, value] of Object.entries({
        listen_addr: '127.0.0.1',
        listen_port: String(port),
        unix_socket_dir: '',
        auth_type: 'trust',
        auth_file: userlist,
        admin_users: 'postgres',
        ...overrides,
      }))
        settings.set(name, value)
      const ini = [
        '[databases]',
        `test = host=127.0.0.1 port=${postgres.port} dbname=test user=postgres`,
        '',
        '[pgbouncer]',
        ...[...settings].map(([name, value]) => `${name} = ${value}`),
        '',
      ].join('\n')
      const file = join(dir, 'pgbouncer.ini')
      writeFileSync(file, ini)
      if (user) for (const path of [file, userlist]) chownSync(path, user.uid, user.gid)
      const url = `postgres://postgres@127.0.0.1:${port}/test`
      return {
        url,
        launch: { file: 'pgbouncer', args: [file], stopSignal: 'SIGTERM', user, ready: () => pgAnswers(url) },
      }
    },
    'animal-store-pgbouncer-',
  )
  const adminUrl = server.url.replace(/\/test$/, '/pgbouncer')
  return Object.assign(server, {
    settings,
    async admin<R extends pg.QueryResultRow>(command: string): Promise<R[]> {
      const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5_000 })
      client.on('error', () => {})
      await client.connect()
      try {
        return (await client.query<R>(command)).rows
      } finally {
        await client.end().catch(() => {})
      }
    },
  })
}

// ---------------------------------------------------------------------------------------------
// HAProxy.

export interface HaproxyServerState {
  name: string
  /** `show stat`'s status: UP, DOWN, UP 1/2 (going down), DOWN 1/2 (coming up), MAINT... */
  status: string
  /** Requests (sessions) it has been sent so far. */
  sessions: number
}

export interface ThrowawayHaproxy extends ThrowawayServer {
  /** Each backend server's state as HAProxy's stats socket tells it right now. */
  serverStates(): Promise<HaproxyServerState[]>
  /** One command on the stats socket, its raw answer. */
  command(line: string): Promise<string>
}

function socketCommand(path: string, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(path)
    let answer = ''
    socket.setTimeout(5_000, () => socket.destroy(new Error(`no answer to ${line} within 5 s`)))
    socket.once('connect', () => socket.end(`${line}\n`))
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')))
    socket.once('end', () => resolve(answer))
    socket.once('error', reject)
  })
}

/**
 * haproxy running deploy/haproxy.cfg unchanged, its frontend on a free 127.0.0.1 port (with
 * `everyAddress`, on a free port of every IPv6 and IPv4 address, and still reached at 127.0.0.1),
 * balancing over `servers` (one to nine host:port).
 */
export async function startThrowawayHaproxy(
  t: TestContext,
  servers: string[],
  { everyAddress = false }: { everyAddress?: boolean } = {},
): Promise<ThrowawayHaproxy> {
  let socketPath = ''
  const server = await startThrowaway(
    t,
    'throwaway haproxy',
    async (dir, port) => {
      socketPath = join(dir, 'admin.sock')
      const env = {
        AS_BIND: everyAddress ? `:::${port}` : `127.0.0.1:${port}`,
        // AS_SERVER_1 … AS_SERVER_<n>: the config lists as many as are set (one to nine).
        ...Object.fromEntries(servers.map((address, i) => [`AS_SERVER_${i + 1}`, address])),
        AS_STATS_SOCKET: socketPath,
      }
      const config = join(ROOT, 'deploy/haproxy.cfg')
      return {
        url: `http://127.0.0.1:${port}`,
        launch: {
          file: 'haproxy',
          // -db: foreground, no daemon.
          args: ['-db', '-f', config],
          env,
          stopSignal: 'SIGUSR1', // soft stop: finish what is in flight
          ready: async () => {
            try {
              return (await socketCommand(socketPath, 'show info')).includes('Name: HAProxy')
            } catch {
              return false
            }
          },
        },
      }
    },
    'animal-store-haproxy-',
  )
  return Object.assign(server, {
    command: (line: string) => socketCommand(socketPath, line),
    async serverStates(): Promise<HaproxyServerState[]> {
      const csv = await socketCommand(socketPath, 'show stat')
      const [header, ...rows] = csv.replace(/^# /, '').trim().split('\n')
      const columns = header!.split(',')
      const col = (row: string[], name: string) => row[columns.indexOf(name)] ?? ''
      return rows
        .map((line) => line.split(','))
        .filter((row) => col(row, 'svname') !== 'FRONTEND' && col(row, 'svname') !== 'BACKEND' && col(row, 'pxname') === 'animal_store')
        .map((row) => ({
          name: col(row, 'svname'),
          status: col(row, 'status'),
          sessions: Number(col(row, 'stot')),
        }))
    },
  })
}
