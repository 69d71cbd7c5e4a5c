/**
 * Property-based fuzzing of every operation through real HTTP (issue "Proven under abuse", 1).
 *
 * The app listens on a loopback port; fast-check generates requests (bodies, query strings, path
 * ids, Authorization variants, request ids, content types, raw-socket defects) and every answer is
 * judged against the service's own OpenAPI document (openapi-backend + Ajv 2020-12) and the
 * README's rules: a documented status, an Error body `{code,message,status}` with a code from the
 * closed list, a valid Pet / Pets, the documented headers; never a 5xx, a hang (per-request
 * timeout) or a crash (/healthz answers afterwards).
 *
 * Bounded for CI (FUZZ_CI_RUNS scales every property; about 15 s in all when everything passes). The long run is
 * `npm run fuzz` (scripts/fuzz.mjs, FUZZ_RUNS per property). A failure prints fast-check's seed
 * and path; replay it with FUZZ_SEED=<seed> FUZZ_PATH=<path> npm run fuzz.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import fc from 'fast-check'
import { validNewPet } from './arbitraries.js'
import { FuzzServer, FuzzStats, PROPERTIES, type PropertyRun, runProperty, runRoundTrip, SUNSET_NOW, SUNSET_PROPERTY } from './runner.js'
import { sendHttp } from './transport.js'

const SCALE = Number(process.env.FUZZ_CI_RUNS ?? 1)
const RUNS: Record<string, number> = {
  [PROPERTIES[0]!.name]: 300, // abuse
  [PROPERTIES[1]!.name]: 200, // round trip
  [PROPERTIES[2]!.name]: 40, // concurrency + paged walk
  [SUNSET_PROPERTY.name]: 100,
}
const runsOf = (p: PropertyRun) => Math.max(1, Math.round((RUNS[p.name] ?? 100) * SCALE))

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

  test('the round-trip property fails on a server that corrupts stored animals', async () => {
    const server = await FuzzServer.start()
    try {
      const pets = server.t.storage.pets
      const getPet = pets.getPet.bind(pets)
      // Sabotage: the stored categoryId comes back one higher (as a bigint beyond 2^53 would when rounded).
      pets.getPet = async (id) => {
        const pet = await getPet(id)
        return pet && { ...pet, categoryId: BigInt(pet.categoryId) + 1n }
      }
      const details = await fc.check(PROPERTIES[1]!.property(server, new FuzzStats()), { numRuns: 20, seed: 7 })
      assert.equal(details.failed, true, 'the sabotaged server passed the round-trip property')
      assert.match(String((details.errorInstance as Error | null)?.message), /categoryId/)
    } finally {
      await server.close()
    }
  })

  test('runProperty reports a failure with its seed and path', async () => {
    const server = await FuzzServer.start()
    try {
      const broken: PropertyRun = {
        name: 'always fails',
        property: () => fc.asyncProperty(fc.nat(), async (n) => assert.ok(n < 0)),
      }
      const result = await runProperty(broken, server, new FuzzStats(), { numRuns: 5, seed: 42 })
      assert.equal(result.failed, true)
      assert.equal(result.seed, 42)
      assert.equal(typeof result.path, 'string')
    } finally {
      await server.close()
    }
  })
})
