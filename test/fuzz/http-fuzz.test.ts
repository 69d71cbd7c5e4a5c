/**
 * Property-based fuzzing of every operation through real HTTP (issue "Proven under abuse", 1).
 *
 * The app listens on a loopback port and the admin API on one of its own; the operations are
 * those of their OpenAPI documents (/v1/openapi.json, /admin/v1/openapi.json), and fast-check
 * generates requests from them (bodies, query strings, path ids, Idempotency-Keys, credentials,
 * request ids, content types, raw-socket defects). Every answer is judged against the document it
 * came from (openapi-backend + Ajv 2020-12) and the README's rules: a documented status, an Error
 * body `{code,message,status}` with a code from the closed list, bodies and headers as documented,
 * 401 with WWW-Authenticate without a valid credential, a 400 that names a field; never a 5xx, a
 * hang (per-request timeout) or a crash (/healthz answers afterwards). Behind the answers: what
 * each Idempotency-Key created (idempotency.ts), and for the admin API that a refused request
 * changes no key and writes no audit entry while an accepted one is on record (admin.ts).
 *
 * Bounded for CI (FUZZ_CI_RUNS scales every property; about 20 s in all when everything passes, and
 * 10 s more for the properties run again on PostgreSQL). The long run is
 * `npm run fuzz` (test/fuzz/long-run.mjs, FUZZ_RUNS per property). A failure prints fast-check's seed
 * and path; replay it with FUZZ_SEED=<seed> FUZZ_PATH=<path> npm run fuzz.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import fc from 'fast-check'
import { notFound } from '../../src/shared/refusal.js'
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js'
import { PG_PATIENCE, PG_URL, requireService } from '../helpers/services.js'
import { dropSchema } from '../helpers/stores.js'
import { validNewPet } from './arbitraries.js'
import { IDEMPOTENCY_PROPERTY } from './idempotency.js'
import {
  ABUSE_PROPERTY,
  ADMIN_ABUSE_PROPERTY,
  ADMIN_LIFECYCLE_PROPERTY,
  FuzzServer,
  FuzzStats,
  HOSTILE_TEXT_PROPERTY,
  PROPERTIES,
  type PropertyRun,
  ROUND_TRIP_PROPERTY,
  runProperty,
  runRoundTrip,
  SUNSET_NOW,
  SUNSET_PROPERTY,
} from './runner.js'
import { STORE_PROPERTY } from './store.js'
import { sendHttp } from './transport.js'

const SCALE = Number(process.env.FUZZ_CI_RUNS ?? 1)
/** Runs per property, by the word before the colon of its name. */
const RUNS: Record<string, number> = {
  abuse: 300,
  'round trip': 200,
  concurrency: 40, // parallel creates + a paged walk each
  idempotency: 60, // up to 8 steps each
  store: 40, // up to 8 orders at once, then two changes
  admin: 250,
  'admin lifecycle': 100,
  'hostile text': 150,
  sunset: 100,
}
const runsOf = (p: PropertyRun) => Math.max(1, Math.round((RUNS[p.name.split(':')[0]!] ?? 100) * SCALE))

async function assertProperty(prop: PropertyRun, server: FuzzServer, stats: FuzzStats): Promise<void> {
  const seed = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : undefined
  await fc.assert(prop.property(server, stats), {
    numRuns: runsOf(prop),
    includeErrorInReport: true,
    ...(seed !== undefined ? { seed } : {}),
  })
  await server.assertAlive()
}

describe('HTTP fuzzing (real sockets, judged against the OpenAPI document)', { timeout: 120_000 }, () => {
  let server: FuzzServer
  before(async () => {
    server = await FuzzServer.start()
  })
  after(() => server.close())

  for (const prop of PROPERTIES) {
    test(prop.name, { timeout: 90_000 }, async () => {
      const stats = new FuzzStats()
      await assertProperty(prop, server, stats)
      assert.ok(stats.cases >= runsOf(prop), `only ${stats.cases} requests judged`)
    })
  }

  test('the server still answers /healthz and the document after all of it', async () => {
    await server.assertAlive()
    const doc = (await server.fetchDoc()) as { openapi: string }
    assert.equal(doc.openapi, '3.1.0')
  })
})

/**
 * The same properties on PostgreSQL, where text that SQLite stores can fail (a NUL was a 500
 * there): fewer runs of those that reach storage with generated text. Skipped loudly without a
 * PostgreSQL server.
 */
