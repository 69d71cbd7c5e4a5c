import { type Static, type TSchema, Type } from 'typebox'
import { NOT_BLANK } from '../http/validation.js'
import {
  ACTOR_TYPES,
  AUDIT_ACTIONS,
  AUDIT_KINDS,
  AUDIT_READ_ACTIONS,
  KEY_STATES,
  LIST_ORDERS,
  MAX_GRACE_SECONDS,
  MAX_METADATA_BYTES,
} from '../keys/administration.js'
import { HIDDEN_CHARACTERS_TEXT, NO_CONTROL_CHARACTERS } from '../shared/control-characters.js'
import { MAX_CUSTOM_LIMIT, PLAN_NAMES } from '../shared/plans.js'

/**
 * One TypeBox schema per shape of the admin API: validation, serialization, the admin OpenAPI
 * document and the handlers' types. Times are RFC 3339 (ISO 8601) strings in UTC; request bodies
 * and query strings are strict (unknown fields are 400, nothing is coerced).
 */

/** A reference to a shared schema (a component of the admin OpenAPI document), typed as the schema. */
export const ref = <T extends TSchema>(schema: T) => Type.Unsafe<Static<T>>({ $ref: `${String((schema as { $id?: string }).$id)}#` })

const time = (description: string) => Type.String({ format: 'date-time', description })
// anyOf rather than a type array: understood alike by OpenAPI 3.0-era tools and 3.1.
const nullableTime = (description: string) =>
  Type.Unsafe<string | null>({ anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }], description })
const nullableObject = (description: string) =>
  Type.Unsafe<Record<string, unknown> | null>({ anyOf: [{ type: 'object', additionalProperties: true }, { type: 'null' }], description })

export const KEY_ID_PATTERN = '^key_[0-9A-Za-z]{16}$'
const keyId = (description: string) => Type.String({ pattern: KEY_ID_PATTERN, description })

const plan = Type.Unsafe<(typeof PLAN_NAMES)[number]>({
  type: 'string',
  enum: [...PLAN_NAMES],
  description: 'The plan.',
  example: 'pro',
})
const keyName = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: NOT_BLANK,
  // A second pattern (JSON Schema allows one per schema), so that each refusal says what is wrong.
  allOf: [{ pattern: NO_CONTROL_CHARACTERS }],
  // Text-direction and invisible characters are refused by the key service, which names the one found.
  description: `A name for the operator (the customer, the app): 1 to 100 characters, not only white space, no control characters (U+0000–U+001F, U+007F–U+009F), no text-direction or invisible characters (${HIDDEN_CHARACTERS_TEXT}).`,
  example: 'Acme',
})
const limit = (window: string) =>
  Type.Integer({
    minimum: 1,
    maximum: MAX_CUSTOM_LIMIT,
    description: `Requests per ${window}: Enterprise only (required there, both limits); other plans have the plan's fixed limits.`,
  })
const metadata = Type.Unsafe<Record<string, unknown> | null>({
  ...nullableObject(
    `A JSON object for the operator (customer id, ticket, …), at most ${MAX_METADATA_BYTES} bytes as JSON; null clears it. Never interpreted by the service.`,
  ),
  example: { customer: 'c_42' },
})
// No `format` in request schemas: the validator has no formats; the handler parses the time.
const expiresAt = Type.Unsafe<string | null>({
  anyOf: [{ type: 'string' }, { type: 'null' }],
  description: 'When the key stops working (RFC 3339, e.g. 2027-01-01T00:00:00Z; must be in the future); null: never.',
  example: '2027-06-30T00:00:00Z',
})

