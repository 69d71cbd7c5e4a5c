#!/usr/bin/env node
import { userInfo } from 'node:os'
import { parseArgs } from 'node:util'
import { type AdminTokenAudit, AdminTokenInputError, createAdminToken, revokeAdminToken } from './admin/admin-tokens.js'
import { CLI } from './banner.js'
import { type Config, ConfigError, loadConfig } from './config.js'
import type { AuditRepository } from './keys/administration.js'
import { createApiKey, KeyInputError } from './keys/key-service.js'
import { StartupError, startFailureLine } from './startup-error.js'
import { openStorage } from './storage/index.js'
import type { Storage } from './storage/storage.js'

const USAGE = `Usage:
  animal-store serve [--workers N]
  animal-store keys create --plan free|pro|business|enterprise --name NAME [--per-minute N --per-day M] [--json]
  animal-store keys list [--json]
  animal-store keys revoke KEY_ID
  animal-store admin-tokens create --name NAME [--json]
  animal-store admin-tokens list [--json]
  animal-store admin-tokens revoke TOKEN_ID [--json]

The database is DATABASE_URL (default data/animal-store.db); the key prefix follows ANIMAL_STORE_ENV.
In the project directory, run it as \`${CLI} ...\` or \`npm run keys -- ...\` (\`npx animal-store\` may
fetch a different package of that name from the npm registry).`

/** A usage or input error: message and usage on stderr, exit status 2. */
class UsageError extends Error {}

/** A well-formed command that cannot be done (an unknown key id): one line on stderr, exit status 2. */
class CommandError extends Error {}

function positiveInt(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined
  if (!/^\d+$/.test(raw)) throw new UsageError(`${flag} must be a positive integer (got ${JSON.stringify(raw)})`)
  return Number(raw)
}

