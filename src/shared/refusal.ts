/**
 * How a service refuses a call, in one closed list: the admin API answers each kind with one error
 * code (`toApiError`, http/error-handler.ts), the CLI with one message and exit status (`report`,
 * cli.ts). A service throws nothing else for a call it refuses; anything else is a failure.
 */
export const REFUSAL_KINDS = [
  /** Bad input: `field` names it (400 `invalid_request`; the CLI names its flag and its --help). */
  'invalid',
  /** What the call names does not exist: `subject` says what (404 `not_found`). */
  'not_found',
  /** The resource's state does not allow the change: a revoked or rotated key, a token above the caller (409 `conflict`). */
  'conflict',
  /** The caller's role does not allow it (403 `forbidden_role`). */
  'forbidden',
  /** The order can no longer change: cancelled, completed or expired (409 `order_not_placed`). */
  'order_not_placed',
] as const
export type RefusalKind = (typeof REFUSAL_KINDS)[number]

/** What a call may name that does not exist, and its name in a message. */
export const SUBJECTS = {
  key: 'key',
  customer: 'customer',
  admin_token: 'admin token',
  order: 'order',
  webhook_endpoint: 'webhook endpoint',
  webhook_delivery: 'webhook delivery',
} as const
export type Subject = keyof typeof SUBJECTS

/**
 * How a message names a field: the API's name is the field itself (`perMinute`), the CLI's is its
 * flag (`--per-minute`). A message is written once, as a function of it, so that neither front end
 * rewrites the other's words.
 */
export type FieldName = (field: string) => string
export type Words = string | ((name: FieldName) => string)

const asIs: FieldName = (field) => field

/** A refused call. `message` is in the API's words; `phrase` gives it in another front end's (the CLI's flags). */
export class Refusal extends Error {
  readonly field: string | undefined
  readonly subject: { type: Subject; id?: string } | undefined
  private readonly words: Words

  constructor(
    readonly kind: RefusalKind,
    words: Words,
    about: { field?: string; subject?: { type: Subject; id?: string } } = {},
  ) {
    super(typeof words === 'string' ? words : words(asIs))
    this.name = 'Refusal'
    this.words = words
    this.field = about.field
    this.subject = about.subject
  }

  /** The message with each field named by `name`. */
  phrase(name: FieldName): string {
    return typeof this.words === 'string' ? this.words : this.words(name)
  }
}

/** Bad input: the message names `field` (through `name`, so that each front end names it its way). */
export const invalid = (field: string, words: (name: FieldName) => string): Refusal => new Refusal('invalid', words, { field })

/** No `type` with this id (`No key with id key_…`); `words` when the message says more, or names no id. */
export const notFound = (type: Subject, id: string | undefined, words?: string): Refusal =>
  new Refusal('not_found', words ?? `No ${SUBJECTS[type]} with id ${id}`, { subject: id === undefined ? { type } : { type, id } })

export const conflict = (message: string): Refusal => new Refusal('conflict', message)