export const AdminKeySchema = Type.Object(
  {
    id: Type.String({ description: 'Key id (key_…): the key is managed by it; never the key itself.' }),
    name: Type.String({ description: 'The name given at creation or by an update.' }),
    plan,
    perMinute: Type.Integer({ description: 'Requests per clock minute.' }),
    perDay: Type.Integer({ description: 'Requests per UTC day.' }),
    prefix: Type.String({ description: 'Display prefix (as_live_AbCd): enough to recognise the key, safe to show and log.' }),
    quotaId: Type.String({ description: 'The quota the key counts against: the id of the first key of its rotation chain.' }),
    state: Type.Unsafe<(typeof KEY_STATES)[number]>({
      type: 'string',
      enum: [...KEY_STATES],
      description: 'active; expired (past expiresAt, or a rotated key past its grace period); revoked.',
    }),
    createdAt: time('When the key was created.'),
    updatedAt: time('When the key was last changed.'),
    expiresAt: nullableTime('When the key stops (or stopped) working; null: never.'),
    revokedAt: nullableTime('When the key was revoked; null: not revoked.'),
    rotatedTo: Type.Union([Type.String(), Type.Null()], { description: 'The key this one was rotated to.' }),
    rotatedFrom: Type.Union([Type.String(), Type.Null()], { description: 'The key this one was rotated from.' }),
    metadata: nullableObject('The operator’s JSON object, or null.'),
    lastUsedAt: nullableTime('Last time a request authenticated with the key (recorded in batches: up to a few seconds late).'),
  },
  { $id: 'AdminKey', title: 'AdminKey', additionalProperties: false },
)
export type AdminKey = Static<typeof AdminKeySchema>

export const CreateKeyBody = Type.Object(
  {
    plan,
    name: keyName,
    perMinute: Type.Optional(limit('minute')),
    perDay: Type.Optional(limit('day')),
    expiresAt: Type.Optional(expiresAt),
    metadata: Type.Optional(metadata),
  },
  { $id: 'CreateKey', title: 'CreateKey', additionalProperties: false },
)
export type CreateKeyBody = Static<typeof CreateKeyBody>

export const UpdateKeyBody = Type.Object(
  {
    name: Type.Optional(keyName),
    plan: Type.Optional(plan),
    perMinute: Type.Optional(limit('minute')),
    perDay: Type.Optional(limit('day')),
    expiresAt: Type.Optional(expiresAt),
    metadata: Type.Optional(metadata),
  },
  {
    $id: 'UpdateKey',
    title: 'UpdateKey',
    additionalProperties: false,
    description: 'Only the fields sent change (at least one); null clears expiresAt or metadata.',
  },
)
export type UpdateKeyBody = Static<typeof UpdateKeyBody>

export const RotateKeyBody = Type.Object(
  {
    gracePeriodSeconds: Type.Integer({
      minimum: 0,
      maximum: MAX_GRACE_SECONDS,
      description: `How long the old key keeps working, in seconds: 0 revokes it at once; at most ${MAX_GRACE_SECONDS} (7 days).`,
      example: 86_400,
    }),
  },
  { $id: 'RotateKey', title: 'RotateKey', additionalProperties: false },
)
export type RotateKeyBody = Static<typeof RotateKeyBody>

const secret = Type.String({ description: 'The API key itself: shown this once, never again (only its SHA-256 is stored).' })

export const CreatedKeySchema = Type.Object(
  { key: secret, apiKey: ref(AdminKeySchema) },
  { $id: 'CreatedKey', title: 'CreatedKey', additionalProperties: false },
)

export const RotatedKeySchema = Type.Object(
  {
    key: secret,
    apiKey: ref(AdminKeySchema),
    previous: Type.Unsafe<AdminKey>({ $ref: 'AdminKey#', description: 'The rotated key: expiresAt is the end of its grace period.' }),
  },
  { $id: 'RotatedKey', title: 'RotatedKey', additionalProperties: false },
)

export const RevokedKeySchema = Type.Object(
  {
    apiKey: ref(AdminKeySchema),
    alreadyRevoked: Type.Boolean({ description: 'True when the key was revoked before (revokedAt keeps the first time).' }),
    alsoRevoked: Type.Array(ref(AdminKeySchema), {
      description:
        "The other keys of its rotation chain that were still in their grace period (rotated, still working), revoked with it, newest first; empty when there were none. The chain's current key is revoked only when it is the key named.",
    }),
  },
  { $id: 'RevokedKey', title: 'RevokedKey', additionalProperties: false },
)

