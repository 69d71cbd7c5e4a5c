/**
 * The HTTP fuzzer's engine and its properties, shared by the CI test (test/fuzz/http-fuzz.test.ts)
 * and the long run (test/fuzz/long-run.mjs): turns generated cases into bytes on the wire to one of the
 * listeners of a FuzzServer (server.ts), and judges every answer with the oracle of that
 * listener's OpenAPI document (plus README rules) and with the listener's observer.
 */
import fc from 'fast-check'
import { isLosslessNumber, parse as parseLossless } from 'lossless-json'
import { GET_PET_DEPRECATION } from '../../src/api/pets/get.js'
import {
  type AbuseCase,
  applyMutation,
  authChoice,
  requestIdChoice,
  type ValidNewPet,
  validNewPet,
  WELL_FORMED_DEFECTS,
} from './arbitraries.js'
import {
  authHeaders,
  clientAddress,
  type Endpoint,
  type FuzzStats,
  READ_ONLY_SCOPES,
  REQUEST_TIMEOUT_MS,
  type SentRequest,
} from './endpoint.js'
import { hostileCaseFor, hostileProblems } from './hostile-cases.js'
import { IDEMPOTENCY_PROPERTY } from './idempotency.js'
import type { Expectation } from './oracle.js'
import { abuseCaseFor, deprecatedPaths, KNOWN_ID, validCaseFor } from './requests.js'
import type { FuzzServer } from './server.js'
import { STORE_PROPERTY } from './store.js'
import { sendHttp, sendRaw, TransportError, type WireResponse } from './transport.js'

export { clientAddress, FuzzStats, REQUEST_TIMEOUT_MS } from './endpoint.js'
export { FuzzServer, type FuzzServerOptions, type Keys } from './server.js'

const decodes = (path: string) => {
  try {
    decodeURIComponent(path)
    return true
  } catch {
    return false
  }
}

const HEADER_VALUE_OK = /^[\t\x20-\x7e\x80-\xff]*$/
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

interface WireRequest {
  transport: 'http' | 'http-chunked' | 'raw'
  method: string
  target: string
  headers: Array<[string, string | Buffer]>
  body: Buffer | undefined
  defect: AbuseCase['defect']
  localAddress: string
}

