import { type Static, Type } from 'typebox'
import { ACTOR_TYPES, AUDIT_ACTIONS, AUDIT_READ_ACTIONS } from '../../changes/audit-actions.js'
import { AUDIT_KINDS, LIST_ORDERS } from '../../changes/audit-log.js'
import { keyId, pageLimit, ref, time } from '../common/schemas.js'

/** The audit log's shapes: an entry, a page of them, and the listing's filters. */

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
        name: Type.Optional(
          Type.String({
            description:
              "An admin token's name (as given to `admin-tokens create --name`), beside its id; absent for the CLI and the system.",
          }),
        ),
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