export const KeyPageSchema = Type.Object(
  {
    data: Type.Array(ref(AdminKeySchema)),
    nextAfter: Type.Union([Type.String(), Type.Null()], {
      description: 'The `after` of the next page (also in the Link rel="next" header); null on the last page.',
    }),
  },
  { $id: 'KeyPage', title: 'KeyPage', additionalProperties: false },
)

const windowUsage = (window: string) =>
  Type.Object(
    {
      limit: Type.Integer({ description: `Requests allowed per ${window}.` }),
      used: Type.Integer({ description: 'Requests counted in the current window.' }),
      remaining: Type.Integer({ description: 'Requests left in it.' }),
      resetAt: time('When the window resets.'),
    },
    { additionalProperties: false, description: `The current ${window} window.` },
  )

export const KeyUsageSchema = Type.Object(
  {
    keyId: Type.String(),
    quotaId: Type.String({ description: 'The quota counted (shared by the keys of one rotation chain).' }),
    minute: windowUsage('minute'),
    day: windowUsage('UTC day'),
    ban: Type.Object(
      {
        active: Type.Boolean(),
        until: nullableTime('When the ban ends; null when not banned.'),
        level: Type.Integer({ description: 'Bans in a row (each doubles the next one); 0 after 24 hours without a ban.' }),
      },
      { additionalProperties: false },
    ),
    lastUsedAt: nullableTime('Last time a request authenticated with the key (batched: up to a few seconds late).'),
  },
  {
    $id: 'KeyUsage',
    title: 'KeyUsage',
    additionalProperties: false,
    description: 'The numbers the rate-limit headers show, read without counting a request.',
  },
)

export const AuditEntrySchema = Type.Object(
  {
    seq: Type.Integer({ description: 'Position in the log (ascending).' }),
    at: time('When the change was made.'),
    actor: Type.Object(
      {
        type: Type.Unsafe<(typeof ACTOR_TYPES)[number]>({ type: 'string', enum: [...ACTOR_TYPES] }),
        id: Type.String({
          description: 'The admin token id (adm_…), the OS user of the CLI, or `bootstrap` (system: the first key, created at start-up).',
        }),
      },
      { additionalProperties: false, description: 'Who made the change.' },
    ),
    action: Type.Unsafe<(typeof AUDIT_ACTIONS)[number]>({ type: 'string', enum: [...AUDIT_ACTIONS] }),
    keyId: Type.Union([Type.String(), Type.Null()], { description: 'The key changed, if any.' }),
    details: Type.Unsafe<Record<string, unknown>>({
      type: 'object',
      additionalProperties: true,
      description: 'What changed (fields, before and after), times as RFC 3339; never a key, hash or token.',
    }),
    requestId: Type.Union([Type.String(), Type.Null()], { description: 'X-Request-Id of the admin call; null from the CLI.' }),
  },
  { $id: 'AuditEntry', title: 'AuditEntry', additionalProperties: false },
)
export type AuditEntryJson = Static<typeof AuditEntrySchema>

export const AuditPageSchema = Type.Object(
  {
    data: Type.Array(ref(AuditEntrySchema)),
    nextAfter: Type.Union([Type.Integer(), Type.Null()], {
      description:
        'The `after` of the next page; null on the last page. Not null on a short (even empty) page whose walk stopped at its bound of entries examined: more may follow.',
    }),
  },
  { $id: 'AuditPage', title: 'AuditPage', additionalProperties: false },
)

export const ADMIN_LIST_LIMIT = { min: 1, max: 100, default: 20 } as const
const pageLimit = Type.Integer({
  minimum: ADMIN_LIST_LIMIT.min,
  maximum: ADMIN_LIST_LIMIT.max,
  default: ADMIN_LIST_LIMIT.default,
  description: 'Page size (1 to 100, default 20; never clamped).',
})