function toRawBytes(req: WireRequest, port: number): { data: Buffer; endAfterWrite: boolean } {
  const lines: Buffer[] = []
  const push = (s: string | Buffer) => lines.push(typeof s === 'string' ? Buffer.from(s, 'latin1') : s)
  const eol = req.defect === 'bare-lf' ? '\n' : '\r\n'
  const method = req.defect === 'lowercase-method' ? req.method.toLowerCase() : req.method
  const target = req.defect === 'absolute-form' ? `http://127.0.0.1:${port}${req.target}` : req.target
  const version = req.defect === 'http10' ? 'HTTP/1.0' : req.defect === 'http2-version' ? 'HTTP/2.0' : 'HTTP/1.1'
  push(`${method} ${target} ${version}${eol}`)
  if (req.defect !== 'no-host') push(`Host: 127.0.0.1:${port}${eol}`)
  if (req.defect === 'dup-host') push(`Host: evil.example${eol}`)
  for (const [name, value] of req.headers) {
    push(`${req.defect === 'header-space-before-colon' ? name + ' ' : name}: `)
    push(value)
    push(eol)
  }
  if (req.defect === 'header-ctl-byte') push(`X-Ctl: a\x01b${eol}`)
  if (req.defect === 'header-obs-fold') push(`X-Fold: a${eol} folded${eol}`)
  if (req.defect === 'header-utf8-value') push(Buffer.concat([Buffer.from('X-Utf8: '), Buffer.from('é€😀', 'utf8'), Buffer.from(eol)]))
  if (req.defect === 'expect-unknown') push(`Expect: fancy${eol}`)
  if (req.defect === 'many-headers') for (let i = 0; i < 150; i++) push(`X-H${i}: ${i}${eol}`)
  if (req.defect === 'dup-content-type') push(`Content-Type: text/plain${eol}`)
  const body = req.body ?? Buffer.alloc(0)
  let payload = body
  let endAfterWrite = false
  const hasBody = req.body !== undefined
  switch (req.defect) {
    case 'cl-short':
      if (hasBody) push(`Content-Length: ${Math.floor(body.length / 2)}${eol}`)
      break
    case 'cl-long-eof':
      push(`Content-Length: ${body.length + 10}${eol}`)
      endAfterWrite = true
      break
    case 'cl-garbage':
      push(`Content-Length: 12abc${eol}`)
      break
    case 'cl-negative':
      push(`Content-Length: -1${eol}`)
      break
    case 'cl-dup-conflict':
      push(`Content-Length: ${body.length}${eol}Content-Length: ${body.length + 1}${eol}`)
      break
    case 'cl-dup-same':
      push(`Content-Length: ${body.length}${eol}Content-Length: ${body.length}${eol}`)
      break
    case 'cl-and-chunked':
      push(`Content-Length: ${body.length}${eol}Transfer-Encoding: chunked${eol}`)
      payload = Buffer.concat([Buffer.from(body.length.toString(16) + '\r\n'), body, Buffer.from('\r\n0\r\n\r\n')])
      break
    case 'chunked':
      push(`Transfer-Encoding: chunked${eol}`)
      payload =
        body.length === 0
          ? Buffer.from('0\r\n\r\n')
          : Buffer.concat([Buffer.from(body.length.toString(16) + '\r\n'), body, Buffer.from('\r\n0\r\n\r\n')])
      break
    case 'chunked-bad':
      push(`Transfer-Encoding: chunked${eol}`)
      payload = Buffer.concat([Buffer.from('zz\r\n'), body, Buffer.from('\r\n0\r\n\r\n')])
      break
    default:
      if (hasBody || req.method === 'POST') push(`Content-Length: ${body.length}${eol}`)
  }
  push(`Connection: close${eol}${eol}`)
  return { data: Buffer.concat([...lines, payload]), endAfterWrite }
}

export interface CaseOutcome {
  response: WireResponse
  expectation: Expectation
}

/** Sends one case (`burst` times) to the endpoint and judges every answer; fails (or records, in collect mode) on any problem. */
export async function runAbuseCase(server: FuzzServer, endpoint: Endpoint, c: AbuseCase, stats: FuzzStats): Promise<CaseOutcome> {
  if (c.advanceMs > 0) server.clock.advance(c.advanceMs)
  let outcome = await sendAbuseCase(endpoint, c, stats)
  for (let i = 1; i < c.burst; i++) outcome = await sendAbuseCase(endpoint, c, stats)
  const leaked = server.takeLeakedLogLines()
  if (leaked.length > 0)
    stats.fail(
      `a log line holds more of a key than its display prefix (this case's or the previous one's):\n  ${leaked.slice(0, 3).join('\n  ')}` +
        `\n  request: ${c.method} ${(c.path + c.query).slice(0, 200)}`,
    )
  return outcome
}

/**
 * `<known N>` -> the Nth id the endpoint handed out of the kind the path names (modulo how many),
 * or 1 before any. Animals and orders have integer ids, keys `key_…` ids, customers `cus_…` ids, admin
 * tokens `adm_…` ids, webhook endpoints `we_…` ids, their deliveries `dlv_…` ids: after `/pets/` or `/orders/`,
 * `/keys/`, `/customers/`, `/admin-tokens/`, `/webhook-endpoints/`, `/deliveries/` only such ids stand (another kind would
 * make the path a 400 for its parameter instead of the case the fuzzer meant, e.g. a NUL in the query).
 */
