import { userInfo } from 'node:os'
import { parseArgs } from 'node:util'
import { CLI } from '../banner.js'
import type { Config } from '../config.js'
import { escapeControlCharacters } from '../control-characters.js'
import { type ChangeContext, KEY_STATES, KeyInputError, type KeyState, type KeyUsage, type KeyView } from '../keys/administration.js'
import { KeyService } from '../keys/key-service.js'
import type { PlanName } from '../keys/plans.js'
import { LimiterUnavailableError } from '../limits/limiter.js'
import { redactUrl } from '../startup-error.js'
import { openStorage } from '../storage/index.js'
import { openUsageSource } from './key-usage-source.js'

/** A usage or input error: message and usage on stderr, exit status 2. */
export class UsageError extends Error {}

/** A well-formed command that cannot be done (an unknown key id): one line on stderr, exit status 2. */
export class CommandError extends Error {}

export const KEYS_USAGE = `  animal-store keys create --plan free|pro|business|enterprise --name NAME [--per-minute N --per-day M]
                          [--expires-at ISO] [--metadata JSON] [--json]
  animal-store keys list [--plan P] [--state active|expired|revoked] [--name TEXT] [--limit N [--after KEY_ID]] [--json]
  animal-store keys show KEY_ID [--json]
  animal-store keys update KEY_ID [--name NAME] [--plan P] [--per-minute N --per-day M]
                          [--expires-at ISO|none] [--metadata JSON|none] [--json]
  animal-store keys rotate KEY_ID --grace SECONDS [--json]
  animal-store keys revoke KEY_ID [--json]
  animal-store keys usage KEY_ID [--json]`

/** The service's field names as the CLI's flags, for its error messages. */
const FLAGS: Record<string, string> = {
  plan: '--plan',
  name: '--name',
  perMinute: '--per-minute',
  perDay: '--per-day',
  expiresAt: '--expires-at',
  metadata: '--metadata',
  graceSeconds: '--grace',
  limit: '--limit',
}

/** A KeyInputError's message with the fields named as flags (`perMinute` -> `--per-minute`). */
export function inputErrorMessage(error: KeyInputError): string {
  let message = error.message.replace(/\b(perMinute|perDay|expiresAt|graceSeconds)\b/g, (field) => FLAGS[field]!)
  const flag = FLAGS[error.field]
  if (flag !== undefined && message.startsWith(error.field + ' ')) message = flag + message.slice(error.field.length)
  return message
}

function positiveInt(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined
  if (!/^\d+$/.test(raw)) throw new UsageError(`${flag} must be a positive integer (got ${JSON.stringify(raw)})`)
  return Number(raw)
}

/** ISO 8601 with a time and an offset (or Z), or `none` to clear when clearing is allowed. */
function expiry(raw: string | undefined, clearable: boolean): number | null | undefined {
  if (raw === undefined) return undefined
  if (clearable && raw === 'none') return null
  const ms = Date.parse(raw)
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(raw) || Number.isNaN(ms))
    throw new KeyInputError(
      'expiresAt',
      `expiresAt must be an ISO 8601 date and time with an offset, e.g. 2027-01-31T00:00:00Z (got ${JSON.stringify(raw)})`,
    )
  return ms
}

function metadata(raw: string | undefined, clearable: boolean): Record<string, unknown> | null | undefined {
  if (raw === undefined) return undefined
  if (clearable && raw === 'none') return null
  try {
    return JSON.parse(raw) as Record<string, unknown>
  } catch {
    throw new KeyInputError('metadata', 'metadata must be a JSON object, e.g. \'{"customer":"c_42"}\'')
  }
}

/**
 * JSON for stdout, a terminal as often as a pipe: JSON.stringify leaves U+007F–U+009F as they
 * are; escaped, the document means the same.
 */
export const printableJson = (json: unknown): string => `${escapeControlCharacters(JSON.stringify(json))}\n`

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString())
const isoSeconds = (s: number | null): string | null => (s === null ? null : new Date(s * 1000).toISOString())

/** A key as the CLI prints it in JSON: times as ISO 8601. */
function viewJson(v: KeyView) {
  return {
    ...v,
    createdAt: iso(v.createdAt),
    updatedAt: iso(v.updatedAt),
    expiresAt: iso(v.expiresAt),
    revokedAt: iso(v.revokedAt),
    lastUsedAt: iso(v.lastUsedAt),
  }
}

function line(v: KeyView): string {
  const state = v.state === 'revoked' ? `revoked ${iso(v.revokedAt)}` : v.state === 'expired' ? `expired ${iso(v.expiresAt)}` : 'active'
  return `${v.id}  ${v.prefix}…  ${v.plan.padEnd(10)} ${String(v.perMinute).padStart(7)}/min ${String(v.perDay).padStart(9)}/day  ${state}  ${escapeControlCharacters(v.name)}\n`
}

