import { type Static, Type } from 'typebox'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ApiError } from '../../shared/errors.js'
import { displayPrefix } from '../../shared/key-redaction.js'
import { ADMIN_AUTH, type AdminApp, type AdminRoutesOptions, changeContext, errorResponses } from '../common/routes.js'
import { ADMIN_LIST_LIMIT, keyId, ref } from '../common/schemas.js'
import { KeyPageSchema } from './list.js'
import { AdminKeySchema, tags } from './schemas.js'
import { keyJson, keyPageJson } from './views.js'

/** A display prefix (`as_live_AbCd`), or more of a key than that (a key cut short in a log): matched on its display prefix. */
const PREFIX_PATTERN = '^as_(live|test)_[0-9A-Za-z]{4,38}$'

export const LookupKeyBody = Type.Object(
  {
    // No pattern: a malformed key is simply no key (404), and no refusal can quote any of it.
    key: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'A whole key (`as_live_…`, `as_test_…`), found by its hash; never stored, logged or written to the audit log.',
      }),
    ),
    prefix: Type.Optional(
      Type.String({
        pattern: PREFIX_PATTERN,
        description:
          'A display prefix (`as_live_` or `as_test_` and 4 characters), as the access log, the key list and redacted text show it; more characters are allowed and ignored (only the display prefix is stored).',
        example: 'as_live_AbCd',
      }),
    ),
    // No default (pageLimit's would be applied to a key's lookup too, which takes none).
    limit: Type.Optional(
      Type.Integer({
        minimum: ADMIN_LIST_LIMIT.min,
        maximum: ADMIN_LIST_LIMIT.max,
        description: 'With `prefix`: page size (1 to 100, default 20).',
      }),
    ),
    after: Type.Optional(keyId('With `prefix`: keys with an id after this one (the `nextAfter` of the previous answer).')),
  },
  {
    $id: 'LookupKey',
    title: 'LookupKey',
    additionalProperties: false,
    description: 'Exactly one of `key` and `prefix`; `limit` and `after` page the keys of a prefix.',
  },
)
export type LookupKeyBody = Static<typeof LookupKeyBody>

/**
 * POST /keys/lookup (lookupKey): which key is this secret, or this prefix? The first question
 * when a key turns up in a repository or a log. A POST so that the secret travels in the body,
 * which no access log, proxy log or browser history keeps, never in the URL. It changes nothing:
 * `adminRead` says so to whatever counts admin changes.
 */
export function lookupKey(app: AdminApp, { admin }: AdminRoutesOptions): void {
  app.post(
    '/keys/lookup',
    {
      config: { ...ADMIN_AUTH, adminRead: true },
      schema: {
        operationId: 'lookupKey',
        summary: 'Find a key by its secret or its prefix',
        description:
          'With `key`: the key whose secret this is, in any state (active, expired, revoked, rotated away from), found by the SHA-256 the service stores; 404 when none is. ' +
          'The secret is in no log and no answer, and its audit entry (`key.lookup`, a read) names the key found, not the secret. ' +
          'With `prefix`: the keys with that display prefix, as a page of the key list (ascending id, `limit` 1 to 100, `nextAfter`); a prefix is shared by about one key in 15 million, so usually one. ' +
          'Revoke what you find with `POST /keys/{keyId}/revoke`.',
        tags,
        body: ref(LookupKeyBody),
        response: {
          200: {
            description: 'The key (`key`), or a page of keys (`prefix`).',
            anyOf: [ref(AdminKeySchema), ref(KeyPageSchema)],
            headers: rateLimitHeaderDocs,
          },
          ...errorResponses(400, 401, 404, 413, 415, 429, 500, 503),
        },
      },
    },
    async (request) => {
      const { key, prefix, limit, after } = request.body
      if ((key === undefined) === (prefix === undefined)) {
        throw new ApiError(
          'invalid_request',
          key === undefined ? 'key or prefix is required (one of them)' : 'prefix: send key or prefix, not both',
        )
      }
      if (key !== undefined) {
        if (limit !== undefined || after !== undefined)
          throw new ApiError('invalid_request', `${limit !== undefined ? 'limit' : 'after'}: only with prefix`)
        return keyJson(await admin.lookupKey(key, changeContext(request)))
      }
      const query = { prefix: displayPrefix(prefix!), limit: limit ?? ADMIN_LIST_LIMIT.default, after }
      return keyPageJson(await admin.listKeys(query, changeContext(request)))
    },
  )
}
