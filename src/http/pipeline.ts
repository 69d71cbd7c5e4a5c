import type { FastifyReply, FastifyRequest } from 'fastify'

export type Done = (error?: Error) => void

declare module 'fastify' {
  interface FastifyInstance {
    /** The steps every request takes before routing (headers, shutdown, deprecation notice, authentication and limits). */
    admissionSteps: readonly Step[]
  }
}

/**
 * One decision about a request before its body is read (headers, authentication, limits, routing).
 * Callback-style: these run on every request, and a synchronous step costs no promise.
 */
export type Step = (request: FastifyRequest, reply: FastifyReply, done: Done) => void

/** Runs `steps` in order and calls `done` after the last one, or with the first error. */
export function runSteps(steps: readonly Step[], request: FastifyRequest, reply: FastifyReply, done: Done): void {
  let i = 0
  const next: Done = (error) => {
    if (error !== undefined || i === steps.length) done(error)
    else steps[i++]!(request, reply, next)
  }
  next()
}