describe('HTTP fuzzing on PostgreSQL', { timeout: 180_000 }, () => {
  const ON_POSTGRES: Array<[PropertyRun, number]> = [
    [HOSTILE_TEXT_PROPERTY, 150],
    [ABUSE_PROPERTY, 150],
    [ROUND_TRIP_PROPERTY, 50],
    [STORE_PROPERTY, 30],
    [ADMIN_ABUSE_PROPERTY, 100],
  ]
  let server: FuzzServer | undefined
  let schema: string | undefined
  after(async () => {
    await server?.close()
    if (schema !== undefined) await dropSchema(schema)
  })

  for (const [prop, runs] of ON_POSTGRES) {
    test(prop.name, { timeout: 120_000 }, async (t) => {
      if (!(await requireService(t, 'PostgreSQL'))) return
      if (server === undefined) {
        schema = `fuzz_${randomBytes(6).toString('hex')}`
        server = await FuzzServer.start({ storage: await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema }) })
      }
      const stats = new FuzzStats()
      const seed = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : undefined
      const numRuns = Math.max(1, Math.round(runs * SCALE))
      await fc.assert(prop.property(server, stats), { numRuns, includeErrorInReport: true, ...(seed !== undefined ? { seed } : {}) })
      await server.assertAlive()
      assert.ok(stats.cases >= numRuns, `only ${stats.cases} requests judged`)
    })
  }
})

describe('HTTP fuzzing after the sunset of GET /v1/pets/{petId}', { timeout: 60_000 }, () => {
  let server: FuzzServer
  before(async () => {
    server = await FuzzServer.start({ now: SUNSET_NOW })
  })
  after(() => server.close())

  test(SUNSET_PROPERTY.name, async () => {
    await assertProperty(SUNSET_PROPERTY, server, new FuzzStats())
  })
})

/**
 * The oracle itself is tested by mutation: an altered document, or a server that corrupts what it
 * stores, must make the same checks fail. Without this a vacuous oracle would pass everything.
 */
