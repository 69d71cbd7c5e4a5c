/**
 * Every way a start can fail ends the process within seconds: exit status 2 and one line on
 * stderr naming the variable, its value and the cause, never a stack trace and never a hang
 * (`DATABASE_URL=/proc/nope/x.db` used to spin at 100% CPU in Node 20's recursive mkdir).
 *
 * Read-only files and unwritable directories: as root, permission bits stop nothing, so these
 * cases use the immutable attribute (`chattr +i`, which stops root too) and skip loudly where the
 * filesystem does not support it; as any other user, plain chmod.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import { type EnvOverrides, freePort, runCli, runServerToExit, useTempDir } from '../helpers/process.js'

/** Generous: the causes are all found in well under a second, except a PostgreSQL timeout (2 s). */
const EXIT_WITHIN_MS = 20_000
const IS_ROOT = process.getuid?.() === 0

async function failedStart(dir: string, env: EnvOverrides) {
  const started = performance.now()
  const result = await runServerToExit({ dir, env }, EXIT_WITHIN_MS)
  return { ...result, ms: performance.now() - started }
}

/** The one-line contract of a failed start. */
function assertOneLine(
  result: { code: number | null; signal: string | null; stderr: string; stdout: string },
  setting: string,
  cause: RegExp,
): string {
  assert.equal(result.code, 2, `exit status 2 (got ${result.code}/${result.signal}); stderr: ${result.stderr}`)
  const lines = result.stderr.split('\n').filter((l) => l !== '')
  assert.equal(lines.length, 1, `exactly one line on stderr:\n${result.stderr}`)
  const line = lines[0]!
  assert.ok(line.startsWith(`animal-store: cannot start: ${setting}`), `names ${setting}: ${line}`)
  assert.match(line, cause)
  assert.doesNotMatch(result.stderr + result.stdout, /\n\s+at |Error:/, 'no stack trace')
  return line
}

/**
 * Returns `lock(path, mode)`: makes `path` unwritable for the server, or returns false (with a
 * loud skip) where that is impossible (root on a filesystem without the immutable attribute).
 * Call it before useTempDir: `after` hooks run in registration order, so the locks are undone
 * before the temp dir is removed.
 */
function locker(t: TestContext): (path: string, mode: number) => boolean {
  const undo: Array<() => void> = []
  t.after(() => {
    for (const u of undo.reverse()) u()
  })
  return (path, mode) => {
    if (!IS_ROOT) {
      chmodSync(path, mode)
      undo.push(() => chmodSync(path, 0o755))
      return true
    }
    try {
      execFileSync('chattr', ['+i', path], { stdio: 'ignore' })
    } catch {
      process.stderr.write(`\n!!! SKIPPED: running as root and chattr +i failed on ${path} — "${t.name}" did not run !!!\n\n`)
      t.skip('cannot make a file unwritable for root here')
      return false
    }
    undo.push(() => execFileSync('chattr', ['-i', path], { stdio: 'ignore' }))
    return true
  }
}

test('DATABASE_URL on a kernel filesystem (/proc/nope/x.db): exit 2 at once instead of spinning', { timeout: 60_000 }, async (t) => {
  const dir = await useTempDir(t)
  for (const [value, cause] of [
    ['/proc/nope/x.db', /cannot create directory \/proc\/nope: \/proc is on the proc kernel filesystem/],
    ['/proc/x.db', /\/proc is on the proc kernel filesystem, not a place for a database/],
  ] as const) {
    const result = await failedStart(dir, { DATABASE_URL: value })
    assertOneLine(result, `DATABASE_URL=${value}:`, cause)
  }
  // The CLI opens the same database the same way.
  const cli = await runCli(['keys', 'list'], { db: '/proc/nope/x.db', timeoutMs: EXIT_WITHIN_MS })
  assert.equal(cli.code, 2, cli.stderr)
  assert.deepEqual(cli.stderr.trim().split('\n'), [
    'animal-store: DATABASE_URL=/proc/nope/x.db: cannot create directory /proc/nope: /proc is on the proc kernel filesystem, not a place for files',
  ])
})

test('DATABASE_URL through a regular file, at a directory, or at a file that is not a database', { timeout: 60_000 }, async (t) => {
  const dir = await useTempDir(t)
  const notes = join(dir, 'notes.txt')
  writeFileSync(notes, 'a regular file\n')
  const garbage = join(dir, 'garbage.db')
  writeFileSync(garbage, 'this is not a SQLite database, whatever its name says '.repeat(20))
  const cases: Array<[string, RegExp]> = [
    [join(notes, 'x.db'), new RegExp(`goes through ${notes}, which is a regular file`)],
    [join(notes, 'sub', 'x.db'), new RegExp(`goes through ${notes}, which is a regular file`)],
    [dir, /is a directory, not a database file/],
    [garbage, /is not a SQLite database \(SQLITE_NOTADB\)/],
  ]
  for (const [value, cause] of cases) {
    const result = await failedStart(dir, { DATABASE_URL: value })
    assertOneLine(result, `DATABASE_URL=${value}:`, cause)
  }
})

