import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Clock } from '../shared/clock.js'
import type { UsageRecorder } from './recorder.js'

/**
 * The onResponse hook that counts a request in usage history: only when the guard judged it by a
 * valid key (request.usageKeyId), with the limiter's verdict and the status actually sent. A
 * request without a key, or with an unknown, revoked or expired one, is in no key's history.
 */
export function countUsage(recorder: Pick<UsageRecorder, 'record'>, clock: Clock) {
  return (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const keyId = request.usageKeyId
    if (keyId !== null) recorder.record(keyId, request.limitOutcome ?? 'allowed', reply.statusCode, clock.now())
    done()
  }
}
