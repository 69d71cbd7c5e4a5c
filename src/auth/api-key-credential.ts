import type { FastifyRequest } from 'fastify'
import { settingsOf } from '../http/route-settings.js'
import { type ApiKeyRecord, limiterIdentity, partitionKey } from '../keys/api-key.js'
import type { KeyResolver } from '../keys/key-resolver.js'
import type { LastUsedRecorder } from '../keys/last-used.js'
import type { Clock } from '../shared/clock.js'
import { ApiError } from '../shared/errors.js'
import type { Scope } from '../shared/scopes.js'
import type { LimitOutcome } from '../usage/counts.js'
import { bearerChallenge } from './bearer.js'
import type { CredentialKind, Unauthenticated } from './credential.js'

declare module 'fastify' {
  interface FastifyRequest {
    apiKey: ApiKeyRecord | null
    /**
     * The id of the key the request presented, once storage knows that key, whether or not it was
     * let through (expired, revoked, over its limit): the access line names it.
     */
    presentedKeyId?: string
    /**
     * The valid key whose quota the limiter judged this request by, and its verdict (null without
     * one): usage history counts the request against it once the answer is sent (usage/count-hook.ts).
     */
    usageKeyId: string | null
    limitOutcome: LimitOutcome | null
  }
}

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
    admit(request, found) {
      if (!found) return { refused: { problem: 'invalid' } }
      request.presentedKeyId = found.id
      const now = clock.now()
      if (found.revokedAt !== null) return { refused: { problem: 'invalid' } }
      if (found.expiresAt !== null && found.expiresAt <= now) return { refused: { problem: 'expired', expiredAt: found.expiresAt } }
      lastUsed.touch(found.id, now)
      return { credential: found }
    },
    limitedAs: (key) => ({ identity: limiterIdentity(key), quota: key, who: { keyId: key.id }, partitionKey: partitionKey(key) }),
    decided(request, key, decision) {
      request.usageKeyId = key.id
      request.limitOutcome = decision.allowed ? 'allowed' : (decision.reason ?? 'rate_limited')
    },
    // What a key may do (shared/scopes.ts): the route's `scope`. After the limiter, as GitHub does,
    // so a refused request counts like any other (a key cannot probe what it may do for free), and
    // before the body is read: nothing is parsed, nothing is done.
    authorize(request, key) {
      const scope = settingsOf(request).scope
      if (scope === undefined || key.scopes.includes(scope)) return undefined
      return insufficientScope(request, key, scope)
    },
    accept(request, key) {
      request.apiKey = key
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

/** The 403 of a request outside the key's scopes, with RFC 6750's challenge (section 3.1) naming the scope needed. */
function insufficientScope(request: FastifyRequest, key: ApiKeyRecord, scope: Scope): ApiError {
  const route = `${request.method} ${(settingsOf(request).url ?? request.url).replace(/:(\w+)/g, '{$1}')}`
  return new ApiError(
    'insufficient_scope',
    `This API key lacks the scope ${scope} that ${route} needs; its scopes: ${key.scopes.join(' ')}`,
    { 'www-authenticate': `Bearer realm="animal-store", error="insufficient_scope", scope="${scope}"` },
  )
}
