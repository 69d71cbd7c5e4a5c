import type { FastifyReply, FastifyRequest } from 'fastify'
import { countedKeyAdmission } from '../auth/admission.js'
import type { Clock } from '../shared/clock.js'
import type { UsageRecorder } from './recorder.js'

/**
 * The onResponse hook that counts a request in usage history: only when the guard judged it by a
 * valid key and did not leave it uncounted (its admission, auth/admission.ts), with the limiter's
 * verdict and the status actually sent. A request without a key, or with an unknown, revoked or
 * expired one, is in no key's history.
 */
export function countUsage(recorder: Pick<UsageRecorder, 'record'>, clock: Clock) {
  return (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const admission = countedKeyAdmission(request)
    if (admission !== undefined) {
      const { decision } = admission
      recorder.record(admission.key.id, decision.allowed ? 'allowed' : (decision.reason ?? 'rate_limited'), reply.statusCode, clock.now())
    }
    done()
  }
}