const ID_KINDS: Array<[RegExp, RegExp]> = [
  [/\/(pets|orders)\/$/, /^\d+$/],
  [/\/keys\/$/, /^key_/],
  [/\/customers\/$/, /^cus_/],
  [/\/admin-tokens\/$/, /^adm_/],
  [/\/webhook-endpoints\/$/, /^we_/],
  [/\/deliveries\/$/, /^dlv_/],
]
const resolveKnown = (endpoint: Endpoint, text: string) =>
  text.replace(KNOWN_ID, (_, n: string, offset: number) => {
    const kind = ID_KINDS.find(([path]) => path.test(text.slice(0, offset)))?.[1]
    const ids = kind === undefined ? endpoint.knownIds : endpoint.knownIds.filter((id) => kind.test(id))
    return pctSegment(ids[Number(n) % Math.max(ids.length, 1)] ?? '1')
  })
const pctSegment = (id: string) => encodeURIComponent(id)

async function sendAbuseCase(endpoint: Endpoint, c: AbuseCase, stats: FuzzStats): Promise<CaseOutcome> {
  const { oracle } = endpoint
  const surface = oracle.surface
  const headers: Array<[string, string | Buffer]> = [...authHeaders(c.auth, endpoint.credentials)]
  let requestIdSeen: Expectation['requestId'] = { sent: false }
  switch (c.requestId.kind) {
    case 'one':
      headers.push(['x-request-id', c.requestId.value])
      // Node trims optional whitespace around a header value.
      requestIdSeen = { sent: true, value: c.requestId.value.replace(/^[ \t]+|[ \t]+$/g, '') }
      break
    case 'two':
      headers.push(['x-request-id', c.requestId.a], ['x-request-id', c.requestId.b])
      requestIdSeen = { sent: true, value: undefined }
      break
    case 'bytes':
      headers.push(['x-request-id', Buffer.from([0x61, 0xff, 0xfe, 0x62])])
      requestIdSeen = { sent: true, value: undefined }
      break
  }
  if (c.contentType !== null) headers.push(['content-type', c.contentType])
  for (const h of c.headers) headers.push(h)
  for (const h of c.extra) headers.push(h)
  const body = c.body ? applyMutation(resolveKnown(endpoint, c.body.text), c.body.mutation) : undefined
  const path = resolveKnown(endpoint, c.path)
  const query = resolveKnown(endpoint, c.query)

  // node:http cannot send every header; such cases go over a raw socket.
  const httpSendable =
    headers.every(([n, v]) => TOKEN.test(n) && typeof v === 'string' && HEADER_VALUE_OK.test(v)) &&
    /^[\x21-\x7e]+$/.test(path + query) &&
    !headers.some(([n]) => n === 'x-request-id' && c.requestId.kind === 'two')
  const headerSize = headers.reduce((n, [k, v]) => n + k.length + v.length + 4, 0)
  // Node's parser answers oversized headers itself, with a body even to a HEAD it could not parse;
  // node:http then reports "data after the response": read such answers from a raw socket.
  const transport = c.transport !== 'raw' && (!httpSendable || (c.method === 'HEAD' && headerSize > 6000)) ? 'raw' : c.transport
  const defect = transport === 'raw' ? c.defect : 'none'
  const localAddress = clientAddress(c.client)
  const target = path + query
  const wire: WireRequest = { transport, method: c.method, target, headers, body, defect, localAddress }

  // A raw request may be malformed on purpose (or by its random bytes): only then may Node's parser answer.
  const headerBytesOk = headers.every(([n, v]) => TOKEN.test(n) && HEADER_VALUE_OK.test(typeof v === 'string' ? v : v.toString('latin1')))
  const targetOk = /^[\x21-\x7e]+$/.test(target) && !target.includes('#')
  const wellFormed =
    (transport !== 'raw' || (WELL_FORMED_DEFECTS.has(defect) && headerBytesOk && targetOk)) &&
    headerSize + target.length < 7000 && // else Node answers 431 itself (MAX_HEADER_BYTES 8 KiB counts the request line)
    !(c.method === 'HEAD' && defect === 'absolute-form')
  const operation = surface.operationOf(c.method, path)
  const expectation: Expectation = {
    operation: operation?.id,
    method: c.method,
    knownUnauthenticated: endpoint.unauthenticated.has(c.auth),
    // The read-only key on an operation whose scope it lacks (only where it is a valid credential).
    lacksScope:
      c.auth === 'read-only' &&
      !endpoint.unauthenticated.has(c.auth) &&
      operation !== undefined &&
      operation.scopes.length > 0 &&
      !operation.scopes.some((s) => (READ_ONLY_SCOPES as readonly string[]).includes(s)),
    requestId: requestIdSeen,
    wellFormed,
    methodNotAllowed: surface.isKnownPath(path) && operation === undefined && decodes(path),
    // A path that does not percent-decode may be refused with 400 before any routing.
    // (Not for an absolute-form target glued to a path without '/', such as http://host:port*: no valid URL.)
    unknownRoute:
      c.target === 'unknown-path' && !surface.isKnownPath(path) && decodes(path) && (defect !== 'absolute-form' || path.startsWith('/')),
  }
  const sent: SentRequest = { case: c, path, operation }
  const before = await endpoint.observer?.before(sent)

  let response: WireResponse
  try {
    if (transport === 'raw') {
      const { data, endAfterWrite } = toRawBytes(wire, endpoint.port)
      response = await sendRaw({ port: endpoint.port, localAddress, data, method: c.method, endAfterWrite, timeoutMs: REQUEST_TIMEOUT_MS })
    } else {
      response = await sendHttp({
        port: endpoint.port,
        localAddress,
        method: c.method,
        path: target,
        headers: headers as Array<[string, string]>,
        body,
        chunked: transport === 'http-chunked' && body !== undefined,
        timeoutMs: REQUEST_TIMEOUT_MS,
      })
    }
  } catch (error) {
    const none = { status: 0, headers: {}, rawHeaders: [], body: Buffer.alloc(0) }
    if (error instanceof TransportError && error.kind === 'closed' && defect === 'cl-long-eof') {
      // The client closed its side before sending the promised body: nothing left to answer.
      stats.record(`${expectation.operation ?? 'other'} ${c.method} closed-by-client`)
      const problems = (await endpoint.observer?.after(sent, none, before)) ?? []
      if (problems.length > 0) stats.fail(`${problems.join('\n')}\n  request: ${c.method} ${target.slice(0, 200)} [raw cl-long-eof]`)
      return { response: none, expectation }
    }
    stats.fail(
      `${(error as Error).message} [${transport}${defect !== 'none' ? ' ' + defect : ''}]\n  request: ${c.method} ${target.slice(0, 200)}`,
    )
    return { response: none, expectation }
  }
  const verdict = oracle.judge(expectation, response)
  stats.record(`${endpoint.name === 'main' ? '' : endpoint.name + ':'}${verdict.label}`)
  const problems = [...verdict.problems, ...((await endpoint.observer?.after(sent, response, before)) ?? [])]
  if (response.status === 201 && response.headers.location !== undefined) {
    const location = response.headers.location
    endpoint.knownIds.push(decodeURIComponent(location.slice(location.lastIndexOf('/') + 1)))
  }
  if (problems.length > 0) {
    stats.fail(
      `${problems.join('\n')}\n  request: ${c.method} ${target.slice(0, 200)} [${endpoint.name} ${transport}${defect !== 'none' ? ' ' + defect : ''}] auth=${c.auth}` +
        `${c.headers.length > 0 ? ` headers=${JSON.stringify(c.headers).slice(0, 200)}` : ''}` +
        `\n  response: ${response.status} ${JSON.stringify(response.headers).slice(0, 600)}\n  body: ${response.body.toString('utf8').slice(0, 300)}`,
    )
  }
  return { response, expectation }
}