function details(v: KeyView): string {
  const rows: Array<[string, string | number | null]> = [
    ['Key', `${v.id} (${v.prefix}…)`],
    ['Name', escapeControlCharacters(v.name)],
    ['Plan', `${v.plan}: ${v.perMinute}/min, ${v.perDay}/day`],
    ['State', v.state],
    ['Quota', v.quotaId === v.id ? v.quotaId : `${v.quotaId} (shared along its rotation chain)`],
    ['Created', iso(v.createdAt)],
    ['Updated', iso(v.updatedAt)],
    ['Expires', iso(v.expiresAt) ?? 'never'],
    ['Revoked', iso(v.revokedAt) ?? 'no'],
    ['Rotated from', v.rotatedFrom ?? '-'],
    ['Rotated to', v.rotatedTo ?? '-'],
    ['Last used', iso(v.lastUsedAt) ?? 'never (or not yet flushed)'],
    ['Metadata', v.metadata === null ? '-' : escapeControlCharacters(JSON.stringify(v.metadata))],
  ]
  return rows.map(([k, value]) => `${(k + ':').padEnd(14)}${value}\n`).join('')
}

function usageText(u: KeyUsage, note: string): string {
  const window = (name: string, w: KeyUsage['minute']) =>
    `${name.padEnd(8)}${w.used}/${w.limit} used, ${w.remaining} remaining, resets ${isoSeconds(w.resetAt)}\n`
  const ban = u.ban.active ? `banned until ${isoSeconds(u.ban.until)} (level ${u.ban.level})` : `not banned (level ${u.ban.level})`
  return (
    `Key ${u.keyId} (quota ${u.quotaId})\n` +
    window('Minute', u.minute) +
    window('Day', u.day) +
    `Ban     ${ban}\n` +
    `Last    ${iso(u.lastUsedAt) ?? 'never'}\n` +
    note
  )
}

function oneId(command: string, positionals: string[]): string {
  const [id, extra] = positionals
  if (id === undefined || extra !== undefined) throw new UsageError(`keys ${command} takes exactly one KEY_ID`)
  return id
}

