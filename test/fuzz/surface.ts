/**
 * An API as the fuzzer sees it: the operations of one OpenAPI document (the public one at
 * /v1/openapi.json, the admin one at /admin/v1/openapi.json) with the paths they are served at,
 * so that requests are generated and answers judged from the document, not from lists of
 * operation ids kept by hand.
 */

/** A JSON Schema as the documents write it (OpenAPI 3.1), with local `$ref`s resolved. */
export type Schema = Record<string, any>

export interface Parameter {
  name: string
  in: 'path' | 'query' | 'header'
  required: boolean
  schema: Schema
  /** What the document says of it (the parameter's description, else its schema's). */
  description: string
}

export interface FuzzOperation {
  id: string
  /** Upper-case, as on the wire. */
  method: string
  /** The full path template, prefix included: /v1/pets/{petId}. */
  template: string
  params: Parameter[]
  /** The JSON request body's schema, when the operation takes one. */
  body: Schema | undefined
  deprecated: boolean
  /** The operation needs a credential (its own or the document's security requirement). */
  secured: boolean
  /** The scopes its security requirement lists (a scoped API key's operations: issue 31), empty when none. */
  scopes: string[]
  /** The names a 400 may give: its parameters and body fields, and any field of the document's schemas (such as an id sent that must not be). */
  fieldNames: string[]
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']

/** The raw (not yet percent-decoded) path matches the template: a parameter is one segment, maybe empty, as Fastify's router takes it. */
const templatePattern = (template: string) =>
  new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/?#]*')}$`)

export class ApiSurface {
  /** Where the document says it is served: its first server's (relative) URL, e.g. /v1. */
  readonly prefix: string
  readonly operations: FuzzOperation[]
  private readonly patterns: Array<{ template: string; pattern: RegExp }>

  constructor(
    readonly name: string,
    readonly doc: any,
  ) {
    const server = String(doc.servers?.[0]?.url ?? '')
    this.prefix = server.startsWith('/') ? server.replace(/\/$/, '') : ''
    this.operations = []
    // (Not the Error schema's: "status" or "message" in a message names nothing.)
    const schemaFields = Object.entries<any>(doc.components?.schemas ?? {})
      .filter(([name]) => name !== 'Error')
      .flatMap(([, schema]) => Object.keys(schema.properties ?? {}))
    for (const [path, item] of Object.entries<any>(doc.paths ?? {})) {
      for (const method of HTTP_METHODS) {
        const op = item[method]
        if (op === undefined) continue
        const params: Parameter[] = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: any) => {
          const param = this.deref(p)
          const schema = this.deref(param.schema ?? {})
          const description = String(param.description ?? schema.description ?? '')
          return { name: param.name, in: param.in, required: param.required === true, schema, description }
        })
        const bodySchema = op.requestBody ? this.deref(this.deref(op.requestBody).content?.['application/json']?.schema) : undefined
        this.operations.push({
          id: op.operationId,
          method: method.toUpperCase(),
          template: this.prefix + path,
          params,
          body: bodySchema,
          deprecated: op.deprecated === true,
          secured: (op.security ?? doc.security ?? []).length > 0,
          scopes: ((op.security ?? doc.security ?? []) as Array<Record<string, string[]>>).flatMap((requirement) =>
            Object.values(requirement).flat(),
          ),
          fieldNames: [...new Set([...params.map((p) => p.name), ...Object.keys(bodySchema?.properties ?? {}), ...schemaFields])],
        })
      }
    }
    this.patterns = [...new Set(this.operations.map((op) => op.template))].map((template) => ({
      template,
      pattern: templatePattern(template),
    }))
  }

  operation(id: string): FuzzOperation {
    const op = this.operations.find((o) => o.id === id)
    if (op === undefined) throw new Error(`operation ${id} is not in the ${this.name} document`)
    return op
  }

  /** The operations that document this request header (e.g. Idempotency-Key). */
  operationsWithHeader(name: string): FuzzOperation[] {
    return this.operations.filter((op) => op.params.some((p) => p.in === 'header' && p.name.toLowerCase() === name.toLowerCase()))
  }

  /** The operation a request line addresses (raw path, before decoding); HEAD is served by GET. */
  operationOf(method: string, path: string): FuzzOperation | undefined {
    const wanted = method === 'HEAD' ? 'GET' : method
    // A literal segment wins over a parameter (as in the router): the most literal template first.
    const candidates = this.operations.filter((op) => op.method === wanted && this.patternOf(op.template).test(path))
    return candidates.sort((a, b) => literalLength(b.template) - literalLength(a.template))[0]
  }

  private patternOf(template: string): RegExp {
    return this.patterns.find((p) => p.template === template)!.pattern
  }

  /** Some operation serves this path (with some method). */
  isKnownPath(path: string): boolean {
    return this.patterns.some((p) => p.pattern.test(path))
  }

  /** The document's path templates, prefix included. */
  get templates(): string[] {
    return this.patterns.map((p) => p.template)
  }

  /** Resolves local references (#/components/...), recursively. */
  deref(schema: any, seen: ReadonlySet<string> = new Set()): any {
    if (Array.isArray(schema)) return schema.map((s) => this.deref(s, seen))
    if (schema === null || typeof schema !== 'object') return schema
    if (typeof schema.$ref === 'string') {
      const ref: string = schema.$ref
      if (seen.has(ref)) return {}
      const target = ref
        .replace(/^#\//, '')
        .split('/')
        .reduce((node: any, key) => node?.[key], this.doc)
      if (target === undefined) throw new Error(`unresolved $ref ${ref} in the ${this.name} document`)
      const { $ref: _ref, ...rest } = schema
      return { ...this.deref(target, new Set([...seen, ref])), ...this.deref(rest, seen) }
    }
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(schema)) out[k] = k === 'enum' || k === 'const' || k === 'examples' ? v : this.deref(v, seen)
    return out
  }
}

const literalLength = (template: string) => template.replace(/\{[^}]+\}/g, '').length