/** What the oracle expects of a plain, well-formed request with a valid key and no request id. */
function plainRequest(server: FuzzServer, method: string, path: string): Expectation {
  const operation = server.oracle.surface.operationOf(method, path.split('?')[0]!)
  return { operation: operation?.id, method, knownUnauthenticated: false, requestId: { sent: false }, wellFormed: true }
}

/** Creates a valid NewPet through HTTP and reads it back at its Location: same fields, same digits. */
export async function runRoundTrip(
  server: FuzzServer,
  pet: ValidNewPet,
  stats: FuzzStats,
  options: { chunked: boolean; client: number },
): Promise<void> {
  const localAddress = clientAddress(options.client)
  const auth = `Bearer ${server.keys.valid}`
  const created = await sendHttp({
    port: server.port,
    localAddress,
    method: 'POST',
    path: '/v1/pets',
    headers: [
      ['authorization', auth],
      ['content-type', 'application/json'],
    ],
    body: Buffer.from(pet.text, 'utf8'),
    chunked: options.chunked,
    timeoutMs: REQUEST_TIMEOUT_MS,
  })
  const v1 = server.oracle.judge(plainRequest(server, 'POST', '/v1/pets'), created)
  stats.record(v1.label)
  const problems = [...v1.problems]
  // A name with a lone surrogate (a \uD800 escape: valid JSON, but no Unicode text) may be refused;
  // if accepted, it must be stored exactly like any other.
  const refusable = !isWellFormed(pet.name)
  if (created.status === 400 && refusable) {
    // the oracle checked the Error body
  } else if (created.status !== 201)
    problems.push(`valid NewPet answered ${created.status}: ${created.body.toString('utf8').slice(0, 300)}`)
  else {
    problems.push(...samePet('201 body', created.body, pet))
    const location = created.headers.location ?? ''
    const got = await sendHttp({
      port: server.port,
      localAddress,
      method: 'GET',
      path: location,
      headers: [['authorization', auth]],
      timeoutMs: REQUEST_TIMEOUT_MS,
    })
    const v2 = server.oracle.judge(plainRequest(server, 'GET', location), got)
    stats.record(v2.label)
    problems.push(...v2.problems)
    if (got.status !== 200) problems.push(`GET ${location} answered ${got.status}`)
    else {
      problems.push(...samePet(`GET ${location}`, got.body, pet))
      const a = parseLossless(created.body.toString('utf8')) as Record<string, unknown>
      const b = parseLossless(got.body.toString('utf8')) as Record<string, unknown>
      if (String(a.id) !== String(b.id)) problems.push(`id differs: 201 has ${String(a.id)}, GET has ${String(b.id)}`)
    }
  }
  if (problems.length > 0) stats.fail(`${problems.join('\n')}\n  sent: ${pet.text.slice(0, 500)}`)
}

