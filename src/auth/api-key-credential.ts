import type { FastifyRequest } from 'fastify'
import { bearerChallenge } from '../http/bearer.js'
import { settingsOf } from '../http/route-settings.js'
import { type ApiKeyRecord, limiterIdentity, partitionKey } from '../keys/api-key.js'
import type { KeyResolver } from '../keys/key-resolver.js'
import type { LastUsedRecorder } from '../keys/last-used.js'
import type { Clock } from '../shared/clock.js'
import { ApiError } from '../shared/errors.js'
import type { Scope } from '../shared/scopes.js'
import type { ApiKeyAdmission } from './admission.js'
import type { CredentialKind, Judged, Unauthenticated } from './credential.js'

export interface ApiKeyCredentialOptions {
  keys: KeyResolver
  /** Expiry is checked against it on every request. */
  clock: Clock
  lastUsed: Pick<LastUsedRecorder, 'touch'>
}

/** An expired key (also a rotated one past its grace period): 401 key_expired, naming when. */
type Expired = { problem: 'expired'; expiredAt: number }

const UNAUTHORIZED: Record<Unauthenticated['problem'], string> = {
  missing: 'Missing API key: send Authorization: Bearer <API key>',
  malformed: 'Malformed Authorization header: expected Bearer <API key>',
  invalid: 'Invalid or revoked API key',
}

/** An unknown or revoked key (the same words for both: a revoked key's id is only logged). */
const INVALID_KEY: Unauthenticated = { problem: 'invalid' }
const INVALID: Judged<ApiKeyRecord, Expired> = { refused: INVALID_KEY }

/**
 * API keys, the credential of every route but the admin API's (auth/guard.ts). A valid key is
 * limited by its plan, under its quota (`limiterIdentity`: its customer's, or its rotation chain's). An
 * expired key is 401 key_expired, checked against the clock on every request, so expiry needs no
 * cache invalidation. `false`: a key the resolver knows not to be valid (unknown or revoked).
 */
export function apiKeyCredential({
  keys,
  clock,
  lastUsed,
}: ApiKeyCredentialOptions): CredentialKind<ApiKeyRecord | false | undefined, ApiKeyRecord, Expired> {
  return {
    resolveCached: (secret) => keys.resolveCached(secret),
    mayExist: (secret) => keys.mayExist(secret),
    resolve: (secret) => keys.resolve(secret),
    judge(found) {
      if (!found) return INVALID
      const now = clock.now()
      if (found.revokedAt !== null) return { refused: INVALID_KEY, presented: { keyId: found.id } }
      if (found.expiresAt !== null && found.expiresAt <= now)
        return { refused: { problem: 'expired', expiredAt: found.expiresAt }, presented: { keyId: found.id } }
      lastUsed.touch(found.id, now)
      return { credential: found }
    },
    limitedAs: (key) => ({ identity: limiterIdentity(key), quota: key, who: { keyId: key.id }, partitionKey: partitionKey(key) }),
    admitted: (key, limits, decision, usage, quotaRead): ApiKeyAdmission => ({ kind: 'apiKey', key, limits, decision, usage, quotaRead }),
    // What a key may do (shared/scopes.ts): the route's `scope`. After the limiter, as GitHub does,
    // so a refused request counts like any other (a key cannot probe what it may do for free), and
    // before the body is read: nothing is parsed, nothing is done.
    authorize(request, key) {
      const scope = settingsOf(request).scope
      if (scope === undefined || key.scopes.includes(scope)) return undefined
      return insufficientScope(request, key, scope)
    },
    unauthorized(refused) {
      if (refused.problem === 'expired')
        return new ApiError('key_expired', `This API key expired at ${new Date(refused.expiredAt).toISOString()}`, {
          'www-authenticate': bearerChallenge('invalid_token'),
        })
      return new ApiError('unauthorized', UNAUTHORIZED[refused.problem], {
        'www-authenticate': bearerChallenge(refused.problem === 'missing' ? 'invalid_request' : 'invalid_token'),
      })
    },
  }
}

/**
 * The 403 of a request outside the key's scopes, with RFC 6750's challenge (section 3.1) naming the
 * scope needed; also a route's own, for a part of it that needs a scope the route does not (an
 * order event's type: GET /v1/events).
 */
export function insufficientScope(request: FastifyRequest, key: ApiKeyRecord, scope: Scope): ApiError {
  const route = `${request.method} ${(settingsOf(request).url ?? request.url).replace(/:(\w+)/g, '{$1}')}`
  return new ApiError(
    'insufficient_scope',
    `This API key lacks the scope ${scope} that ${route} needs; its scopes: ${key.scopes.join(' ')}`,
    { 'www-authenticate': `Bearer realm="animal-store", error="insufficient_scope", scope="${scope}"` },
  )
}