export const ListKeysQuery = Type.Object(
  {
    limit: Type.Optional(pageLimit),
    after: Type.Optional(keyId('Return keys with an id after this one (ascending id order); follow Link rel="next" rather than build it.')),
    plan: Type.Optional(plan),
    state: Type.Optional(
      Type.Unsafe<(typeof KEY_STATES)[number]>({ type: 'string', enum: [...KEY_STATES], description: 'Only keys in this state.' }),
    ),
    name: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'Only keys whose name contains this (case-insensitive).' }),
    ),
  },
  { additionalProperties: false },
)

const auditTime = (text: string, example: string) =>
  Type.String({ maxLength: 64, description: `${text} An RFC 3339 date-time (e.g. ${example}).`, example })

export const ListAuditQuery = Type.Object(
  {
    limit: Type.Optional(pageLimit),
    order: Type.Optional(
      Type.Unsafe<(typeof LIST_ORDERS)[number]>({
        type: 'string',
        enum: [...LIST_ORDERS],
        // No schema default: a listing without `order` keeps its links and its audit entry as before.
        description: '`asc`: oldest first (the default); `desc`: newest first.',
      }),
    ),
    // Bounded like the seqs themselves (JS numbers): a larger one would travel on as a bigint.
    after: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        description:
          'Cursor, in the listing order: entries after this seq (with `order=asc`, newer; with `order=desc`, older). Follow Link rel="next" rather than build it.',
      }),
    ),
    keyId: Type.Optional(keyId('Only entries about this key.')),
    action: Type.Optional(
      Type.Unsafe<(typeof AUDIT_ACTIONS)[number]>({
        type: 'string',
        enum: [...AUDIT_ACTIONS],
        description: 'Only entries of this action.',
      }),
    ),
    kind: Type.Optional(
      Type.Unsafe<(typeof AUDIT_KINDS)[number]>({
        type: 'string',
        enum: [...AUDIT_KINDS],
        description: `\`read\`: only the reads (${AUDIT_READ_ACTIONS.map((a) => `\`${a}\``).join(', ')}); \`change\`: every other action.`,
      }),
    ),
    actorType: Type.Optional(
      Type.Unsafe<(typeof ACTOR_TYPES)[number]>({
        type: 'string',
        enum: [...ACTOR_TYPES],
        description: 'Only entries by this kind of actor.',
      }),
    ),
    actor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description: 'Only entries by this actor id: an admin token id (adm_…), an OS user (CLI) or `bootstrap`.',
      }),
    ),
    from: Type.Optional(auditTime('Only entries at or after this instant.', '2030-01-01T09:00:00Z')),
    to: Type.Optional(auditTime('Only entries before this instant.', '2030-01-01T10:00:00Z')),
  },
  { additionalProperties: false },
)

const count = (description: string) => Type.Integer({ minimum: 0, description })
const usageCounts = {
  allowed: count('Requests the rate limiter let through (whatever their answer: 2xx, 4xx or 5xx).'),
  rateLimited: count('Requests refused 429 `rate_limited`.'),
  banned: count('Requests refused 429 `key_banned` (sent during a temporary ban).'),
}

export const UsageBucketSchema = Type.Object(
  {
    start: time('The first instant of the bucket (a UTC minute or hour).'),
    ...usageCounts,
    status2xx: count('Answers 200–299.'),
    status4xx: count('Answers 400–499 (the 429s included).'),
    status5xx: count('Answers 500–599.'),
  },
  {
    $id: 'UsageBucket',
    title: 'UsageBucket',
    additionalProperties: false,
    description: 'One bucket of usage history. allowed + rateLimited + banned = status2xx + status4xx + status5xx.',
  },
)
export type UsageBucketJson = Static<typeof UsageBucketSchema>

