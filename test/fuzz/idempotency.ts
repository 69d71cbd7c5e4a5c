/**
 * Idempotent creates under the fuzzer (README, "Idempotent creates"): a model of what each
 * (API key, Idempotency-Key) has created, fed by the answers themselves, that every create with
 * the header is judged against — in the abuse property (any body, any credential) and in a
 * property of its own that sends valid bodies with keys first used, reused with the same body
 * (spelled differently), reused with another body, malformed, under another API key, and several
 * at once.
 */
import fc from 'fast-check'
import { isLosslessNumber, parse as parseLossless } from 'lossless-json'
import { IDEMPOTENCY_RETENTION_MS } from '../../src/idempotency/sweep.js'
import type { Clock } from '../../src/shared/clock.js'
import { clientAddress, credentialOf, type FuzzStats, type Observer, REQUEST_TIMEOUT_MS } from './endpoint.js'
import type { Expectation } from './oracle.js'
import { MALFORMED_TOKENS, renderObject, validObjectEntries } from './requests.js'
import type { PropertyRun } from './runner.js'
import type { FuzzServer } from './server.js'
import type { FuzzOperation, Schema } from './surface.js'
import { sendHttp, type WireResponse } from './transport.js'

export const IDEMPOTENCY_HEADER = 'Idempotency-Key'

export type ParsedKey = { kind: 'none' } | { kind: 'malformed' } | { kind: 'key'; key: string }

const QUOTED = /^"((?:[\x21\x23-\x5b\x5d-\x7e]|\\["\\])+)"$/

/**
 * The README's rule for the header, as received (Node trims the spaces around a value and joins
 * a repeated header with ", "): 1 to 255 visible ASCII characters, bare or as a quoted string
 * with \" and \\ escapes, both naming the same key; anything else is malformed.
 */