/** `animal-store keys …`: thin wrappers over the KeyService, as the admin API is. */
export async function keysCommand(config: Config, args: string[]): Promise<void> {
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
      'expires-at': { type: 'string' },
      metadata: { type: 'string' },
      grace: { type: 'string' },
      state: { type: 'string' },
      limit: { type: 'string' },
      after: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  })
  const known = ['create', 'list', 'show', 'update', 'rotate', 'revoke', 'usage']
  if (sub === undefined || !known.includes(sub))
    throw new UsageError(
      sub ? `unknown keys command ${JSON.stringify(sub)}` : 'keys needs a command: create, list, show, update, rotate, revoke or usage',
    )
  const out = (json: unknown, text: string) => process.stdout.write(values.json ? printableJson(json) : text)
  const ctx: ChangeContext = { actor: { type: 'cli', id: userInfo().username }, requestId: null }
  const storage = await openStorage(config)
  const usage = sub === 'usage' ? await openUsageSource(config) : undefined
  const service = new KeyService({
    keys: storage.keys,
    audit: storage.audit,
    limiter: usage?.limiter ?? { peek: () => Promise.reject(new Error('no limiter')) },
    env: config.env,
  })
  try {
    if (sub === 'create') {
      if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`)
      if (values.plan === undefined) throw new UsageError('keys create needs --plan')
      if (values.name === undefined) throw new UsageError('keys create needs --name')
      const { key, view } = await service.createKey(
        {
          plan: values.plan,
          name: values.name,
          perMinute: positiveInt('--per-minute', values['per-minute']),
          perDay: positiveInt('--per-day', values['per-day']),
          expiresAt: expiry(values['expires-at'], false),
          metadata: metadata(values.metadata, false),
        },
        ctx,
      )
      out(
        { ...viewJson(view), key },
        `Created key ${view.id} (${view.plan}: ${view.perMinute}/min, ${view.perDay}/day${view.expiresAt === null ? '' : `, expires ${iso(view.expiresAt)}`}).\n` +
          `This is the only time the key is shown; store it now:\n\n  ${key}\n\n`,
      )
    } else if (sub === 'list') {
      if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`)
      if (values.state !== undefined && !(KEY_STATES as readonly string[]).includes(values.state))
        throw new UsageError(`--state must be one of ${KEY_STATES.join(', ')} (got ${JSON.stringify(values.state)})`)
      if (values.after !== undefined && values.limit === undefined) throw new UsageError('--after pages: it needs --limit')
      const filter = { plan: values.plan as PlanName | undefined, state: values.state as KeyState | undefined, name: values.name }
      const limit = positiveInt('--limit', values.limit)
      let keys: KeyView[]
      let nextAfter: string | null = null
      if (limit === undefined) {
        // Without --limit: every key that matches, page after page.
        keys = []
        let after: string | undefined
        do {
          const page = await service.listKeys({ ...filter, limit: 100, after })
          keys.push(...page.keys)
          after = page.nextAfter ?? undefined
        } while (after !== undefined)
      } else {
        const page = await service.listKeys({ ...filter, limit, after: values.after })
        keys = page.keys
        nextAfter = page.nextAfter
      }
      const json = limit === undefined ? keys.map(viewJson) : { keys: keys.map(viewJson), nextAfter }
      const more = nextAfter === null ? '' : `More: ${CLI} keys list --limit ${limit} --after ${nextAfter}\n`
      out(json, keys.length === 0 ? 'No keys.\n' + more : keys.map(line).join('') + more)
    } else if (sub === 'show') {
      const view = await service.getKey(oneId(sub, positionals))
      out(viewJson(view), details(view))
    } else if (sub === 'update') {
      const id = oneId(sub, positionals)
      const patch = {
        ...(values.name === undefined ? {} : { name: values.name }),
        ...(values.plan === undefined ? {} : { plan: values.plan }),
        ...(values['per-minute'] === undefined ? {} : { perMinute: positiveInt('--per-minute', values['per-minute']) }),
        ...(values['per-day'] === undefined ? {} : { perDay: positiveInt('--per-day', values['per-day']) }),
        ...(values['expires-at'] === undefined ? {} : { expiresAt: expiry(values['expires-at'], true) }),
        ...(values.metadata === undefined ? {} : { metadata: metadata(values.metadata, true) }),
      }
      if (Object.keys(patch).length === 0)
        throw new UsageError('keys update needs at least one of --name, --plan, --per-minute, --per-day, --expires-at, --metadata')
      const view = await service.updateKey(id, patch, ctx)
      out(viewJson(view), `Updated ${view.id}; running servers use the change within KEY_REFRESH_MS (1 s by default).\n` + details(view))
    } else if (sub === 'rotate') {
      const id = oneId(sub, positionals)
      if (values.grace === undefined)
        throw new UsageError(
          'keys rotate needs --grace SECONDS: how long the old key keeps working (0 revokes it at once; at most 604800, 7 days)',
        )
      const graceSeconds = /^\d+$/.test(values.grace) ? Number(values.grace) : Number.NaN
      const { key, view, previous } = await service.rotateKey(id, { graceSeconds }, ctx)
      const until =
        previous.revokedAt !== null ? 'is revoked now' : `keeps working until ${iso(previous.expiresAt)}, then answers 401 key_expired`
      out(
        { ...viewJson(view), key, previous: viewJson(previous) },
        `Rotated ${id} to ${view.id}; the old key ${until}. Both count against one quota (${view.quotaId}).\n` +
          `This is the only time the new key is shown; store it now:\n\n  ${key}\n\n`,
      )
    } else if (sub === 'revoke') {
      const id = oneId(sub, positionals)
      const { view, alreadyRevoked } = await service.revokeKey(id, ctx)
      // Revoking is idempotent: a key revoked before (by anyone) is the outcome asked for.
      if (alreadyRevoked) {
        const at = iso(view.revokedAt)
        out({ id, revoked: true, alreadyRevokedAt: at }, `Key ${id} was already revoked (at ${at}).\n`)
      } else
        out(
          { id, revoked: true },
          `Revoked ${id}; running servers refuse it at their next key-change poll (every KEY_REFRESH_MS, 1 s by default; at once on PostgreSQL).\n`,
        )
    } else {
      const id = oneId(sub, positionals)
      if (usage === undefined)
        throw new CommandError(
          "keys usage: without REDIS_URL the counters live only in each server's memory and no LIMITER_STATE_FILE holds them; ask the admin API (GET /admin/v1/keys/KEY_ID/usage)",
        )
      const u = await service.keyUsage(id).catch((error: unknown) => {
        if (error instanceof LimiterUnavailableError)
          throw new CommandError(`keys usage: Redis is unreachable at ${redactUrl(config.redisUrl ?? '')}; no counters to show`)
        throw error
      })
      const asOf = usage.kind === 'redis' ? null : usage.snapshotAt === null ? 'no snapshot yet' : new Date(usage.snapshotAt).toISOString()
      const note =
        usage.kind === 'redis'
          ? 'Live counters from Redis. Last use is as last flushed by the servers (every LAST_USED_FLUSH_MS).\n'
          : `Counters as of the state file's last snapshot (${asOf}; a running server writes it every LIMITER_SNAPSHOT_MS when something changed).\n`
      out(
        {
          ...u,
          minute: { ...u.minute, resetAt: isoSeconds(u.minute.resetAt) },
          day: { ...u.day, resetAt: isoSeconds(u.day.resetAt) },
          ban: { ...u.ban, until: isoSeconds(u.ban.until) },
          lastUsedAt: iso(u.lastUsedAt),
          source: usage.kind,
          ...(usage.kind === 'state-file' ? { snapshotAt: usage.snapshotAt === null ? null : iso(usage.snapshotAt) } : {}),
        },
        usageText(u, note),
      )
    }
  } finally {
    await usage?.limiter.close()
    await storage.close()
  }
}