export const UsageHistorySchema = Type.Object(
  { data: Type.Array(ref(UsageBucketSchema), { description: 'Every bucket from `from` to `to`, oldest first; zeros included.' }) },
  { $id: 'UsageHistory', title: 'UsageHistory', additionalProperties: false },
)

export const TopUsageEntrySchema = Type.Object(
  {
    keyId: Type.String(),
    name: Type.String({ description: 'The key’s name.' }),
    plan,
    requests: count('allowed + rateLimited + banned.'),
    ...usageCounts,
  },
  { $id: 'TopUsageEntry', title: 'TopUsageEntry', additionalProperties: false },
)
export type TopUsageEntryJson = Static<typeof TopUsageEntrySchema>

export const TopUsageSchema = Type.Object(
  { data: Type.Array(ref(TopUsageEntrySchema), { description: 'Most first, then by keyId; keys with none of the measure are left out.' }) },
  { $id: 'TopUsage', title: 'TopUsage', additionalProperties: false },
)

// No `format` in request schemas: the validator has no formats; the handler parses the time.
const rangeEnd = (which: 'from' | 'to', text: string) =>
  Type.String({
    maxLength: 64,
    description: `${text} An RFC 3339 date-time (e.g. 2030-01-01T10:00:00Z), truncated to the start of its bucket.`,
    example: which === 'from' ? '2030-01-01T09:00:00Z' : '2030-01-01T10:00:00Z',
  })

export const UsageHistoryQuery = Type.Object(
  {
    granularity: Type.Optional(
      Type.Unsafe<'minute' | 'hour'>({
        type: 'string',
        enum: ['minute', 'hour'],
        default: 'minute',
        description: 'Bucket size (default minute).',
      }),
    ),
    scope: Type.Optional(
      Type.Unsafe<'key' | 'chain'>({
        type: 'string',
        enum: ['key', 'chain'],
        default: 'key',
        description:
          '`key` (default): this key only; `chain`: every key of its rotation chain summed (its quota, which follows the customer).',
      }),
    ),
    from: Type.Optional(rangeEnd('from', 'First bucket (inclusive); default: 60 minutes or 24 hours before `to`.')),
    to: Type.Optional(rangeEnd('to', 'End (exclusive); default: the start of the bucket after the current one.')),
  },
  { additionalProperties: false },
)

export const TOP_USAGE_LIMIT = { min: 1, max: 100, default: 10 } as const
export const TopUsageQuery = Type.Object(
  {
    from: Type.Optional(rangeEnd('from', 'First hour (inclusive); default: 24 hours before `to`.')),
    to: Type.Optional(rangeEnd('to', 'End hour (exclusive); default: the start of the next hour.')),
    by: Type.Optional(
      Type.Unsafe<'requests' | 'rateLimited'>({
        type: 'string',
        enum: ['requests', 'rateLimited'],
        default: 'requests',
        description: 'The measure: `requests` (all counted requests, default) or `rateLimited`.',
      }),
    ),
    limit: Type.Optional(
      Type.Integer({
        minimum: TOP_USAGE_LIMIT.min,
        maximum: TOP_USAGE_LIMIT.max,
        default: TOP_USAGE_LIMIT.default,
        description: 'Keys to list (1 to 100, default 10; never clamped).',
      }),
    ),
  },
  { additionalProperties: false },
)

export const KeyIdParams = Type.Object({ keyId: keyId('The key id (key_…).') })

export const ADMIN_SCHEMAS = [
  AdminKeySchema,
  CreateKeyBody,
  UpdateKeyBody,
  RotateKeyBody,
  CreatedKeySchema,
  RotatedKeySchema,
  RevokedKeySchema,
  KeyPageSchema,
  KeyUsageSchema,
  AuditEntrySchema,
  AuditPageSchema,
  UsageBucketSchema,
  UsageHistorySchema,
  TopUsageEntrySchema,
  TopUsageSchema,
]
