import { createdKeyJson, keyJson, keyPageJson, revokedKeyJson, rotatedKeyJson, usageJson } from '../admin/keys/views.js'
import type { ChangeContext } from '../changes/audit-log.js'
import { KEY_STATES, type KeyState, type KeyView, type Revocation } from '../keys/administration.js'
import { countedQuotaId } from '../keys/api-key.js'
import type { KeyService } from '../keys/key-service.js'
import { displayPrefix } from '../shared/key-redaction.js'
import { LimiterUnavailableError } from '../shared/outages.js'
import type { PlanName } from '../shared/plans.js'
import { Refusal } from '../shared/refusal.js'
import { SCOPES } from '../shared/scopes.js'
import { redactUrl } from '../shared/startup-error.js'
import { cliChange, withServices } from './command-domain.js'
import { CommandError, UsageError } from './command-errors.js'
import { type CommandGroup, type CommandRun, defineCommand, type Flag, positiveInt, programName } from './command-line.js'
import { expiry, metadata, scopesFlag } from './key-flags.js'
import { iso, keyDetails, keyTable, usageText } from './key-text.js'
import { openUsageSource, type UsageSource } from './key-usage-source.js'
import { print } from './output.js'

/** The key service of a domain built for the command (for `usage`, on the limiter's counters), closed after `work`. */
const withService = (run: CommandRun, work: (service: KeyService, ctx: ChangeContext) => Promise<void>, usage?: UsageSource) =>
  withServices(run, (services) => work(services.keys, cliChange()), { limiter: usage?.limiter })

const KEY_ID = ['KEY_ID'] as const
const json = (what: string) => ({ type: 'boolean', help: `print ${what} as one line of JSON` }) as const
const flag = {
  plan: { type: 'string', value: 'PLAN', help: 'free (60/min, 1,000/day), pro (300, 10,000), business (1,000, 100,000) or enterprise' },
  name: { type: 'string', value: 'NAME', help: 'who or what the key is for: 1 to 100 characters' },
  perMinute: { type: 'string', value: 'N', help: 'enterprise only, with --per-day: requests a minute (1 to 1,000,000,000)' },
  perDay: { type: 'string', value: 'M', help: 'enterprise only, with --per-minute: requests a UTC day (1 to 1,000,000,000)' },
  scopes: {
    type: 'string',
    value: 'SCOPES',
    help: `what the key may do, comma-separated: ${SCOPES.join(',')} (all four by default)`,
  },
} as const satisfies Record<string, Flag>

const create = defineCommand(
  {
    path: 'keys create',
    synopsis:
      '--plan free|pro|business|enterprise --name NAME [--per-minute N --per-day M]\n| --customer CUSTOMER_ID --name NAME\n[--scopes SCOPES] [--expires-at ISO] [--metadata JSON] [--json]',
    description: 'Creates an API key and prints it, this once: only its SHA-256 is stored.',
    flags: {
      plan: flag.plan,
      customer: {
        type: 'string',
        value: 'CUSTOMER_ID',
        help: "the customer the key belongs to (cus_…): it takes the customer's plan (no --plan) and shares its quota",
      },
      name: flag.name,
      'per-minute': flag.perMinute,
      'per-day': flag.perDay,
      scopes: flag.scopes,
      'expires-at': {
        type: 'string',
        value: 'ISO',
        help: 'ISO 8601 with an offset (2027-01-31T00:00:00Z); then it answers 401 key_expired',
      },
      metadata: { type: 'string', value: 'JSON', help: 'a JSON object for the operator, at most 4096 bytes (\'{"customer":"c_42"}\')' },
      json: json('the admin API\'s answer to POST /admin/v1/keys ({"key","apiKey"})'),
    },
  },
  ({ values }) => {
    if (values.plan === undefined && values.customer === undefined) throw new UsageError('keys create needs --plan (or --customer)')
    if (values.name === undefined) throw new UsageError('keys create needs --name')
    const input = {
      plan: values.plan,
      customerId: values.customer,
      name: values.name,
      perMinute: positiveInt('--per-minute', values['per-minute']),
      perDay: positiveInt('--per-day', values['per-day']),
      scopes: scopesFlag(values.scopes),
      expiresAt: expiry(values['expires-at'], false),
      metadata: metadata(values.metadata, false),
    }
    return (run) =>
      withService(run, async (service, ctx) => {
        const created = await service.createKey(input, ctx)
        const { view, key } = created
        print(
          values.json,
          createdKeyJson(created),
          `Created key ${view.id} (${view.plan}: ${view.perMinute}/min, ${view.perDay}/day${view.expiresAt === null ? '' : `, expires ${iso(view.expiresAt)}`}).\n` +
            `This is the only time the key is shown; store it now:\n\n  ${key}\n\n`,
        )
      })
  },
)