/** No lone UTF-16 surrogate (String.prototype.isWellFormed, Node 20). */
export const isWellFormed = (s: string) => (s as string & { isWellFormed(): boolean }).isWellFormed()

function samePet(where: string, body: Buffer, pet: ValidNewPet): string[] {
  const problems: string[] = []
  const text = body.toString('utf8')
  const got = parseLossless(text) as Record<string, unknown>
  const keys = Object.keys(got).sort()
  const expectedKeys = ['categoryId', 'id', 'name', ...(pet.status !== undefined ? ['status'] : [])].sort()
  if (JSON.stringify(keys) !== JSON.stringify(expectedKeys))
    problems.push(`${where}: fields ${keys.join(',')} instead of ${expectedKeys.join(',')}`)
  if (got.name !== pet.name) problems.push(`${where}: name ${JSON.stringify(got.name)} differs from the sent ${JSON.stringify(pet.name)}`)
  if (!isLosslessNumber(got.categoryId) || String(got.categoryId) !== pet.categoryId.toString()) {
    problems.push(`${where}: categoryId ${String(got.categoryId)} differs from the sent ${pet.categoryId}`)
  }
  // The digits on the wire, not only the parsed value.
  if (!new RegExp(`"categoryId":${pet.categoryId.toString()}[,}]`).test(text))
    problems.push(`${where}: categoryId digits not found verbatim in ${text.slice(0, 300)}`)
  if (got.status !== pet.status) problems.push(`${where}: status ${String(got.status)} differs from the sent ${String(pet.status)}`)
  return problems
}

