/**
 * The store under the fuzzer: orders at once for one animal over real sockets, then a change of
 * the order and a second one, every answer judged by the oracle of the public document, and what
 * the answers say checked against the store's rules (docs/api.md, "The store"): one order holds an
 * animal, the others are 409 pet_not_available; only a placed order changes.
 */
import fc from 'fast-check'
import { clientAddress, type FuzzStats, REQUEST_TIMEOUT_MS } from './endpoint.js'
import type { PropertyRun } from './runner.js'
import type { FuzzServer } from './server.js'
import { sendHttp, type WireResponse } from './transport.js'

async function call(
  server: FuzzServer,
  stats: FuzzStats,
  problems: string[],
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  client = 1,
) {
  const res = await sendHttp({
    port: server.port,
    localAddress: clientAddress(client),
    method,
    path,
    headers: [
      ['authorization', `Bearer ${server.keys.valid}`],
      ...(body === undefined ? [] : [['content-type', 'application/json'] as [string, string]]),
    ],
    body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
    timeoutMs: REQUEST_TIMEOUT_MS,
  })
  const operation = server.oracle.surface.operationOf(method, path.split('?')[0]!)
  const verdict = server.oracle.judge(
    { operation: operation?.id, method, knownUnauthenticated: false, requestId: { sent: false }, wellFormed: true },
    res,
  )
  stats.record(verdict.label)
  problems.push(...verdict.problems.map((p) => `${method} ${path}: ${p}`))
  return res
}

const json = (res: WireResponse) => JSON.parse(res.body.toString('utf8')) as Record<string, unknown>

export const STORE_PROPERTY: PropertyRun = {
  name: 'store: orders at once for one animal, then a change: one holds it, each answer as documented',
  property: (server, stats) =>
    fc.asyncProperty(
      fc.integer({ min: 1, max: 8 }),
      fc.constantFrom('cancel', 'complete'),
      fc.constantFrom('available', 'pending', 'sold', undefined),
      async (copies, change, status) => {
        const problems: string[] = []
        const pet = json(
          await call(server, stats, problems, 'POST', '/v1/pets', { name: 'Stock', categoryId: 1, ...(status ? { status } : {}) }),
        )
        const answers = await Promise.all(
          Array.from({ length: copies }, (_, i) =>
            call(server, stats, problems, 'POST', '/v1/store/orders', { petId: pet.id }, 1 + (i % 200)),
          ),
        )
        const placed = answers.filter((r) => r.status === 201)
        const refused = answers.filter((r) => r.status === 409 && json(r).code === 'pet_not_available')
        const expected = status === 'available' ? 1 : 0
        if (placed.length !== expected || refused.length !== copies - expected)
          problems.push(`${copies} orders for an animal ${status ?? 'without a status'}: ${answers.map((r) => r.status).join(', ')}`)
        const location = placed[0]?.headers.location
        if (location !== undefined) {
          const got = await call(server, stats, problems, 'GET', location)
          if (got.status !== 200 || !got.body.equals(placed[0]!.body)) problems.push(`GET ${location} is not the order placed`)
          const first = await call(server, stats, problems, 'POST', `${location}/${change}`)
          const second = await call(server, stats, problems, 'POST', `${location}/${change === 'cancel' ? 'complete' : 'cancel'}`)
          if (first.status !== 200) problems.push(`${change} of a placed order answered ${first.status}`)
          if (second.status !== 409 || json(second).code !== 'order_not_placed')
            problems.push(`a change of a finished order answered ${second.status}`)
          const now = json(await call(server, stats, problems, 'GET', `/v1/pets/${pet.id}`))
          if (now.status !== (change === 'cancel' ? 'available' : 'sold'))
            problems.push(`after ${change}, the animal is ${String(now.status)}`)
        }
        await call(server, stats, problems, 'GET', '/v1/store/inventory')
        if (problems.length > 0) stats.fail(problems.slice(0, 10).join('\n'))
      },
    ),
}
