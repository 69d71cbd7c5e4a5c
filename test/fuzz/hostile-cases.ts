/**
 * Requests that are valid but for one text, put where the document says text goes (a body field,
 * a key in a free-form object such as metadata, a query parameter, a query parameter's name), and
 * what the answer must then be beyond what the oracle checks of every answer (no 5xx, a 400 that
 * names a field, no secret echoed or logged):
 *
 * - a NUL anywhere: 400 on every store (PostgreSQL cannot take it; it was a 500 there);
 * - a date that does not exist where the document asks for an RFC 3339 date-time: 400, which says
 *   so when it names that field (it used to be moved and taken);
 * - a text-direction or invisible character where the document refuses them (key names): never 2xx;
 * - a key-shaped text as a query parameter's name: the 400 quotes no more than its display prefix.
 *
 * Everything comes from the document (which fields take text, which a date-time, which refuse
 * hidden characters): a new operation is covered without a change here.
 */
import fc from 'fast-check'
import { type AbuseCase, caseCommon } from './arbitraries.js'
import { type HostileKind, hostileText } from './hostile-text.js'
import { queryValue, renderObject, validObjectEntries, validPathOf } from './requests.js'
import type { FuzzOperation, Parameter, Schema } from './surface.js'
import type { WireResponse } from './transport.js'

type Place = 'body' | 'object-key' | 'object-value' | 'query' | 'query-name'
/** What the document says the field takes. */
type Takes = 'date-time' | 'name-without-hidden-characters' | 'text'

export interface HostileCase {
  case: AbuseCase
  kind: HostileKind
  place: Place
  field: string
  takes: Takes
  text: string
}

interface Target {
  place: Place
  field: string
  takes: Takes
}

const branches = (schema: Schema): Schema[] => schema.anyOf ?? schema.oneOf ?? [schema]
/** Free text: a string with no list of values and no pattern for the whole of it (an id). */
const takesText = (schema: Schema) =>
  branches(schema).some((b) => b.type === 'string' && b.enum === undefined && !String(b.pattern ?? '').startsWith('^'))
const takesObject = (schema: Schema) => branches(schema).some((b) => b.type === 'object' && b.properties === undefined)
const takesOf = (description: string): Takes =>
  /RFC 3339/.test(description)
    ? 'date-time'
    : /no text-direction or invisible characters/.test(description)
      ? 'name-without-hidden-characters'
      : 'text'

function targetsOf(op: FuzzOperation): Target[] {
  const targets: Target[] = [{ place: 'query-name', field: '', takes: 'text' }]
  for (const [field, schema] of Object.entries<Schema>(op.body?.properties ?? {})) {
    if (takesText(schema)) targets.push({ place: 'body', field, takes: takesOf(String(schema.description ?? '')) })
    if (takesObject(schema)) targets.push({ place: 'object-key', field, takes: 'text' }, { place: 'object-value', field, takes: 'text' })
  }
  for (const p of op.params.filter((p) => p.in === 'query' && takesText(p.schema)))
    targets.push({ place: 'query', field: p.name, takes: takesOf(p.description) })
  return targets
}

const isDateTime = (p: Parameter) => takesOf(p.description) === 'date-time'

function hostileCaseOf(op: FuzzOperation): fc.Arbitrary<HostileCase> {
  const query = op.params.filter((p) => p.in === 'query')
  return fc
    .record({
      target: fc.constantFrom(...targetsOf(op)),
      kind: fc.constantFrom<HostileKind>('nul', 'hidden', 'impossible-date', 'key-shaped'),
      path: validPathOf(op),
      // The other date-times are left out: the one chosen is then the only one that can be refused.
      query: fc.record(Object.fromEntries(query.filter((p) => !isDateTime(p)).map((p) => [p.name, queryValue(p.schema)])), {
        requiredKeys: query.filter((p) => p.required).map((p) => p.name),
      }),
      body: op.body === undefined ? fc.constant(undefined) : validObjectEntries(op.body),
      requestId: caseCommon.requestId,
      client: caseCommon.client,
      advanceMs: fc.oneof({ arbitrary: fc.constant(0), weight: 8 }, { arbitrary: fc.constant(61_000), weight: 1 }),
    })
    .chain((parts) => hostileText(parts.kind).map((text) => ({ ...parts, text })))
    .map(({ target, kind, text, path, query: params, body, requestId, client, advanceMs }): HostileCase => {
      const values: Record<string, string> = Object.fromEntries(Object.entries(params).filter(([field]) => field !== target.field))
      const entries = (body ?? []).filter(([field]) => field !== target.field)
      let name: string | undefined
      if (target.place === 'query') values[target.field] = text
      else if (target.place === 'query-name') name = text
      else if (target.place === 'body') entries.push([target.field, JSON.stringify(text)])
      else if (target.place === 'object-key') entries.push([target.field, `{${JSON.stringify(text)}:"v"}`])
      else entries.push([target.field, `{"note":${JSON.stringify(text)}}`])
      const parts = Object.entries(values).map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
      if (name !== undefined) parts.push(`${encodeURIComponent(name)}=1`)
      const c: AbuseCase = {
        target: op.id,
        method: op.method,
        path,
        query: parts.length === 0 ? '' : `?${parts.join('&')}`,
        auth: 'valid',
        requestId,
        contentType: op.body === undefined ? null : 'application/json',
        body: op.body === undefined ? null : { text: renderObject(entries), mutation: { kind: 'none' } },
        headers: [],
        extra: [],
        transport: 'http',
        defect: 'none',
        client,
        advanceMs,
        burst: 1,
      }
      return { case: c, kind, text, ...target }
    })
}

export const hostileCaseFor = (operations: readonly FuzzOperation[]): fc.Arbitrary<HostileCase> =>
  fc.oneof(...operations.map(hostileCaseOf))

/** What is wrong with the answer to a hostile case, beyond the oracle's rules. */
export function hostileProblems(h: HostileCase, res: WireResponse): string[] {
  // Another limit (the admin token's 600 a minute) may answer first; nothing else may.
  if (res.status === 429) return []
  const where = h.place === 'query-name' ? "a query parameter's name" : `${h.field} (${h.place})`
  const message = (() => {
    try {
      return String((JSON.parse(res.body.toString('utf8')) as { message?: unknown }).message ?? '')
    } catch {
      return ''
    }
  })()
  const sent = `${JSON.stringify(h.text)} in ${where}`
  const ok = res.status >= 200 && res.status < 300
  switch (h.kind) {
    case 'nul':
      if (res.status !== 400) return [`${sent} answered ${res.status}, not 400`]
      if (!/U\+0000|control characters|unknown (query parameter|field)/.test(message))
        return [`${sent} answered 400 without saying what is wrong: ${JSON.stringify(message)}`]
      return []
    case 'impossible-date':
      if (h.takes !== 'date-time' || h.place === 'query-name') return []
      if (res.status !== 400) return [`${sent}, a date that does not exist, answered ${res.status}, not 400`]
      // Another field of the request may be refused first (the schema checks them all before the date is read).
      if (new RegExp(`(^|: |; )${h.field} `).test(message) && !message.includes(`${h.field} must be a date and time that exists (`))
        return [`${sent}: the 400 does not say the date does not exist: ${JSON.stringify(message)}`]
      return []
    case 'hidden':
      return h.takes === 'name-without-hidden-characters' && ok ? [`${sent} was accepted: ${res.status}`] : []
    case 'key-shaped':
      return h.place === 'query-name' && ok ? [`${sent} was accepted: ${res.status}`] : []
  }
}
