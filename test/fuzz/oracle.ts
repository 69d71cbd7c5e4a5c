/**
 * The fuzzer's oracle: judges one HTTP response against an OpenAPI document the service serves
 * (GET /v1/openapi.json, or /admin/v1/openapi.json for the admin API) and the README's decided
 * behaviour. Everything operation-specific comes from the document: the documented statuses,
 * schemas and headers, which headers are conditional (their description says so), which
 * operations are deprecated or secured, which fields a 400 may name.
 *
 * OpenAPI validation uses openapi-backend (operation lookup, $ref dereferencing, status- and
 * header-based response validators) with its Ajv swapped for Ajv2020 through `customizeAjv`, so
 * the document's schemas are compiled with JSON Schema 2020-12 semantics, the dialect of
 * OpenAPI 3.1. int64 values are checked on the response's source text as well (a double cannot
 * tell 2^63-1 from 2^63).
 */

import type { Ajv, Options as AjvOptions, ValidateFunction } from 'ajv'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { isLosslessNumber, parse as parseLossless } from 'lossless-json'
import { OpenAPIBackend, SetMatchType } from 'openapi-backend'
import { ERROR_STATUS } from '../../src/shared/errors.js'
import { INT64_MAX, INT64_MIN } from '../../src/shared/int64.js'
import { SECRET_SHAPED } from './hostile-text.js'
import { ApiSurface, type FuzzOperation, type Schema } from './surface.js'
import type { WireResponse } from './transport.js'

/** An operationId of the document the oracle judges against. */
export type OperationId = string

/** A documented header whose description says it is conditional ("present only when…", "Present on a replay…") may be absent. */
const CONDITIONAL_HEADER = /\bpresent (only|on)\b/i

/** A 400 names the request part at fault: one of the operation's fields, or one of these. */
const REQUEST_PARTS = ['body', 'Host', 'Content-Length', 'path', 'query', 'header']

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/
/** An API key pasted as a request id is never echoed (README: keys are never logged). */
const KEY_LIKE = /as_(live|test|admin)_/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export interface Expectation {
  /** The operation the request line addresses, or undefined (unknown route, other method, malformed request). */
  operation: OperationId | undefined
  method: string
  /** True when the request is known to lack a valid key: a 2xx would be an authentication bypass. */
  knownUnauthenticated: boolean
  /** True when a valid key lacks the operation's scope: a 2xx would be a scope bypass, anything but 403 insufficient_scope (or 429) a wrong order. */
  lacksScope?: boolean
  /**
   * The X-Request-Id value the server sees, when the client sent exactly one (undefined: none or
   * several); a safe one must be echoed, anything else replaced by a UUID.
   */
  requestId: { sent: false } | { sent: true; value: string | undefined }
  /**
   * The request is well-formed HTTP/1.1 (every request node:http sends, and raw ones without a
   * deliberate defect): it must be answered by the app (X-Request-Id present), never by Node's parser.
   */
  wellFormed: boolean
  /** A path the document knows, with a method it does not document there: README says 405 with Allow. */
  methodNotAllowed?: boolean
  /** A path no route serves: README says 404 not_found. */
  unknownRoute?: boolean
}

export interface Verdict {
  problems: string[]
  /** A short label for statistics, e.g. "createPet 400 invalid_request". */
  label: string
}