/**
 * Concurrent creates, then a walk of the whole catalogue through the Link rel="next" pages: every
 * create answers 201 with a distinct id, and the walk returns each animal once, ascending, with
 * the new ones among them and unchanged.
 */
export async function runConcurrentCreateAndWalk(
  server: FuzzServer,
  pets: ValidNewPet[],
  pageSize: number,
  status: 'available' | 'pending' | 'sold' | undefined,
  stats: FuzzStats,
): Promise<void> {
  const auth: Array<[string, string]> = [['authorization', `Bearer ${server.keys.valid}`]]
  const problems: string[] = []
  const created = await Promise.all(
    pets.map((pet, i) =>
      sendHttp({
        port: server.port,
        localAddress: clientAddress(1 + (i % 200)),
        method: 'POST',
        path: '/v1/pets',
        headers: [...auth, ['content-type', 'application/json']],
        body: Buffer.from(pet.text, 'utf8'),
        timeoutMs: REQUEST_TIMEOUT_MS,
      }),
    ),
  )
  const byId = new Map<string, ValidNewPet>()
  for (const [i, res] of created.entries()) {
    const v = server.oracle.judge(plainRequest(server, 'POST', '/v1/pets'), res)
    stats.record(v.label)
    problems.push(...v.problems)
    if (res.status === 400 && !isWellFormed(pets[i]!.name)) continue // may be refused (see runRoundTrip)
    if (res.status !== 201) {
      problems.push(`concurrent create answered ${res.status}: ${res.body.toString('utf8').slice(0, 200)}`)
      continue
    }
    const id = String((parseLossless(res.body.toString('utf8')) as { id: unknown }).id)
    if (byId.has(id)) problems.push(`id ${id} assigned twice`)
    byId.set(id, pets[i]!)
  }
  // Walk every page of the (optionally filtered) list from just before this batch (bounded work per run).
  const seen = new Set<string>()
  // Not Math.min: these are bigints.
  const firstId = [...byId.keys()].map(BigInt).reduce((a, b) => (a < b ? a : b), 1n)
  let last = firstId - 1n
  let path: string | undefined = `/v1/pets?limit=${pageSize}${status ? `&status=${status}` : ''}&after=${firstId - 1n}`
  for (let page = 0; path !== undefined && page < 100_000; page++) {
    const res = await sendHttp({
      port: server.port,
      localAddress: '127.0.0.1',
      method: 'GET',
      path,
      headers: auth,
      timeoutMs: REQUEST_TIMEOUT_MS,
    })
    const v = server.oracle.judge(plainRequest(server, 'GET', path), res)
    stats.record(v.label)
    problems.push(...v.problems)
    if (res.status !== 200) {
      problems.push(`GET ${path} answered ${res.status}`)
      break
    }
    const items = parseLossless(res.body.toString('utf8')) as Array<Record<string, unknown>>
    if (items.length > pageSize) problems.push(`page of ${items.length} items for limit=${pageSize}`)
    for (const item of items) {
      const id = String(item.id)
      if (seen.has(id)) problems.push(`id ${id} listed twice`)
      seen.add(id)
      if (BigInt(id) <= last) problems.push(`ids not ascending: ${id} after ${last}`)
      last = BigInt(id)
      if (status !== undefined && item.status !== status) problems.push(`status filter ${status} returned ${String(item.status)}`)
      const mine = byId.get(id)
      if (mine && (item.name !== mine.name || String(item.categoryId) !== mine.categoryId.toString() || item.status !== mine.status)) {
        problems.push(`listed animal ${id} differs from the one created: ${JSON.stringify(String(item.name))}`)
      }
    }
    const link = res.headers.link
    const next = link ? /<[^>]*?(\/v1\/pets\?[^>]*)>;\s*rel="next"/.exec(link)?.[1] : undefined
    if (link !== undefined && next === undefined) problems.push(`unparsable Link header ${link}`)
    if (next !== undefined && items.length < pageSize) problems.push(`Link rel="next" after a short page (${items.length} < ${pageSize})`)
    path = next
  }
  for (const [id, pet] of byId) {
    if ((status === undefined || pet.status === status) && !seen.has(id)) problems.push(`created animal ${id} missing from the walk`)
  }
  if (problems.length > 0) stats.fail(problems.slice(0, 20).join('\n'))
}

