import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { ValidateFunction } from 'ajv'

/*
 * Fastify compiles every route's validators (Ajv) and response serializers (fast-json-stringify)
 * when the app is built. For this service that was about 1.1 s of the 2 s of CPU a server start
 * took (both listeners, ~50 operations, most with several response schemas), paid again by every
 * process that builds an app: each CLI command's, each cluster worker, each of the hundreds of
 * servers and apps a test run starts, though each of them serves a handful of operations. Here each
 * validator and serializer is compiled on its first use instead, from the same schema by the same
 * compiler, so what it accepts and writes is unchanged; the first request of an operation in a
 * process pays its compilation once (a few milliseconds). A schema that cannot compile would then
 * fail on its first request rather than at start: test/http/schemas-compile.test.ts compiles every
 * one of both listeners.
 */

/** The validators and serializers one app deferred, for a check that each of them compiles. */
export class DeferredCompilation {
  private readonly pending = new Set<() => unknown>()

  add(ready: () => unknown): void {
    this.pending.add(ready)
  }

  /** Compiles every one deferred; how many there were. */
  compileAll(): number {
    for (const ready of this.pending) ready()
    return this.pending.size
  }
}

/** A validator that compiles on its first call. */
export function validatorOnFirstUse(deferred: DeferredCompilation, compile: () => ValidateFunction): ValidateFunction {
  let validate: ValidateFunction | undefined
  const ready = () => {
    validate ??= compile()
    return validate
  }
  const check = ((data: unknown, cxt?: Parameters<ValidateFunction>[1]) => {
    const compiled = ready()
    const valid = compiled(data, cxt)
    check.errors = compiled.errors
    return valid
  }) as ValidateFunction
  // Fastify hands the parent object (which keywords that convert in place need) only to a
  // validator with a schemaEnv; every validator of http/validation.ts has one.
  Object.assign(check, { schemaEnv: true })
  deferred.add(ready)
  return check
}

type SerializerBuilder = ReturnType<typeof SerializerSelector>
type RouteSerializerCompiler = ReturnType<SerializerBuilder>

/** Fastify's own serializer builder (fast-json-stringify), each serializer compiled on its first call. */
export function serializersOnFirstUse(deferred: DeferredCompilation): SerializerBuilder {
  const build = SerializerSelector()
  return (externalSchemas, options) => {
    const compile = build(externalSchemas, options)
    return ((route: Parameters<RouteSerializerCompiler>[0]) => {
      let serialize: ((data: unknown) => string) | undefined
      const ready = () => {
        serialize ??= compile(route) as (data: unknown) => string
        return serialize
      }
      deferred.add(ready)
      return (data: unknown) => ready()(data)
    }) as RouteSerializerCompiler
  }
}