async function keys(config: Config, args: string[]): Promise<void> {
  const [sub, ...rest] = args
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    strict: true,
    options: {
      plan: { type: 'string' },
      name: { type: 'string' },
      'per-minute': { type: 'string' },
      'per-day': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  })
  const storage = await openStorage(config)
  try {
    if (sub === 'create') {
      if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`)
      if (values.plan === undefined) throw new UsageError('keys create needs --plan')
      if (values.name === undefined) throw new UsageError('keys create needs --name')
      const { key, record } = await createApiKey(
        storage.keys,
        {
          plan: values.plan,
          name: values.name,
          perMinute: positiveInt('--per-minute', values['per-minute']),
          perDay: positiveInt('--per-day', values['per-day']),
        },
        config.env,
      )
      const out = {
        id: record.id,
        key,
        plan: record.plan,
        name: record.name,
        perMinute: record.perMinute,
        perDay: record.perDay,
        prefix: record.prefix,
      }
      if (values.json) process.stdout.write(JSON.stringify(out) + '\n')
      else
        process.stdout.write(
          `Created key ${record.id} (${record.plan}: ${record.perMinute}/min, ${record.perDay}/day).\n` +
            `This is the only time the key is shown; store it now:\n\n  ${key}\n\n`,
        )
    } else if (sub === 'list') {
      const all = await storage.keys.listKeys()
      const rows = all.map((k) => ({
        id: k.id,
        prefix: k.prefix,
        name: k.name,
        plan: k.plan,
        perMinute: k.perMinute,
        perDay: k.perDay,
        createdAt: new Date(k.createdAt).toISOString(),
        revokedAt: k.revokedAt === null ? null : new Date(k.revokedAt).toISOString(),
      }))
      if (values.json) process.stdout.write(JSON.stringify(rows) + '\n')
      else if (rows.length === 0) process.stdout.write('No keys.\n')
      else
        for (const r of rows)
          process.stdout.write(
            `${r.id}  ${r.prefix}…  ${r.plan.padEnd(10)} ${String(r.perMinute).padStart(7)}/min ${String(r.perDay).padStart(9)}/day  ${r.revokedAt ? 'revoked ' + r.revokedAt : 'active'}  ${r.name}\n`,
          )
    } else if (sub === 'revoke') {
      const [id, extra] = positionals
      if (id === undefined || extra !== undefined) throw new UsageError('keys revoke takes exactly one KEY_ID')
      if (await storage.keys.revokeKey(id, Date.now())) {
        process.stdout.write(
          values.json
            ? JSON.stringify({ id, revoked: true }) + '\n'
            : `Revoked ${id}; running servers refuse it at their next revocation poll (every KEY_REFRESH_MS, 1 s by default; at once on PostgreSQL).\n`,
        )
        return
      }
      // Revoking is idempotent: a key revoked before (by anyone) is the outcome asked for.
      const earlier = (await storage.keys.listKeys()).find((k) => k.id === id)?.revokedAt
      if (earlier === undefined || earlier === null) throw new CommandError(`no key with id ${id} (${CLI} keys list shows the ids)`)
      const at = new Date(earlier).toISOString()
      process.stdout.write(
        values.json ? JSON.stringify({ id, revoked: true, alreadyRevokedAt: at }) + '\n' : `Key ${id} was already revoked (at ${at}).\n`,
      )
    } else {
      throw new UsageError(sub ? `unknown keys command ${JSON.stringify(sub)}` : 'keys needs a command: create, list or revoke')
    }
  } finally {
    await storage.close()
  }
}

/** The CLI's changes are audited under the OS user who ran it. */
function cliAudit(storage: Storage): AdminTokenAudit | undefined {
  const audit = (storage as Storage & { audit?: AuditRepository }).audit
  let user: string
  try {
    user = userInfo().username
  } catch {
    user = 'unknown'
  }
  return audit === undefined ? undefined : { audit, actor: { type: 'cli', id: user } }
}

/** `admin-tokens create|list|revoke`: the tokens of the admin API (/admin/v1). The token is shown once. */
async function adminTokens(config: Config, args: string[]): Promise<void> {
  const [sub, ...rest] = args
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    strict: true,
    options: { name: { type: 'string' }, json: { type: 'boolean', default: false } },
  })
  const print = (json: unknown, text: string) => process.stdout.write(values.json ? JSON.stringify(json) + '\n' : text)
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())
  const storage = await openStorage(config)
  try {
    if (sub === 'create') {
      if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`)
      if (values.name === undefined) throw new UsageError('admin-tokens create needs --name')
      const { token, record } = await createAdminToken(storage.adminTokens, values.name, cliAudit(storage))
      print(
        { id: record.id, token, name: record.name, prefix: record.prefix, createdAt: iso(record.createdAt) },
        `Created admin token ${record.id} (${record.name}).\nThis is the only time the token is shown; store it now:\n\n  ${token}\n\n`,
      )
    } else if (sub === 'list') {
      if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`)
      const rows = (await storage.adminTokens.list()).map((t) => ({
        id: t.id,
        prefix: t.prefix,
        name: t.name,
        createdAt: iso(t.createdAt),
        revokedAt: iso(t.revokedAt),
      }))
      print(
        rows,
        rows.length === 0
          ? 'No admin tokens.\n'
          : rows.map((r) => `${r.id}  ${r.prefix}…  ${r.revokedAt ? 'revoked ' + r.revokedAt : 'active'}  ${r.name}\n`).join(''),
      )
    } else if (sub === 'revoke') {
      const [id, extra] = positionals
      if (id === undefined || extra !== undefined) throw new UsageError('admin-tokens revoke takes exactly one TOKEN_ID')
      const outcome = await revokeAdminToken(storage.adminTokens, id, cliAudit(storage))
      if (outcome === undefined) throw new CommandError(`no admin token with id ${id} (${CLI} admin-tokens list shows the ids)`)
      const at = iso(outcome.record.revokedAt)
      // Idempotent, like keys revoke: a token revoked before is the outcome asked for (first time kept).
      if (outcome.alreadyRevoked) print({ id, revoked: true, alreadyRevokedAt: at }, `Admin token ${id} was already revoked (at ${at}).\n`)
      else print({ id, revoked: true, revokedAt: at }, `Revoked admin token ${id}; it is refused from now on, by every server.\n`)
    } else {
      throw new UsageError(
        sub ? `unknown admin-tokens command ${JSON.stringify(sub)}` : 'admin-tokens needs a command: create, list or revoke',
      )
    }
  } finally {
    await storage.close()
  }
}

async function serve(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, strict: true, options: { workers: { type: 'string' } } })
  const workers = positiveInt('--workers', values.workers) ?? 1
  if (workers < 1 || workers > 64) throw new UsageError('--workers must be from 1 to 64')
  if (workers === 1) {
    const { startServer } = await import('./server.js')
    await startServer(config)
    return
  }
  const { startCluster } = await import('./cluster.js')
  await startCluster(config, workers)
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  try {
    if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
      process.stdout.write(USAGE + '\n')
      return command === undefined ? 2 : 0
    }
    const config = loadConfig()
    if (command === 'keys') await keys(config, rest)
    else if (command === 'admin-tokens') await adminTokens(config, rest)
    else if (command === 'serve') await serve(config, rest)
    else throw new UsageError(`unknown command ${JSON.stringify(command)}`)
    return 0
  } catch (error) {
    const usage =
      error instanceof UsageError ||
      error instanceof KeyInputError ||
      error instanceof AdminTokenInputError ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    if (usage) {
      process.stderr.write(`animal-store: ${(error as Error).message}\n\n${USAGE}\n`)
      return 2
    }
    if (command === 'serve' || error instanceof ConfigError) {
      process.stderr.write(startFailureLine(error) + '\n')
      return 2
    }
    if (error instanceof CommandError || error instanceof StartupError) {
      process.stderr.write(`animal-store: ${error.message}\n`)
      return 2
    }
    throw error
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code
  },
  (error: unknown) => {
    process.stderr.write(`animal-store: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  },
)
