import type { FastifyInstance } from 'fastify'
import { ApiError } from '../shared/errors.js'
import type { Step } from './pipeline.js'

/** Requests that arrive while draining get a 503 in the Error shape (Fastify already sets Connection: close). */
export function refuseWhileClosing(app: FastifyInstance): Step {
  let closing = false
  app.addHook('preClose', (done) => {
    closing = true
    done()
  })
  return (_request, _reply, done) => {
    if (closing) done(new ApiError('service_unavailable', 'The server is shutting down; retry', { 'retry-after': 1 }))
    else done()
  }
}