const list = defineCommand(
  {
    path: 'keys list',
    synopsis: '[--plan P] [--customer CUSTOMER_ID] [--state active|expired|revoked] [--name TEXT] [--limit N [--after KEY_ID]] [--json]',
    description: 'Lists keys newest first (by creation time), never the keys themselves: every key that matches, or one page with --limit.',
    flags: {
      plan: { type: 'string', value: 'P', help: 'keys on this plan only' },
      customer: { type: 'string', value: 'CUSTOMER_ID', help: 'keys of this customer only' },
      state: { type: 'string', value: 'STATE', help: 'active, expired or revoked keys only' },
      name: { type: 'string', value: 'TEXT', help: 'keys whose name contains TEXT (case-insensitive)' },
      limit: { type: 'string', value: 'N', help: 'one page of at most N keys (1 to 100)' },
      after: { type: 'string', value: 'KEY_ID', help: 'the page after this key (the nextAfter of the previous page); needs --limit' },
      json: json('the admin API\'s answer to GET /admin/v1/keys ({"data":[…],"nextAfter"})'),
    },
  },
  ({ values }) => {
    if (values.state !== undefined && !(KEY_STATES as readonly string[]).includes(values.state))
      throw new UsageError(`--state must be one of ${KEY_STATES.join(', ')} (got ${JSON.stringify(values.state)})`)
    if (values.after !== undefined && values.limit === undefined) throw new UsageError('--after pages: it needs --limit')
    const filter = {
      plan: values.plan as PlanName | undefined,
      customerId: values.customer,
      state: values.state as KeyState | undefined,
      name: values.name,
    }
    const limit = positiveInt('--limit', values.limit)
    return (run) =>
      withService(run, async (service) => {
        let keys: KeyView[]
        let nextAfter: string | null = null
        if (limit === undefined) {
          // Without --limit: every key that matches, page after page; it is the last page (nextAfter null).
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
        const more = nextAfter === null ? '' : `More: ${programName()} keys list --limit ${limit} --after ${nextAfter}\n`
        print(values.json, keyPageJson({ keys, nextAfter }), keys.length === 0 ? `No keys.\n${more}` : keyTable(keys) + more)
      })
  },
)

const show = defineCommand(
  {
    path: 'keys show',
    synopsis: 'KEY_ID [--json]',
    description: 'Shows a key: plan, limits, state, times, rotation, metadata (its prefix, never the key).',
    flags: { json: json("the admin API's answer to GET /admin/v1/keys/KEY_ID") },
    operands: KEY_ID,
  },
  ({ values, operands: [id] }) =>
    (run) =>
      withService(run, async (service) => {
        const view = await service.getKey(id!)
        print(values.json, keyJson(view), keyDetails(view))
      }),
)

const lookup = defineCommand(
  {
    path: 'keys lookup',
    synopsis: 'KEY|- [--json]\n--prefix PREFIX [--limit N [--after KEY_ID]] [--json]',
    description:
      'Which key is this secret (found by its hash, in any state), or which keys have this display prefix? ' +
      '`-` reads the key from standard input, so that it stays out of the shell history. Revoke what it finds with keys revoke KEY_ID.',
    flags: {
      prefix: {
        type: 'string',
        value: 'PREFIX',
        help: 'a display prefix (as_live_AbCd), or more of a key: the keys with that display prefix',
      },
      limit: { type: 'string', value: 'N', help: 'with --prefix: one page of at most N keys (1 to 100, default 100)' },
      after: { type: 'string', value: 'KEY_ID', help: 'with --prefix: the page after this key (the nextAfter of the previous page)' },
      json: json('the admin API\'s answer to POST /admin/v1/keys/lookup (a key, or {"data":[…],"nextAfter"} for --prefix)'),
    },
    operands: ['KEY'],
    operandsOptional: true,
  },
  ({ values, operands: [key] }) => {
    if ((key === undefined) === (values.prefix === undefined))
      throw new UsageError('keys lookup takes a KEY (or - to read it from standard input) or --prefix, one of them')
    if (key !== undefined && (values.limit !== undefined || values.after !== undefined))
      throw new UsageError('--limit and --after page a --prefix lookup')
    const limit = positiveInt('--limit', values.limit) ?? 100
    return (run) =>
      withService(run, async (service) => {
        if (values.prefix !== undefined) {
          if (!PREFIX.test(values.prefix))
            throw new UsageError('--prefix must be as_live_ or as_test_ and at least 4 more key characters (as_live_AbCd)')
          const page = await service.listKeys({ prefix: displayPrefix(values.prefix), limit, after: values.after })
          const more =
            page.nextAfter === null
              ? ''
              : `More: ${programName()} keys lookup --prefix ${values.prefix} --limit ${limit} --after ${page.nextAfter}\n`
          print(
            values.json,
            keyPageJson(page),
            page.keys.length === 0 ? `No key has the prefix ${displayPrefix(values.prefix)}.\n` : keyTable(page.keys) + more,
          )
          return
        }
        const secret = key === '-' ? (await readStdin()).trim() : key!
        const view = await service.lookupKey(secret).catch((error: unknown) => {
          if (error instanceof Refusal && error.kind === 'not_found') throw new CommandError('no key has this secret')
          throw error
        })
        print(values.json, keyJson(view), keyDetails(view) + `Revoke it: ${programName()} keys revoke ${view.id}\n`)
      })
  },
)

const PREFIX = /^as_(live|test)_[0-9A-Za-z]{4,38}$/

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

const update = defineCommand(
  {
    path: 'keys update',
    synopsis:
      'KEY_ID [--name NAME] [--plan P] [--per-minute N --per-day M] [--scopes SCOPES]\n[--expires-at ISO|none] [--metadata JSON|none] [--json]',
    description:
      'Changes the fields given, all or nothing; running servers use the change within KEY_REFRESH_MS. Plan, limits and scopes apply to the keys it was rotated from that are still in their grace period too.',
    flags: {
      name: flag.name,
      plan: flag.plan,
      'per-minute': flag.perMinute,
      'per-day': flag.perDay,
      scopes: flag.scopes,
      'expires-at': { type: 'string', value: 'ISO|none', help: 'a new expiry (ISO 8601 with an offset), or none to clear it' },
      metadata: { type: 'string', value: 'JSON|none', help: 'a new JSON object (at most 4096 bytes), or none to clear it' },
      json: json("the admin API's answer to PATCH /admin/v1/keys/KEY_ID"),
    },
    operands: KEY_ID,
  },
  ({ values, operands: [id] }) => {
    const patch = {
      ...(values.name === undefined ? {} : { name: values.name }),
      ...(values.plan === undefined ? {} : { plan: values.plan }),
      ...(values['per-minute'] === undefined ? {} : { perMinute: positiveInt('--per-minute', values['per-minute']) }),
      ...(values['per-day'] === undefined ? {} : { perDay: positiveInt('--per-day', values['per-day']) }),
      ...(values.scopes === undefined ? {} : { scopes: scopesFlag(values.scopes) }),
      ...(values['expires-at'] === undefined ? {} : { expiresAt: expiry(values['expires-at'], true) }),
      ...(values.metadata === undefined ? {} : { metadata: metadata(values.metadata, true) }),
    }
    if (Object.keys(patch).length === 0)
      throw new UsageError('keys update needs at least one of --name, --plan, --per-minute, --per-day, --scopes, --expires-at, --metadata')
    return (run) =>
      withService(run, async (service, ctx) => {
        const view = await service.updateKey(id!, patch, ctx)
        print(
          values.json,
          keyJson(view),
          `Updated ${view.id}; running servers use the change within KEY_REFRESH_MS (1 s by default).\n` + keyDetails(view),
        )
      })
  },
)

const rotate = defineCommand(
  {
    path: 'keys rotate',
    synopsis: 'KEY_ID --grace SECONDS [--json]',
    description:
      'Issues a new key with the same plan, limits, name, metadata and quota, and prints it this once; the old key works for the grace period.',
    flags: {
      grace: { type: 'string', value: 'SECONDS', help: 'how long the old key keeps working: 0 (revoked at once) to 604800 (7 days)' },
      json: json('the admin API\'s answer to POST /admin/v1/keys/KEY_ID/rotate ({"key","apiKey","previous"})'),
    },
    operands: KEY_ID,
  },
  ({ values, operands: [id] }) => {
    if (values.grace === undefined)
      throw new UsageError(
        'keys rotate needs --grace SECONDS: how long the old key keeps working (0 revokes it at once; at most 604800, 7 days)',
      )
    const graceSeconds = /^\d+$/.test(values.grace) ? Number(values.grace) : Number.NaN
    return (run) =>
      withService(run, async (service, ctx) => {
        const rotated = await service.rotateKey(id!, { graceSeconds }, ctx)
        const { key, view, previous } = rotated
        const until =
          previous.revokedAt !== null ? 'is revoked now' : `keeps working until ${iso(previous.expiresAt)}, then answers 401 key_expired`
        print(
          values.json,
          rotatedKeyJson(rotated),
          `Rotated ${id} to ${view.id}; the old key ${until}. Both count against one quota (${countedQuotaId(view)}).\n` +
            `This is the only time the new key is shown; store it now:\n\n  ${key}\n\n`,
        )
      })
  },
)

const revoke = defineCommand(
  {
    path: 'keys revoke',
    synopsis: 'KEY_ID [--json]',
    description:
      'Revokes a key, and every other key of its rotation chain still in its grace period: running servers refuse them within KEY_REFRESH_MS. Idempotent: a revoked key keeps its first revocation time.',
    flags: { json: json('the admin API\'s answer to POST /admin/v1/keys/KEY_ID/revoke ({"apiKey","alreadyRevoked","alsoRevoked"})') },
    operands: KEY_ID,
  },
  ({ values, operands: [id] }) =>
    (run) =>
      withService(run, async (service, ctx) => {
        const revoked = await service.revokeKey(id!, ctx)
        print(values.json, revokedKeyJson(revoked), revocationText(revoked))
      }),
)

/** What a revocation did, plainly: which keys no longer work, and which key of the chain it left alone. */
function revocationText({ view, alreadyRevoked, alsoRevoked }: Revocation): string {
  const also = new Map(alsoRevoked.map((k) => [k.id, k]))
  // Revoking is idempotent: a key revoked before (by anyone) is the outcome asked for.
  const lines = [alreadyRevoked ? `Key ${view.id} was already revoked (at ${iso(view.revokedAt)}).` : `Revoked ${view.id}.`]
  if (also.size > 0) lines.push(`Also revoked ${[...also.keys()].join(', ')}: keys of its rotation chain still in their grace period.`)
  if (!alreadyRevoked || also.size > 0)
    lines.push(
      `Running servers refuse ${also.size > 0 ? 'them' : 'it'} at their next key-change poll (every KEY_REFRESH_MS, 1 s by default; at once on PostgreSQL).`,
    )
  // Its successor along the chain, past the keys revoked with it: the chain goes on with that one.
  let next = view.rotatedTo
  while (next !== null && also.has(next)) next = also.get(next)!.rotatedTo
  if (next !== null) lines.push(`Not revoked by this: ${next}, its successor in the rotation chain; revoke it too to stop the whole chain.`)
  return `${lines.join('\n')}\n`
}

const usage = defineCommand(
  {
    path: 'keys usage',
    synopsis: 'KEY_ID [--json]',
    description:
      "Shows the key's minute and day counts, remaining, resets, ban and last use, counting nothing: live from Redis (REDIS_URL), " +
      'or as of the last snapshot of the limiter state file (LIMITER_STATE_FILE).',
    flags: {
      json: json("the admin API's answer to GET /admin/v1/keys/KEY_ID/usage, with where the counts come from (source, snapshotAt)"),
    },
    operands: KEY_ID,
  },
  ({ values, operands: [id] }) =>
    async (run) => {
      const { config } = run
      const source = await openUsageSource(config)
      if (source === undefined)
        throw new CommandError(
          "keys usage: without REDIS_URL the counters live only in each server's memory and no LIMITER_STATE_FILE holds them; ask the admin API (GET /admin/v1/keys/KEY_ID/usage)",
        )
      try {
        await withService(
          run,
          async (service) => {
            const u = await service.keyUsage(id!).catch((error: unknown) => {
              if (error instanceof LimiterUnavailableError)
                throw new CommandError(`keys usage: Redis is unreachable at ${redactUrl(config.redisUrl ?? '')}; no counters to show`)
              throw error
            })
            const snapshotAt = source.snapshotAt === null ? null : new Date(source.snapshotAt).toISOString()
            const note =
              source.kind === 'redis'
                ? 'Live counters from Redis. Last use is as last flushed by the servers (every LAST_USED_FLUSH_MS).\n'
                : `Counters as of the state file's last snapshot (${snapshotAt ?? 'no snapshot yet'}; a running server writes it every LIMITER_SNAPSHOT_MS when something changed).\n`
            // The API's usage, and what only the CLI needs to say: how fresh the numbers are.
            const json = { ...usageJson(u), source: source.kind, ...(source.kind === 'state-file' ? { snapshotAt } : {}) }
            print(values.json, json, usageText(u, note))
          },
          source,
        )
      } finally {
        await source.limiter.close()
      }
    },
)

export const KEYS: CommandGroup = {
  name: 'keys',
  description: 'API keys: the same service as the admin API (/admin/v1/keys), the same rules and audit log (actor cli).',
  commands: { create, list, show, lookup, update, rotate, revoke, usage },
}