type DocOperation = {
  operationId: string
  responses: Record<
    string,
    { headers?: Record<string, { schema?: unknown; description?: string }>; content?: Record<string, { schema?: unknown }> }
  >
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i

function ajv2020(opts: AjvOptions): Ajv {
  const ajv = new Ajv2020({ ...opts, strict: false, allErrors: true })
  ajv.addFormat('date-time', { type: 'string', validate: (v: string) => RFC3339.test(v) && !Number.isNaN(Date.parse(v)) })
  // OpenAPI 3.1 formats: int64 on the JSON.parse'd double (exactness is checked on the source text).
  ajv.addFormat('int64', { type: 'number', validate: (v: number) => Number.isInteger(v) && v >= -(2 ** 63) && v <= 2 ** 63 })
  ajv.addFormat('int32', { type: 'number', validate: (v: number) => Number.isInteger(v) && v >= -(2 ** 31) && v < 2 ** 31 })
  return ajv as unknown as Ajv
}

const oracles = new Map<string, Promise<Oracle>>()

export class Oracle {
  private readonly api: OpenAPIBackend
  private readonly errorValidator: ValidateFunction

  private constructor(
    readonly doc: any,
    readonly surface: ApiSurface,
    api: OpenAPIBackend,
  ) {
    this.api = api
    const ajv = ajv2020({})
    this.errorValidator = ajv.compile(doc.components.schemas.Error)
  }

  /**
   * The oracle of an OpenAPI document (normally the one the server serves). Compiling a document's
   * validators takes a second or more: an oracle is kept per document text and shared, as it
   * holds no state.
   */
  static create(doc: unknown, name = 'public'): Promise<Oracle> {
    const key = `${name}\n${JSON.stringify(doc)}`
    let oracle = oracles.get(key)
    if (oracle === undefined) {
      oracle = Oracle.compile(doc, name)
      oracles.set(key, oracle)
    }
    return oracle
  }

  private static async compile(doc: unknown, name: string): Promise<Oracle> {
    const surface = new ApiSurface(name, doc)
    // openapi-backend's own check of the document knows OpenAPI 3.0's top level, not 3.1's
    // `webhooks` (what the API sends, no operation of it to judge): it gets the document without them.
    const { webhooks: _sent, ...operations } = structuredClone(doc) as Record<string, unknown>
    const api = new OpenAPIBackend({
      definition: operations as never,
      apiRoot: surface.prefix || '/',
      strict: true,
      validate: true,
      quick: false,
      customizeAjv: (_original, opts) => ajv2020(opts as AjvOptions),
    })
    await api.init()
    return new Oracle(doc, surface, api)
  }

  private operation(id: OperationId): DocOperation {
    const op = this.api.router.getOperation(id) as unknown as DocOperation | undefined
    if (!op) throw new Error(`operation ${id} is not in the OpenAPI document`)
    return op
  }

  judge(exp: Expectation, res: WireResponse): Verdict {
    const problems: string[] = []
    const status = res.status
    const ct = res.headers['content-type']
    const bodyText = res.body.toString('utf8')
    const isHead = exp.method === 'HEAD'
    // Answers that went through the app carry X-Request-Id; Node's HTTP parser errors do not.
    const viaApp = res.headers['x-request-id'] !== undefined
    if (exp.wellFormed && !viaApp) problems.push('a well-formed request was answered outside the app (no X-Request-Id)')

    if (status >= 500) problems.push(`5xx answer: ${status}`)
    if (status < 200) problems.push(`non-final status ${status}`)

    // The body: valid UTF-8 JSON (any response that has one).
    let body: unknown
    let lossless: unknown
    const hasBody = res.body.length > 0
    if (hasBody) {
      if (!Buffer.from(bodyText, 'utf8').equals(res.body)) problems.push('response body is not valid UTF-8')
      if (!/^application\/json(;|$)/i.test(ct ?? '')) problems.push(`body with Content-Type ${JSON.stringify(ct)}, not application/json`)
      try {
        body = JSON.parse(bodyText)
        lossless = parseLossless(bodyText)
      } catch {
        problems.push(`response body is not JSON: ${JSON.stringify(bodyText.slice(0, 200))}`)
      }
    } else if (!isHead && status !== 304 && status !== 204) {
      problems.push(`empty response body (status ${status}); every answer must carry an Error, Pet or Pets body`)
    }
    // 304 Not Modified (a conditional read whose If-None-Match names the current ETag) and 204 No
    // Content (a deletion): no body (RFC 9110 sections 15.4.5 and 15.3.5).
    if ((status === 304 || status === 204) && hasBody) problems.push(`a ${status} with a body`)

    const isErrorBody = body !== null && typeof body === 'object' && !Array.isArray(body) && ('code' in body || 'error' in body)
    const code = isErrorBody ? String((body as { code?: unknown }).code) : undefined
    const where = viaApp ? (exp.operation ?? 'other') : 'outside-app'
    const label = `${where} ${exp.method} ${status}${code ? ' ' + code : ''}`

    // Any error answer: exact Error shape, status equal to the HTTP status, code from the closed list with that status.
    if (status >= 400 && (hasBody || !isHead)) this.checkErrorBody(body, status, problems)
    else if (isErrorBody) this.checkErrorBody(body, status, problems)

    if (exp.knownUnauthenticated && status >= 200 && status < 300) problems.push(`authentication bypass: ${status} without a valid key`)
    if (exp.lacksScope && status >= 200 && status < 300) problems.push(`scope bypass: ${status} for a key without the operation's scope`)
    // The scope is checked right after the limiter, before the body is read (docs/keys.md): 403, or 429 when limited.
    if (exp.lacksScope && exp.wellFormed && viaApp && !(status === 403 && code === 'insufficient_scope') && status !== 429)
      problems.push(`a key without the operation's scope answered ${status}${code ? ` ${code}` : ''}, not 403 insufficient_scope`)
    if (!exp.lacksScope && code === 'insufficient_scope') problems.push('insufficient_scope for a key that has the scope')
    const op = exp.operation === undefined ? undefined : this.surface.operation(exp.operation)
    // Authentication comes before everything the route does (README): a secured operation without a
    // valid credential is 401, or 429 when the client address is over its limit.
    if (op?.secured && exp.knownUnauthenticated && exp.wellFormed && viaApp && status !== 401 && status !== 429)
      problems.push(`${op.id} without a valid credential answered ${status}, not 401`)
    if (op !== undefined && viaApp && status === 400 && isErrorBody) this.checkNamesField(op, body as { message?: unknown }, problems)

    if (viaApp) {
      if (res.headers['x-content-type-options'] !== 'nosniff') problems.push('missing X-Content-Type-Options: nosniff')
      if (exp.operation !== undefined) {
        this.checkOperation(exp.operation, exp.method, res, body, lossless, problems)
        const id = res.headers['x-request-id']!
        if (
          exp.requestId.sent &&
          exp.requestId.value !== undefined &&
          SAFE_REQUEST_ID.test(exp.requestId.value) &&
          !KEY_LIKE.test(exp.requestId.value)
        ) {
          if (id !== exp.requestId.value)
            problems.push(`X-Request-Id ${JSON.stringify(id)} is not the safe id sent (${JSON.stringify(exp.requestId.value)})`)
        } else if (!UUID.test(id)) {
          problems.push(`X-Request-Id not echoed from a safe one must be a UUID: ${JSON.stringify(id)}`)
        }
        if (res.headers['cache-control'] !== 'no-store') problems.push('missing Cache-Control: no-store on an API response')
      } else if (status < 400) {
        problems.push(`${status} outside the documented operations`)
      }
    } else if (status < 400) {
      problems.push(`${status} answered outside the app`)
    }
    if (status === 405 && !res.headers.allow) problems.push('405 without an Allow header')
    // (Only for well-formed requests: a defect such as a missing Host may be refused first, with 400.)
    if (exp.unknownRoute && exp.wellFormed && viaApp && status !== 404 && status !== 429)
      problems.push(`unknown route answered ${status}, not 404 not_found`)
    if (exp.methodNotAllowed && exp.wellFormed && viaApp && status !== 405 && status !== 429) {
      problems.push(`${exp.method} on a known path answered ${status}, not 405 method_not_allowed`)
    }
    return { problems, label }
  }

  /**
   * A 400 says what is wrong: it names a field of the operation (parameter or body field), quotes
   * the unknown one sent ('NAME'), or names the request part at fault.
   */
  private checkNamesField(op: FuzzOperation, body: { message?: unknown }, problems: string[]): void {
    const message = String(body.message)
    const names = [...op.fieldNames, ...REQUEST_PARTS].map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    const named = new RegExp(`(^|[^A-Za-z0-9_-])(${names.join('|')})($|[^A-Za-z0-9_-])`).test(message) || /'[^']*'/.test(message)
    if (!named)
      problems.push(`400 from ${op.id} names no field (${[...op.fieldNames, ...REQUEST_PARTS].join(', ')}): ${JSON.stringify(message)}`)
  }

  private checkErrorBody(body: unknown, status: number, problems: string[]): void {
    if (!this.errorValidator(body)) {
      problems.push(`not an Error body: ${JSON.stringify(body)?.slice(0, 300)} (${JSON.stringify(this.errorValidator.errors)})`)
      return
    }
    const e = body as { code: keyof typeof ERROR_STATUS; status: number; message: string }
    if (e.status !== status) problems.push(`Error.status ${e.status} differs from the HTTP status ${status}`)
    // A key (or anything shaped like one) quoted by an error is cut to its display prefix (SECURITY.md).
    if (SECRET_SHAPED.test(e.message))
      problems.push(`error message holds more of a key than its display prefix: ${JSON.stringify(e.message)}`)
    if (ERROR_STATUS[e.code] !== status) problems.push(`code ${e.code} belongs to ${ERROR_STATUS[e.code]}, sent with ${status}`)
  }

  /**
   * Judges one answer of `operationId` against the document alone: a documented status, the body
   * against that status's schema (int64 fields exact), and its documented headers present and typed.
   */
  conformance(operationId: OperationId, method: string, res: WireResponse): string[] {
    const problems: string[] = []
    const text = res.body.toString('utf8')
    let body: unknown
    let lossless: unknown
    if (res.body.length > 0) {
      try {
        body = JSON.parse(text)
        lossless = parseLossless(text)
      } catch {
        problems.push(`response body is not JSON: ${JSON.stringify(text.slice(0, 200))}`)
      }
    }
    this.checkOperation(operationId, method, res, body, lossless, problems)
    return problems
  }

  private checkOperation(
    operationId: OperationId,
    method: string,
    res: WireResponse,
    body: unknown,
    lossless: unknown,
    problems: string[],
  ): void {
    const op = this.operation(operationId)
    const status = res.status
    const documented = op.responses[String(status)]
    if (!documented) {
      problems.push(`status ${status} is not documented for ${operationId} (documented: ${Object.keys(op.responses).join(', ')})`)
      return
    }
    // Body against the response schema.
    const schema = documented.content?.['application/json']?.schema
    if (method !== 'HEAD') {
      if (schema !== undefined) {
        const result = this.api.validator.validateResponse(body, operationId, status)
        if (!result.valid)
          problems.push(`${operationId} ${status} body does not match the OpenAPI schema: ${JSON.stringify(result.errors)}`)
        checkInt64Text(this.surface.deref(schema), lossless, '', problems)
      } else if (res.body.length > 0) problems.push(`${operationId} ${status} documents no body but one was sent`)
    } else if (res.body.length > 0) problems.push('HEAD response with a body')

    // Headers: every documented header present (except documented-conditional ones) and of its schema type.
    for (const [name, header] of Object.entries(documented.headers ?? {})) {
      if (res.headers[name.toLowerCase()] === undefined && !CONDITIONAL_HEADER.test(header.description ?? ''))
        problems.push(`documented header ${name} missing on ${operationId} ${status}`)
    }
    const headerResult = this.api.validator.validateResponseHeaders(res.headers, operationId, {
      statusCode: status,
      setMatchType: SetMatchType.Any,
    })
    if (!headerResult.valid)
      problems.push(`${operationId} ${status} headers do not match the OpenAPI document: ${JSON.stringify(headerResult.errors)}`)
    for (const [name] of res.rawHeaders) {
      if (
        [
          'content-length',
          'content-type',
          'x-request-id',
          'x-ratelimit-limit',
          'x-ratelimit-remaining',
          'x-ratelimit-reset',
          'retry-after',
          'location',
        ].includes(name)
      ) {
        if (res.rawHeaders.filter(([n]) => n === name).length > 1) problems.push(`header ${name} sent more than once`)
      }
    }

    // README specifics the document cannot express.
    if (status === 401 && !/^Bearer\b/.test(res.headers['www-authenticate'] ?? '')) problems.push('401 without WWW-Authenticate: Bearer')
    if (status === 429 && !/^[1-9]\d*$/.test(res.headers['retry-after'] ?? ''))
      problems.push(`429 with Retry-After ${JSON.stringify(res.headers['retry-after'])}`)
    // README, Idempotent creates: "409 idempotency_conflict with Retry-After: 1". (A 409 `conflict`
    // of the admin API is a key's state, which waiting does not change: no Retry-After.)
    if (status === 409 && (body as { code?: unknown } | undefined)?.code === 'idempotency_conflict' && res.headers['retry-after'] !== '1')
      problems.push(`409 with Retry-After ${JSON.stringify(res.headers['retry-after'])}`)
    if (documented.headers?.Location !== undefined && method !== 'HEAD') this.checkLocation(res.headers.location, lossless, problems)
    // README: every response of a deprecated operation carries Deprecation, Sunset and Link.
    if (this.surface.operation(operationId).deprecated) {
      for (const h of ['deprecation', 'sunset', 'link'])
        if (res.headers[h] === undefined) problems.push(`${operationId} ${status} without the ${h} header`)
    }
  }

  /**
   * A created resource's Location is the path of the document's GET operation for it, naming the
   * id of the body (or of the first object in it: {key, apiKey: {id}}).
   */
  private checkLocation(location: string | undefined, lossless: unknown, problems: string[]): void {
    const body = (lossless ?? {}) as Record<string, unknown>
    const nested = Object.values(body).find((v) => v !== null && typeof v === 'object' && 'id' in v) as Record<string, unknown> | undefined
    const id = body.id ?? nested?.id
    const getter = location === undefined ? undefined : this.surface.operationOf('GET', location)
    if (id === undefined || getter === undefined || location !== getter.template.replace(/\{[^}]+\}/, String(id)))
      problems.push(`Location ${JSON.stringify(location)} is not the path of the created resource (id ${String(id)})`)
  }
}

/** Every int64 of the response schema is a plain integer literal within int64 in the body's source text. */
function checkInt64Text(schema: Schema, value: unknown, at: string, problems: string[]): void {
  if (value === null || value === undefined) return
  if (schema.format === 'int64') {
    if (!isLosslessNumber(value)) return // the schema check reports a missing or mistyped field
    const text = String(value)
    if (!/^-?(0|[1-9]\d*)$/.test(text)) problems.push(`${at || 'body'} ${text} is not a plain integer literal`)
    else if (BigInt(text) < INT64_MIN || BigInt(text) > INT64_MAX) problems.push(`${at || 'body'} ${text} is outside int64`)
    return
  }
  for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])])
    checkInt64Text(branch, value, at, problems)
  if (Array.isArray(value) && schema.items)
    for (const [i, item] of value.entries()) checkInt64Text(schema.items, item, `${at}[${i}]`, problems)
  else if (typeof value === 'object' && !Array.isArray(value) && schema.properties) {
    for (const [name, sub] of Object.entries<Schema>(schema.properties))
      checkInt64Text(sub, (value as Record<string, unknown>)[name], at ? `${at}.${name}` : name, problems)
  }
}
