import { ADMIN_TOKEN_ROLES, DEFAULT_ADMIN_TOKEN_ROLE, isAdminTokenRole } from '../admin-tokens/admin-token-repository.js'
import type { AdminTokenService } from '../admin-tokens/admin-token-service.js'
import { adminTokenJson } from '../admin-tokens/admin-tokens.js'
import type { ChangeContext } from '../changes/audit-log.js'
import { escapeControlCharacters } from '../shared/control-characters.js'
import { cliChange, withServices } from './command-domain.js'
import { UsageError } from './command-errors.js'
import { type CommandGroup, type CommandRun, defineCommand } from './command-line.js'
import { print } from './output.js'
import { table } from './table.js'

/** The CLI's changes are audited under the OS user who ran it. */
const cliAudit = (): ChangeContext => ({ actor: cliChange().actor })

/** The admin token service of a domain built for the command, closed after `work`. */
const withService = (run: CommandRun, work: (service: AdminTokenService) => Promise<void>) =>
  withServices(run, (services) => work(services.adminTokens))

const create = defineCommand(
  {
    path: 'admin-tokens create',
    synopsis: '--name NAME [--role read|admin] [--json]',
    description:
      'Creates a token for the admin API (/admin/v1) and prints it, this once: only its SHA-256 is stored. A read token may read keys, usage, the audit log and orders, and is refused every change (403 forbidden_role). A token made here has no maker: it lives until it is revoked, whatever happens to the others.',
    flags: {
      name: { type: 'string', value: 'NAME', help: 'who or what the token is for: 1 to 100 characters' },
      role: {
        type: 'string',
        value: 'ROLE',
        help: `what it may do: ${ADMIN_TOKEN_ROLES.join(' or ')} (default ${DEFAULT_ADMIN_TOKEN_ROLE})`,
      },
      json: { type: 'boolean', help: 'print {"token","adminToken"} as one line of JSON' },
    },
  },
  ({ values }) => {
    const name = values.name
    if (name === undefined) throw new UsageError('admin-tokens create needs --name')
    const role = values.role ?? DEFAULT_ADMIN_TOKEN_ROLE
    if (!isAdminTokenRole(role)) throw new UsageError(`--role must be one of ${ADMIN_TOKEN_ROLES.join(', ')}`)
    return (run) =>
      withService(run, async (service) => {
        const { token, record } = await service.create({ name, role }, cliAudit())
        print(
          values.json,
          { token, adminToken: adminTokenJson(record) },
          `Created admin token ${record.id} (${escapeControlCharacters(record.name)}, role ${record.role}).\nThis is the only time the token is shown; store it now:\n\n  ${token}\n\n`,
        )
      })
  },
)

const list = defineCommand(
  {
    path: 'admin-tokens list',
    synopsis: '[--json]',
    description:
      'Lists the admin tokens: ids, prefixes, roles, who made each (cli, or the id of the admin token that made it through the admin API), states and names, never the tokens.',
    flags: { json: { type: 'boolean', help: 'print {"data":[…]} as one line of JSON' } },
  },
  ({ values }) =>
    (run) =>
      withService(run, async (service) => {
        const tokens = await service.list()
        const rows = tokens.map((t) => {
          const { id, prefix, role, createdBy, name, revokedAt } = adminTokenJson(t)
          const state = revokedAt === null ? 'active' : `revoked ${revokedAt}`
          return [id, `${prefix}…`, role, createdBy ?? 'cli', state, escapeControlCharacters(name)]
        })
        const text = rows.length === 0 ? 'No admin tokens.\n' : table(['ID', 'PREFIX', 'ROLE', 'MADE BY', 'STATE', 'NAME'], rows)
        print(values.json, { data: tokens.map(adminTokenJson) }, text)
      }),
)

const revoke = defineCommand(
  {
    path: 'admin-tokens revoke',
    synopsis: 'TOKEN_ID [--json]',
    description:
      'Revokes an admin token and every token under it (the ones it made through the admin API, the ones they made, and so on): every server refuses them at once. Idempotent: a revoked token keeps its first revocation time.',
    flags: { json: { type: 'boolean', help: 'print {"adminToken","alreadyRevoked","alsoRevoked"} as one line of JSON' } },
    operands: ['TOKEN_ID'],
  },
  ({ values, operands: [id] }) =>
    (run) =>
      withService(run, async (service) => {
        const outcome = await service.revoke(id!, cliAudit())
        const adminToken = adminTokenJson(outcome.record)
        const also = outcome.alsoRevoked.map((t) => t.id)
        // Idempotent, like keys revoke: a token revoked before is the outcome asked for (first time kept).
        const text =
          (outcome.alreadyRevoked
            ? `Admin token ${id} was already revoked (at ${adminToken.revokedAt}).\n`
            : `Revoked admin token ${id}; it is refused from now on, by every server.\n`) +
          (also.length === 0
            ? ''
            : `Revoked with it, made with it or with a token it made (${also.length}): ${also.join(', ')}; refused from now on, by every server.\n`)
        print(
          values.json,
          { adminToken, alreadyRevoked: outcome.alreadyRevoked, alsoRevoked: outcome.alsoRevoked.map(adminTokenJson) },
          text,
        )
      }),
)

export const ADMIN_TOKENS: CommandGroup = {
  name: 'admin-tokens',
  description: 'The tokens of the admin API (/admin/v1): an admin call needs Authorization: Bearer as_admin_…',
  commands: { create, list, revoke },
}
