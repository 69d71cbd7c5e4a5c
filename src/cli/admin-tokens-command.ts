import { userInfo } from 'node:os'
import { parseArgs } from 'node:util'
import { type AdminTokenAudit, AdminTokenInputError, createAdminToken, revokeAdminToken } from '../admin/admin-tokens.js'
import { CLI } from '../banner.js'
import type { Config } from '../config.js'
import { escapeControlCharacters as printable } from '../control-characters.js'
import { openStorage } from '../storage/index.js'
import type { Storage } from '../storage/storage.js'
import { CommandError, printableJson, UsageError } from './keys-command.js'

export { AdminTokenInputError }

export const ADMIN_TOKENS_USAGE = `  animal-store admin-tokens create --name NAME [--json]
  animal-store admin-tokens list [--json]
  animal-store admin-tokens revoke TOKEN_ID [--json]`

/** The CLI's changes are audited under the OS user who ran it. */
function cliAudit(storage: Storage): AdminTokenAudit {
  return { audit: storage.audit, actor: { type: 'cli', id: userInfo().username } }
}

/** `admin-tokens create|list|revoke`: the tokens of the admin API (/admin/v1). The token is shown once. */
export async function adminTokensCommand(config: Config, args: string[]): Promise<void> {
  const [sub, ...rest] = args
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    strict: true,
    options: { name: { type: 'string' }, json: { type: 'boolean', default: false } },
  })
  const print = (json: unknown, text: string) => process.stdout.write(values.json ? printableJson(json) : text)
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
          : rows.map((r) => `${r.id}  ${r.prefix}…  ${r.revokedAt ? 'revoked ' + r.revokedAt : 'active'}  ${printable(r.name)}\n`).join(''),
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