// ---------------------------------------------------------------------------------------------
// Properties (numRuns, seed and path come from the caller)

export interface PropertyRun {
  name: string
  property: (server: FuzzServer, stats: FuzzStats) => fc.IAsyncPropertyWithHooks<any>
}

/** Checks liveness every `every` runs inside a property, so a wedged server fails the case that wedged it. */
function aliveEvery(server: FuzzServer, every: number) {
  let n = 0
  return async () => {
    if (++n % every === 0) await server.assertAlive()
  }
}

/** Random requests to every operation of the endpoint's document (and to paths and methods it does not have). */
const abuseOf = (name: string, endpointOf: (server: FuzzServer) => Endpoint): PropertyRun => ({
  name,
  property: (server, stats) => {
    const endpoint = endpointOf(server)
    const alive = aliveEvery(server, 25)
    return fc.asyncProperty(abuseCaseFor(endpoint.oracle.surface), async (c) => {
      await runAbuseCase(server, endpoint, c, stats)
      await alive()
    })
  },
})

/** Valid requests to every operation of the endpoint's document: the answers, the state behind them and the observer's checks agree. */
const validOf = (name: string, endpointOf: (server: FuzzServer) => Endpoint): PropertyRun => ({
  name,
  property: (server, stats) => {
    const endpoint = endpointOf(server)
    return fc.asyncProperty(validCaseFor(endpoint.oracle.surface), async (c) => {
      await runAbuseCase(server, endpoint, c, stats)
    })
  },
})

export const ROUND_TRIP_PROPERTY: PropertyRun = {
  name: 'round trip: a valid NewPet is created and read back exactly',
  property: (server, stats) =>
    fc.asyncProperty(validNewPet, fc.boolean(), fc.integer({ min: 1, max: 254 }), async (pet, chunked, client) => {
      await runRoundTrip(server, pet, stats, { chunked, client })
    }),
}

export const ABUSE_PROPERTY = abuseOf('abuse: every operation, random requests over real HTTP', (server) => server.main)
export const ADMIN_ABUSE_PROPERTY = abuseOf(
  'admin: every admin operation, random requests with and without an admin token over real HTTP',
  (server) => server.admin,
)

/**
 * Valid requests but for one hostile text (hostile-cases.ts), to both listeners: a NUL is 400 on
 * every store, a date that does not exist is 400 naming its field, a key name that would read
 * backwards is refused, a key-shaped parameter name is not echoed; and no log line holds a secret.
 */
export const HOSTILE_TEXT_PROPERTY: PropertyRun = {
  name: 'hostile text: NUL, text-direction and invisible characters, dates that do not exist, malformed keys, where text goes',
  property: (server, stats) => {
    const endpoints = [server.main, server.admin]
    const cases = fc.oneof(
      ...endpoints.map((endpoint, i) => hostileCaseFor(endpoint.oracle.surface.operations).map((h) => ({ h, endpoint: i }))),
    )
    return fc.asyncProperty(cases, async ({ h, endpoint }) => {
      const { response } = await runAbuseCase(server, endpoints[endpoint]!, h.case, stats)
      const problems = hostileProblems(h, response)
      if (problems.length > 0)
        stats.fail(
          `${problems.join('\n')}\n  request: ${h.case.method} ${(h.case.path + h.case.query).slice(0, 300)}` +
            `${h.case.body ? `\n  body: ${h.case.body.text.slice(0, 300)}` : ''}\n  answer: ${response.body.toString('utf8').slice(0, 300)}`,
        )
    })
  },
}