describe('the fuzz oracle catches what it should', { timeout: 60_000 }, () => {
  test('a 201 Pet fails against a document whose Pet.categoryId is a string', async () => {
    const server = await FuzzServer.start({
      docOverride: (doc) => {
        doc.components.schemas.Pet.properties.categoryId = { type: 'string' }
        return doc
      },
    })
    try {
      const stats = new FuzzStats()
      const pet = fc.sample(validNewPet, { numRuns: 1, seed: 1 })[0]!
      await assert.rejects(runRoundTrip(server, pet, stats, { chunked: false, client: 1 }), /does not match the OpenAPI schema/)
    } finally {
      await server.close()
    }
  })

  test('a real 401 fails against a document that does not list 401 for listPets', async () => {
    const server = await FuzzServer.start({
      docOverride: (doc) => {
        delete doc.paths['/pets'].get.responses['401']
        return doc
      },
    })
    try {
      const res = await sendHttp({
        port: server.port,
        localAddress: '127.0.0.1',
        method: 'GET',
        path: '/v1/pets',
        headers: [],
        timeoutMs: 5000,
      })
      assert.equal(res.status, 401)
      const verdict = server.oracle.judge(
        { operation: 'listPets', method: 'GET', knownUnauthenticated: true, requestId: { sent: false }, wellFormed: true },
        res,
      )
      assert.match(verdict.problems.join('\n'), /status 401 is not documented for listPets/)
    } finally {
      await server.close()
    }
  })

  describe('one server, sabotaged in turn', () => {
    let server: FuzzServer
    before(async () => {
      server = await FuzzServer.start()
    })
    after(() => server.close())

    /** Replaces `object[name]` for the length of `check`. */
    async function sabotaged<T extends object, K extends keyof T>(object: T, name: K, replacement: T[K], check: () => Promise<void>) {
      const original = object[name]
      object[name] = replacement
      try {
        await check()
      } finally {
        object[name] = original
      }
    }

    test('the round-trip property fails on a server that corrupts stored animals', async () => {
      const pets = server.t.storage.pets
      const getPet = pets.getPet.bind(pets)
      // The stored categoryId comes back one higher (as a bigint beyond 2^53 would when rounded).
      const corrupt: typeof pets.getPet = async (id) => {
        const pet = await getPet(id)
        return pet && { ...pet, categoryId: BigInt(pet.categoryId) + 1n }
      }
      await sabotaged(pets, 'getPet', corrupt, async () => {
        const details = await fc.check(ROUND_TRIP_PROPERTY.property(server, new FuzzStats()), { numRuns: 20, seed: 7 })
        assert.equal(details.failed, true, 'the sabotaged server passed the round-trip property')
        assert.match(String((details.errorInstance as Error | null)?.message), /categoryId/)
      })
    })

    test('the idempotency property fails on a server that creates again for a reused Idempotency-Key', async () => {
      const pets = server.t.storage.pets
      // Every create under a key is a first use (no record is looked up).
      const forgetful: typeof pets.createPetOnce = async (pet) => ({ outcome: 'created', pet: await pets.createPet(pet) })
      await sabotaged(pets, 'createPetOnce', forgetful, async () => {
        const details = await fc.check(IDEMPOTENCY_PROPERTY.property(server, new FuzzStats()), { numRuns: 30, seed: 3, endOnFailure: true })
        assert.equal(details.failed, true, 'the sabotaged server passed the idempotency property')
        assert.match(String((details.errorInstance as Error | null)?.message), /a second animal created with one Idempotency-Key/)
      })
    })

    test('the admin lifecycle property fails on a key service that revokes a key and then answers 404', async () => {
      const keys = server.t.domain.services.keys
      const revoke = keys.revokeKey.bind(keys)
      // The change is made (and written to the audit log), then refused.
      const twoFaced: typeof keys.revokeKey = async (id, ctx) => {
        await revoke(id, ctx)
        throw notFound('key', id)
      }
      await sabotaged(keys, 'revokeKey', twoFaced, async () => {
        const details = await fc.check(ADMIN_LIFECYCLE_PROPERTY.property(server, new FuzzStats()), {
          numRuns: 100,
          seed: 5,
          endOnFailure: true,
        })
        assert.equal(details.failed, true, 'the sabotaged admin API passed the lifecycle property')
        assert.match(String((details.errorInstance as Error | null)?.message), /revokeKey refused with 404 but (changed keys|on record)/)
      })
    })

    test('an admin 401 without its challenge fails, and so does a 400 that names nothing for a request without a token', async () => {
      const res = await sendHttp({
        port: server.admin.port,
        localAddress: '127.0.0.1',
        method: 'GET',
        path: '/admin/v1/keys',
        headers: [],
        timeoutMs: 5000,
      })
      assert.equal(res.status, 401)
      const expectation = {
        operation: 'listKeys',
        method: 'GET',
        knownUnauthenticated: true,
        requestId: { sent: false as const },
        wellFormed: true,
      }
      assert.deepEqual(server.admin.oracle.judge(expectation, res).problems, [])
      const { 'www-authenticate': _challenge, ...unchallenged } = res.headers
      assert.match(
        server.admin.oracle.judge(expectation, { ...res, headers: unchallenged }).problems.join('\n'),
        /401 without WWW-Authenticate/,
      )
      const body = Buffer.from(JSON.stringify({ code: 'invalid_request', message: 'Bad Request', status: 400 }))
      const vague = { ...res, status: 400, body, headers: { ...res.headers, 'content-length': String(body.length) } }
      const problems = server.admin.oracle.judge(expectation, vague).problems.join('\n')
      assert.match(problems, /400 from listKeys names no field/)
      assert.match(problems, /listKeys without a valid credential answered 400, not 401/)
    })

    test('an error message quoting more of a key than its display prefix fails', async () => {
      const res = await sendHttp({
        port: server.port,
        localAddress: '127.0.0.1',
        method: 'GET',
        path: `/v1/pets?${server.keys.valid.slice(0, -1)}=1`,
        headers: [['authorization', `Bearer ${server.keys.valid}`]],
        timeoutMs: 5000,
      })
      const expectation = {
        operation: 'listPets',
        method: 'GET',
        knownUnauthenticated: false,
        requestId: { sent: false as const },
        wellFormed: true,
      }
      assert.deepEqual(server.oracle.judge(expectation, res).problems, [])
      const body = Buffer.from(
        JSON.stringify({ code: 'invalid_request', message: `unknown query parameter '${server.keys.valid}'`, status: 400 }),
      )
      const echoing = { ...res, body, headers: { ...res.headers, 'content-length': String(body.length) } }
      assert.match(
        server.oracle.judge(expectation, echoing).problems.join('\n'),
        /error message holds more of a key than its display prefix/,
      )
    })

    test('runProperty reports a failure with its seed and path', async () => {
      const broken: PropertyRun = {
        name: 'always fails',
        // With a message: without one, assert.ok reads this file's source to write one, which hung here.
        property: () => fc.asyncProperty(fc.nat(), async (n) => assert.ok(n < 0, `${n} is not negative`)),
      }
      const result = await runProperty(broken, server, new FuzzStats(), { numRuns: 5, seed: 42 })
      assert.equal(result.failed, true)
      assert.equal(result.seed, 42)
      assert.equal(typeof result.path, 'string')
    })
  })
})
