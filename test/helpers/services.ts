import net from 'node:net'
import type { TestContext } from 'node:test'

/** Real servers for the tests that need them; CI sets REQUIRE_SERVICES=1 so that a skip fails. */
export const PG_URL = process.env.DATABASE_URL_PG ?? 'postgres://postgres@127.0.0.1:5432/test'
/**
 * What a test's store on the shared PostgreSQL waits to connect: a test process runs at a lower
 * priority beside the system tests' servers (test/kinds.mjs), and may wait seconds for the CPU alone.
 * Not for a test of the connect timeout itself.
 */
export const PG_PATIENCE = { connectTimeoutMs: 30_000 } as const
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
export const REQUIRE_SERVICES = process.env.REQUIRE_SERVICES === '1'
/**
 * TEST_SERVICES=none (the fast tier, `npm run test:fast`): the tests run without PostgreSQL and
 * Redis, on purpose. Their parts that need one are skipped quietly: `npm test` runs them.
 */
export const SERVICES_OFF = process.env.TEST_SERVICES === 'none'

function reachable(url: string, defaultPort: number): Promise<boolean> {
  const u = new URL(url)
  return new Promise((resolve) => {
    const socket = net.connect({ host: u.hostname || '127.0.0.1', port: Number(u.port || defaultPort) })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(1000, () => done(false))
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
  })
}

export const pgReachable = async () => !SERVICES_OFF && (await reachable(PG_URL, 5432))
export const redisReachable = async () => !SERVICES_OFF && (await reachable(REDIS_URL, 6379))

/**
 * A prerequisite of the test is missing: fails when `required` (REQUIRE_SERVICES=1, as CI sets),
 * otherwise skips the test with a loud message on stderr. Returns false, for `if (!...) return`.
 */
export function missingPrerequisite(t: TestContext, why: string, required = REQUIRE_SERVICES): false {
  if (required) throw new Error(`required but missing: ${why}`)
  process.stderr.write(`\n!!! SKIPPED: ${why} — "${t.name}" did not run !!!\n\n`)
  t.skip(why)
  return false
}

/**
 * Call at the top of a test that needs a service. Unreachable: fails under REQUIRE_SERVICES=1,
 * otherwise skips with a loud message on stderr. Returns true when the test may go on.
 */
export async function requireService(t: TestContext, name: 'PostgreSQL' | 'Redis'): Promise<boolean> {
  if (SERVICES_OFF) {
    t.skip(`${name}: not in the fast tier (TEST_SERVICES=none)`)
    return false
  }
  const ok = name === 'PostgreSQL' ? await pgReachable() : await redisReachable()
  return ok || missingPrerequisite(t, `${name} unreachable at ${name === 'PostgreSQL' ? PG_URL : REDIS_URL}`)
}
