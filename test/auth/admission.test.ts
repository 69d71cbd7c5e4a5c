/**
 * The request's one admission (auth/admission.ts) as the handlers, usage history and the access
 * line read it: each accessor gives what its kind holds, and a route reading what its admission
 * does not hold gets an error (a 500 through the error handler), never an undefined credential.
 * Through HTTP, the guard's admissions are exercised by every keyed test (guard, scopes, usage,
 * conditional reads, GET /v1/rate_limit, the access log).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { FastifyRequest } from 'fastify'
import type { AdminTokenRecord } from '../../src/admin-tokens/admin-token-repository.js'
import {
  type Admission,
  adminTokenOf,
  apiKeyOf,
  countedKeyAdmission,
  type KeyUsage,
  type Limits,
  PUBLIC_ADMISSION,
  presentedOf,
  quotaReadOf,
} from '../../src/auth/admission.js'
import type { ApiKeyRecord } from '../../src/keys/api-key.js'
import type { LimitDecision, UsageSnapshot } from '../../src/limits/limiter.js'

const decision: LimitDecision = {
  allowed: true,
  now: 1_000,
  minute: { limit: 60, remaining: 59, resetAt: 60 },
  day: { limit: 1000, remaining: 999, resetAt: 86_400 },
  retryAfter: 0,
}
const key = { id: 'key_AAAAAAAAAAAAAAAA' } as ApiKeyRecord
const token = { id: 'adm_AAAAAAAAAAAAAAAA' } as AdminTokenRecord
const keyLimits: Limits = { identity: 'k:q', quota: { perMinute: 60, perDay: 1000 }, who: { keyId: key.id } }
const usage = { now: 1_000 } as UsageSnapshot

const keyed = (usage: KeyUsage, quotaRead?: { usage: UsageSnapshot; budget: LimitDecision }): Admission => ({
  kind: 'apiKey',
  key,
  limits: keyLimits,
  decision,
  usage,
  quotaRead,
})

const admissions: Record<string, Admission | null> = {
  none: null,
  public: PUBLIC_ADMISSION,
  anonymous: { kind: 'anonymous', decision, presented: { keyId: 'key_BBBBBBBBBBBBBBBB' } },
  apiKey: keyed('counted'),
  adminToken: { kind: 'adminToken', token, limits: { ...keyLimits, who: { adminTokenId: token.id } }, decision },
  failed: { kind: 'failed', presented: undefined },
}

const request = (admission: Admission | null) => ({ admission, method: 'GET', url: '/v1/somewhere' }) as FastifyRequest

test('apiKeyOf and adminTokenOf give the credential of their kind and refuse every other admission, naming the route', () => {
  for (const [name, admission] of Object.entries(admissions)) {
    if (name === 'apiKey') assert.equal(apiKeyOf(request(admission)), key)
    else assert.throws(() => apiKeyOf(request(admission)), /GET \/v1\/somewhere reached its handler without an API key/, name)
    if (name === 'adminToken') assert.equal(adminTokenOf(request(admission)), token)
    else assert.throws(() => adminTokenOf(request(admission)), /without an admin token/, name)
  }
})

test('quotaReadOf gives the key and the read the guard took, and refuses an admission without one', () => {
  const read = { usage, budget: decision }
  assert.deepEqual(quotaReadOf(request(keyed('uncounted', read))), { key, read })
  for (const admission of [keyed('counted'), admissions.public!, null])
    assert.throws(() => quotaReadOf(request(admission)), /without the guard’s quota read/)
})

test('the access line names whoever presented a secret storage knew, valid or not', () => {
  assert.deepEqual(Object.fromEntries(Object.entries(admissions).map(([name, admission]) => [name, presentedOf(request(admission))])), {
    none: undefined,
    public: undefined,
    anonymous: { keyId: 'key_BBBBBBBBBBBBBBBB' },
    apiKey: { keyId: key.id },
    adminToken: { adminTokenId: token.id },
    failed: undefined,
  })
})

test('usage history counts a valid key’s request unless it was left uncounted', () => {
  const counted = (admission: Admission | null) => countedKeyAdmission(request(admission)) !== undefined
  assert.deepEqual(
    [counted(keyed('counted')), counted(keyed('deferred')), counted(keyed('uncounted'))],
    [true, true, false],
    'a deferred read not settled (its count failed) is counted as the guard let it through',
  )
  for (const [name, admission] of Object.entries(admissions)) if (name !== 'apiKey') assert.equal(counted(admission), false, name)
})
