import { type Static, Type } from 'typebox'
import { NOT_BLANK } from '../../http/validation.js'
import { KEY_STATES, MAX_METADATA_BYTES } from '../../keys/administration.js'
import { HIDDEN_CHARACTERS_TEXT, NO_CONTROL_CHARACTERS } from '../../shared/control-characters.js'
import { MAX_CUSTOM_LIMIT } from '../../shared/plans.js'
import { SCOPE_MEANINGS, SCOPES, type Scope } from '../../shared/scopes.js'
import { nullableObject, nullableTime, plan, time } from '../common/schemas.js'

/** The key as every key operation answers it, and the fields the operations that write one read. */

export const keyName = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: NOT_BLANK,
  // A second pattern (JSON Schema allows one per schema), so that each refusal says what is wrong.
  allOf: [{ pattern: NO_CONTROL_CHARACTERS }],
  // Text-direction and invisible characters are refused by the key service, which names the one found.
  description: `A name for the operator (the customer, the app): 1 to 100 characters, not only white space, no control characters (U+0000–U+001F, U+007F–U+009F), no text-direction or invisible characters (${HIDDEN_CHARACTERS_TEXT}).`,
  example: 'Acme',
})
export const limit = (window: string) =>
  Type.Integer({
    minimum: 1,
    maximum: MAX_CUSTOM_LIMIT,
    description: `Requests per ${window}: Enterprise only (required there, both limits); other plans have the plan's fixed limits.`,
  })
export const metadata = Type.Unsafe<Record<string, unknown> | null>({
  ...nullableObject(
    `A JSON object for the operator (customer id, ticket, …), at most ${MAX_METADATA_BYTES} bytes as JSON; null clears it. Never interpreted by the service.`,
  ),
  example: { customer: 'c_42' },
})
// No `format` in request schemas: the validator has no formats; the handler parses the time.
export const expiresAt = Type.Unsafe<string | null>({
  anyOf: [{ type: 'string' }, { type: 'null' }],
  description: 'When the key stops working (RFC 3339, e.g. 2027-01-01T00:00:00Z; must be in the future); null: never.',
  example: '2027-06-30T00:00:00Z',
})

const SCOPES_IN_WORDS = SCOPES.map((s) => `${s} (${SCOPE_MEANINGS[s]})`).join(', ')
const scope = Type.Unsafe<Scope>({ type: 'string', enum: [...SCOPES] })
/** What a key may do, as the create and update bodies send it. */
export const scopes = Type.Array(scope, {
  minItems: 1,
  uniqueItems: true,
  description: `What the key may do: one or more of ${SCOPES_IN_WORDS}; each once. A request outside them is 403 insufficient_scope (and counts against the quota). Default on creation: all four.`,
  example: ['pets:read', 'orders:read'],
})

export const AdminKeySchema = Type.Object(
  {
    id: Type.String({ description: 'Key id (key_…): the key is managed by it; never the key itself.' }),
    name: Type.String({ description: 'The name given at creation or by an update.' }),
    plan,
    perMinute: Type.Integer({ description: 'Requests per clock minute.' }),
    perDay: Type.Integer({ description: 'Requests per UTC day.' }),
    prefix: Type.String({ description: 'Display prefix (as_live_AbCd): enough to recognise the key, safe to show and log.' }),
    quotaId: Type.String({
      description:
        'The quota the key counts against: its customer’s id (cus_…) when it has one, shared by every key of the customer; else the id of the first key of its rotation chain (key_…), shared along the chain.',
    }),
    customerId: Type.Union([Type.String(), Type.Null()], {
      description: 'The customer the key belongs to (cus_…): its keys share one quota and its orders, and take its plan. null: none.',
    }),
    scopes: Type.Array(scope, {
      description: `What the key may do, in this order: ${SCOPES_IN_WORDS}. Keys created without scopes, and every key made before scopes existed, have all four.`,
    }),
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

export const secret = Type.String({ description: 'The API key itself: shown this once, never again (only its SHA-256 is stored).' })

export const tags = ['keys']