export const ADMIN_LIFECYCLE_PROPERTY = validOf(
  'admin lifecycle: valid admin requests on known keys; keys, audit log and main listener agree with every answer',
  (server) => server.admin,
)

export const PROPERTIES: PropertyRun[] = [
  ABUSE_PROPERTY,
  ROUND_TRIP_PROPERTY,
  {
    name: 'concurrency: parallel creates, then a paged walk returns each animal once, in order',
    property: (server, stats) =>
      fc.asyncProperty(
        fc.array(validNewPet, { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 1, max: 100 }),
        fc.constantFrom(undefined, 'available', 'pending', 'sold'),
        async (pets, pageSize, status) => {
          await runConcurrentCreateAndWalk(server, pets, pageSize, status, stats)
        },
      ),
  },
  IDEMPOTENCY_PROPERTY,
  STORE_PROPERTY,
  HOSTILE_TEXT_PROPERTY,
  ADMIN_ABUSE_PROPERTY,
  ADMIN_LIFECYCLE_PROPERTY,
]

/** The deprecated operations after their sunset: 410 gone for every id and key, with the deprecation headers. */
export const SUNSET_PROPERTY: PropertyRun = {
  name: 'sunset: the deprecated GET /v1/pets/{petId} after 5 December 2030',
  property: (server, stats) =>
    fc.asyncProperty(
      deprecatedPaths(server.main.oracle.surface),
      authChoice,
      requestIdChoice,
      fc.constantFrom('GET', 'HEAD'),
      async (path, auth, requestId, method) => {
        const c: AbuseCase = {
          target: 'sunset',
          method,
          path,
          query: '',
          auth,
          requestId,
          contentType: null,
          body: null,
          headers: [],
          extra: [],
          transport: 'raw',
          defect: 'none',
          client: 1 + (path.length % 250),
          advanceMs: 1000,
          burst: 1,
        }
        const { response } = await runAbuseCase(server, server.main, c, stats)
        // Authentication and limits come first; then every answer the route gives is 410 (answers
        // from outside the app, e.g. a malformed path, were judged by the oracle already).
        // A path that cannot be decoded (or too long a parameter) may be refused with 400 before routing.
        const segments = path.split('/')
        const undecodable = !decodes(path) || segments.some((s) => s.length > 100)
        const allowed = undecodable ? [400, 401, 410, 429] : [401, 410, 429]
        if (response.headers['x-request-id'] !== undefined && !allowed.includes(response.status)) {
          stats.fail(`after the sunset ${method} ${path} answered ${response.status}, not 410 gone`)
        }
      },
    ),
}

export const SUNSET_NOW = GET_PET_DEPRECATION.sunset + 60_000

export interface RunResult {
  name: string
  numRuns: number
  failed: boolean
  seed: number
  path?: string
  counterexample?: string
  error?: string
}

export async function runProperty(
  prop: PropertyRun,
  server: FuzzServer,
  stats: FuzzStats,
  params: { numRuns: number; seed?: number; path?: string; endOnFailure?: boolean },
): Promise<RunResult> {
  const details = await fc.check(prop.property(server, stats), {
    numRuns: params.numRuns,
    ...(params.seed !== undefined ? { seed: params.seed } : {}),
    ...(params.path !== undefined ? { path: params.path } : {}),
    endOnFailure: params.endOnFailure ?? false,
  })
  await server.assertAlive()
  return {
    name: prop.name,
    numRuns: details.numRuns,
    failed: details.failed,
    seed: details.seed,
    ...(details.counterexamplePath !== null ? { path: details.counterexamplePath } : {}),
    ...(details.counterexample !== null ? { counterexample: fc.stringify(details.counterexample) } : {}),
    ...(details.errorInstance ? { error: (details.errorInstance as Error).message } : {}),
  }
}