export function parseKeyHeader(values: readonly string[]): ParsedKey {
  if (values.length === 0) return { kind: 'none' }
  if (values.length > 1) return { kind: 'malformed' }
  const value = values[0]!.replace(/^[ \t]+|[ \t]+$/g, '')
  const key = value.startsWith('"')
    ? QUOTED.exec(value)?.[1]?.replace(/\\(["\\])/g, '$1')
    : /^[\x21-\x7e]+$/.test(value)
      ? value
      : undefined
  return key === undefined || key.length > 255 ? { kind: 'malformed' } : { kind: 'key', key }
}

/** The header value naming `key`: bare, or as the draft's quoted string (always quoted when bare would read as one). */
export const keyHeader = (key: string, quoted: boolean) => (quoted || key.startsWith('"') ? `"${key.replace(/["\\]/g, '\\$&')}"` : key)

/**
 * What the service compares bodies by: the fields of the request body's schema, as parsed (so
 * spacing and field order do not count), read from a request body or from the created resource.
 */
export function canonicalOf(text: string | Buffer, schema: Schema): string | undefined {
  let value: unknown
  try {
    value = parseLossless(text.toString())
  } catch {
    return undefined
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined
  const fields = value as Record<string, unknown>
  return JSON.stringify(
    Object.keys(schema.properties ?? {})
      .sort()
      .map((name) => {
        const v = fields[name]
        return [name, v === undefined ? null : isLosslessNumber(v) ? v.toString() : JSON.stringify(v)]
      }),
  )
}

/** The `code` of an Error body, if the answer is one. */
function codeOf(res: WireResponse): string | undefined {
  try {
    return (JSON.parse(res.body.toString('utf8')) as { code?: string }).code
  } catch {
    return undefined
  }
}

interface Recorded {
  canonical: string | undefined
  body: Buffer
  location: string | undefined
  at: number
}

/** What every (credential, key) has created, as the answers showed it. */
export class IdempotencyModel {
  private readonly records = new Map<string, Recorded>()

  constructor(
    private readonly clock: Clock,
    private readonly bodySchema: Schema,
  ) {}

  /**
   * Judges one answer to a create with this header, and records what it created. `sent` is the
   * canonical body when the request is known to be valid (else unknown: only what the answer
   * itself proves is checked); `concurrent` when other requests with the key were in flight.
   */
  judge(credential: string, parsed: ParsedKey, sent: string | undefined, res: WireResponse, concurrent = false): string[] {
    const problems: string[] = []
    const replayed = res.headers['idempotent-replayed']
    if (parsed.kind !== 'key') {
      if (replayed !== undefined) problems.push(`Idempotent-Replayed on a ${res.status} without a valid ${IDEMPOTENCY_HEADER}`)
      if (parsed.kind === 'malformed' && [201, 409, 422].includes(res.status))
        problems.push(`${res.status} for a malformed ${IDEMPOTENCY_HEADER} (README: 400 invalid_request)`)
      const code = codeOf(res)
      if (parsed.kind === 'none' && (code === 'idempotency_conflict' || code === 'idempotency_key_reused'))
        problems.push(`${res.status} ${code} without an ${IDEMPOTENCY_HEADER}`)
      return problems
    }
    const slot = `${credential}\n${parsed.key}`
    const found = this.records.get(slot)
    // After the retention a record may or may not have been swept yet: either answer is right.
    const stale = found !== undefined && found.at + IDEMPOTENCY_RETENTION_MS <= this.clock.now()
    const record = stale ? undefined : found
    if (res.status === 201 && replayed === undefined) {
      if (record !== undefined) problems.push(`a second animal created with one ${IDEMPOTENCY_HEADER} (no Idempotent-Replayed)`)
      else {
        const canonical = canonicalOf(res.body, this.bodySchema)
        if (sent !== undefined && canonical !== sent)
          problems.push(`the animal created differs from the body sent: ${canonical} vs ${sent}`)
        this.records.set(slot, { canonical, body: res.body, location: res.headers.location, at: this.clock.now() })
      }
    } else if (res.status === 201) {
      if (replayed !== 'true') problems.push(`Idempotent-Replayed: ${JSON.stringify(replayed)}, not true`)
      if (record === undefined && !stale) problems.push(`a replay for an ${IDEMPOTENCY_HEADER} never used`)
      if (record !== undefined) {
        if (!record.body.equals(res.body))
          problems.push(
            `the replay differs from the first answer: ${res.body.toString().slice(0, 200)} vs ${record.body.toString().slice(0, 200)}`,
          )
        if (record.location !== res.headers.location)
          problems.push(`the replay's Location ${res.headers.location} is not ${record.location}`)
        if (sent !== undefined && sent !== record.canonical) problems.push('a replay for another body (README: 422 idempotency_key_reused)')
      }
    } else if (res.status === 422 && codeOf(res) === 'idempotency_key_reused') {
      if (record === undefined && !stale) problems.push(`422 for an ${IDEMPOTENCY_HEADER} never used`)
      if (record !== undefined && sent !== undefined && sent === record.canonical) problems.push('422 for the same body (README: a replay)')
    } else if (res.status === 409 && codeOf(res) === 'idempotency_conflict' && !concurrent) {
      problems.push(`409 idempotency_conflict with no other request in flight`)
    }
    // (Other 409s and 422s are the operation's own refusals, such as an animal that cannot be
    // ordered: nothing was done, so nothing is recorded, and a retry is processed anew.)
    return problems
  }
}

/** The abuse property's view: every answer to an operation documenting the header is judged by the model. */
export function idempotencyObserver(model: IdempotencyModel): Observer<undefined> {
  return {
    before: async () => undefined,
    after: async ({ case: c, operation }, res) => {
      const documented = operation?.params.some((p) => p.in === 'header' && p.name === IDEMPOTENCY_HEADER)
      // Only answers of the app: Node's parser may refuse a malformed request first.
      if (!documented || res.headers['x-request-id'] === undefined) return []
      const values = c.headers.filter(([name]) => name === IDEMPOTENCY_HEADER.toLowerCase()).map(([, v]) => v)
      return model.judge(credentialOf(c.auth), parseKeyHeader(values), undefined, res)
    },
  }
}

// ---------------------------------------------------------------------------------------------
// The property: sequences of creates with keys

type KeyRef = { index: number; quoted: boolean } | { values: string[] }

interface Step {
  key: KeyRef
  /** Which API key sends it: keys are scoped per API key. */
  as: 'valid' | 'second'
  /** Indexes into the run's bodies; more than one: sent at once. */
  bodies: number[]
  order: number[]
  whitespace: string
}

const keyRef: fc.Arbitrary<KeyRef> = fc.oneof(
  { arbitrary: fc.record({ index: fc.nat(), quoted: fc.boolean() }), weight: 8 },
  { arbitrary: fc.constantFrom(...MALFORMED_TOKENS).map((values) => ({ values })), weight: 1 },
)

const step: fc.Arbitrary<Step> = fc.record({
  key: keyRef,
  as: fc.constantFrom<Step['as']>('valid', 'valid', 'second'),
  bodies: fc.oneof(
    { arbitrary: fc.array(fc.nat(), { minLength: 1, maxLength: 1 }), weight: 4 },
    { arbitrary: fc.array(fc.nat(), { minLength: 2, maxLength: 3 }), weight: 1 },
  ),
  order: fc.array(fc.nat(), { minLength: 4, maxLength: 4 }),
  whitespace: fc.constantFrom('', ' ', '\n  '),
})

const keyText = fc.oneof(
  { arbitrary: fc.stringMatching(/^[\x21-\x7e]{1,24}$/), weight: 6 },
  { arbitrary: fc.stringMatching(/^[\x21-\x7e]{255}$/), weight: 1 },
)

/** The ids of the animals after `after`, ascending (read from the store, not through HTTP). */
async function idsAfter(server: FuzzServer, after: bigint): Promise<bigint[]> {
  const ids: bigint[] = []
  for (let cursor = after; ; ) {
    const page = await server.t.storage.pets.listPets({ limit: 100, afterId: cursor })
    for (const pet of page) ids.push(BigInt(pet.id))
    if (page.length < 100) return ids
    cursor = ids.at(-1)!
  }
}

async function runSteps(
  server: FuzzServer,
  op: FuzzOperation,
  keys: string[],
  bodies: Array<Array<[string, string]>>,
  steps: Step[],
  stats: FuzzStats,
) {
  const { oracle, port } = server.main
  const schema = op.body!
  const problems: string[] = []
  const startedAfter = (await idsAfter(server, server.lastPetId)).at(-1) ?? server.lastPetId
  const created = new Set<string>()
  for (const [n, s] of steps.entries()) {
    const values = 'values' in s.key ? s.key.values : [keyHeader(keys[s.key.index % keys.length]!, s.key.quoted)]
    const parsed = parseKeyHeader(values)
    const texts = s.bodies.map((b, i) =>
      renderObject(bodies[b % bodies.length]!, [...s.order.slice(i), ...s.order.slice(0, i)], s.whitespace),
    )
    const secret = s.as === 'valid' ? server.keys.valid : server.keys.second
    const answers = await Promise.all(
      texts.map((text, i) =>
        sendHttp({
          port,
          localAddress: clientAddress(1 + ((n + i) % 250)),
          method: op.method,
          path: op.template,
          headers: [
            ['authorization', `Bearer ${secret}`],
            ['content-type', 'application/json'],
            ...values.map((v): [string, string] => [IDEMPOTENCY_HEADER.toLowerCase(), v]),
          ],
          body: Buffer.from(text, 'utf8'),
          timeoutMs: REQUEST_TIMEOUT_MS,
        }),
      ),
    )
    const where = `step ${n} (${s.as}, ${JSON.stringify(values).slice(0, 80)}${texts.length > 1 ? `, ${texts.length} at once` : ''})`
    const expectation: Expectation = {
      operation: op.id,
      method: op.method,
      knownUnauthenticated: false,
      requestId: { sent: false },
      wellFormed: true,
    }
    for (const res of answers) {
      const verdict = oracle.judge(expectation, res)
      stats.record(verdict.label)
      problems.push(...verdict.problems.map((p) => `${where}: ${p}`))
    }
    if (parsed.kind !== 'key') {
      for (const res of answers)
        if (res.status !== 400 || !res.body.toString().includes(IDEMPOTENCY_HEADER))
          problems.push(
            `${where}: a malformed ${IDEMPOTENCY_HEADER} answered ${res.status} ${res.body.toString().slice(0, 200)}, not 400 naming it`,
          )
      continue
    }
    // The one that created (if any) first, so the others are judged against what it created.
    const order = answers.map((res, i) => ({ res, i })).sort((a, b) => rank(a.res) - rank(b.res))
    for (const { res, i } of order) {
      if (res.status !== 201 && res.status !== 422 && res.status !== 409) {
        problems.push(`${where}: a valid create with a key answered ${res.status} ${res.body.toString().slice(0, 200)}`)
        continue
      }
      const sent = canonicalOf(texts[i]!, schema)
      problems.push(...server.idempotency.judge(s.as, parsed, sent, res, answers.length > 1).map((p) => `${where}: ${p}`))
      if (res.status === 201 && res.headers['idempotent-replayed'] === undefined)
        created.add(String((parseLossless(res.body.toString()) as { id: unknown }).id))
    }
    if (answers.every((res) => res.status === 409)) problems.push(`${where}: every request answered 409: none was processed`)
  }
  // Each key created exactly one animal; replays, reuses and refusals none.
  const appeared = (await idsAfter(server, startedAfter)).map(String)
  server.lastPetId = BigInt(appeared.at(-1) ?? startedAfter)
  const unexpected = appeared.filter((id) => !created.has(id))
  const missing = [...created].filter((id) => !appeared.includes(id))
  if (unexpected.length > 0) problems.push(`animals created that no 201 announced: ${unexpected.join(', ')}`)
  if (missing.length > 0) problems.push(`animals announced by a 201 but not stored: ${missing.join(', ')}`)
  if (problems.length > 0) stats.fail(`${problems.slice(0, 20).join('\n')}\n  keys: ${JSON.stringify(keys).slice(0, 300)}`)
}

/** A creating 201 first, then replays and refusals. */
const rank = (res: WireResponse) => (res.status === 201 && res.headers['idempotent-replayed'] === undefined ? 0 : 1)

export const IDEMPOTENCY_PROPERTY: PropertyRun = {
  name: 'idempotency: creates with an Idempotency-Key are first used, replayed, refused when reused or malformed, scoped per API key',
  property: (server, stats) => {
    const op = server.main.oracle.surface.operationsWithHeader(IDEMPOTENCY_HEADER)[0]
    if (op?.body === undefined) throw new Error(`no operation of the public document takes an ${IDEMPOTENCY_HEADER} and a body`)
    return fc.asyncProperty(
      fc.uniqueArray(keyText, { minLength: 1, maxLength: 3 }),
      fc.array(validObjectEntries(op.body), { minLength: 1, maxLength: 3 }),
      fc.array(step, { minLength: 1, maxLength: 8 }),
      async (keys, bodies, steps) => runSteps(server, op, keys, bodies, steps, stats),
    )
  },
}