test('LOG_FILE that cannot be a file: the same one line (pino would crash with a stack, or spin)', { timeout: 60_000 }, async (t) => {
  const dir = await useTempDir(t)
  const notes = join(dir, 'notes.txt')
  writeFileSync(notes, 'a regular file\n')
  const cases: Array<[string, RegExp]> = [
    ['/proc/nope/server.log', /cannot create directory \/proc\/nope: \/proc is on the proc kernel filesystem/],
    [join(notes, 'server.log'), new RegExp(`goes through ${notes}, which is a regular file`)],
    [dir, /is a directory, not a log file/],
  ]
  for (const [value, cause] of cases) {
    const result = await failedStart(dir, { LOG_FILE: value })
    assertOneLine(result, `LOG_FILE=${value}:`, cause)
  }
})

test('DATABASE_URL: a read-only database file', { timeout: 60_000 }, async (t) => {
  const lock = locker(t)
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const created = await runCli(['keys', 'list'], { db }) // creates and migrates the database
  assert.equal(created.code, 0, created.stderr)
  if (!lock(db, 0o444)) return
  const result = await failedStart(dir, { DATABASE_URL: db })
  assertOneLine(result, `DATABASE_URL=${db}:`, new RegExp(`${db} is read-only: .*\\((EPERM|EACCES|EROFS)\\)`))
})

test('DATABASE_URL in an unwritable directory: a new file, a missing subdirectory, an existing database', {
  timeout: 60_000,
}, async (t) => {
  const lock = locker(t)
  const dir = await useTempDir(t)
  const locked = join(dir, 'locked')
  mkdirSync(locked)
  const existing = join(locked, 'old.db')
  const created = await runCli(['keys', 'list'], { db: existing })
  assert.equal(created.code, 0, created.stderr)
  if (!lock(locked, 0o555)) return
  const cases: Array<[string, RegExp]> = [
    [join(locked, 'new.db'), /new\.db cannot be opened: the file cannot be created: .*\((EPERM|EACCES)\)/],
    [join(locked, 'sub', 'x.db'), new RegExp(`cannot create directory ${join(locked, 'sub')}: .*\\((EPERM|EACCES)\\)`)],
    // WAL mode needs -wal and -shm files next to the database, also to read it.
    [existing, new RegExp(`cannot create files in ${locked} \\(WAL mode .*\\((EPERM|EACCES)\\)`)],
  ]
  for (const [value, cause] of cases) {
    const result = await failedStart(dir, { DATABASE_URL: value })
    assertOneLine(result, `DATABASE_URL=${value}:`, cause)
  }
})

test('DATABASE_URL: PostgreSQL refusing, or accepting and never answering (timed out); never the password', {
  timeout: 60_000,
}, async (t) => {
  const dir = await useTempDir(t)
  const refusedPort = await freePort()
  const refusedUrl = `postgres://app:pa55word@127.0.0.1:${refusedPort}/store`
  const refused = await failedStart(dir, { DATABASE_URL: refusedUrl })
  assertOneLine(
    refused,
    `DATABASE_URL=postgres://app:***@127.0.0.1:${refusedPort}/store:`,
    new RegExp(`PostgreSQL at 127.0.0.1:${refusedPort} refused the connection`),
  )
  assert.doesNotMatch(refused.stderr, /pa55word/)

  // A server that accepts connections and says nothing (a hung host, a wrong port on a firewall).
  const sockets = new Set<net.Socket>()
  const silent = net.createServer((socket) => {
    sockets.add(socket)
    socket.on('error', () => {})
  })
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    for (const socket of sockets) socket.destroy()
    silent.close()
  })
  const silentPort = (silent.address() as net.AddressInfo).port
  const timedOut = await failedStart(dir, { DATABASE_URL: `postgres://app:pa55word@127.0.0.1:${silentPort}/store` })
  assertOneLine(
    timedOut,
    'DATABASE_URL=postgres://app:***@',
    new RegExp(`PostgreSQL at 127.0.0.1:${silentPort} did not answer within 2 s: the connection timed out`),
  )
  assert.doesNotMatch(timedOut.stderr, /pa55word/)
  assert.ok(sockets.size >= 1, 'the server did try to connect')
})

test('PORT already in use: names PORT and HOST', { timeout: 30_000 }, async (t) => {
  const dir = await useTempDir(t)
  const taken = net.createServer()
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
  t.after(() => taken.close())
  const port = (taken.address() as net.AddressInfo).port
  const result = await failedStart(dir, { PORT: String(port), HOST: '127.0.0.1' })
  assertOneLine(
    result,
    `PORT=${port} HOST=127.0.0.1:`,
    new RegExp(`address already in use: another process listens on 127.0.0.1:${port} \\(EADDRINUSE\\)`),
  )
})

test('HOST that is not an address of this machine, or a name that does not resolve: names PORT and HOST', {
  timeout: 30_000,
}, async (t) => {
  const dir = await useTempDir(t)
  const cases: Array<[string, RegExp]> = [
    ['203.0.113.7', /203\.0\.113\.7 is not an address of this machine \(EADDRNOTAVAIL\)/], // TEST-NET-3: never local
    ['no-such-host.invalid', /the host name no-such-host\.invalid cannot be resolved \((ENOTFOUND|EAI_AGAIN)\)/],
  ]
  for (const [host, cause] of cases) {
    const result = await failedStart(dir, { PORT: '8080', HOST: host })
    assertOneLine(result, `PORT=8080 HOST=${host}:`, cause)
  }
})
