import type { TestContext } from 'node:test'
import net from 'node:net'

/** Real servers for the tests that need them; CI sets REQUIRE_SERVICES=1 so that a skip fails. */
export const PG_URL = process.env.DATABASE_URL_PG ?? 'postgres://postgres@127.0.0.1:5432/test'
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
export const REQUIRE_SERVICES = process.env.REQUIRE_SERVICES === '1'

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

export const pgReachable = () => reachable(PG_URL, 5432)
export const redisReachable = () => reachable(REDIS_URL, 6379)

/**
 * Call at the top of a test that needs a service. Unreachable: fails under REQUIRE_SERVICES=1,
 * otherwise skips with a loud message on stderr. Returns true when the test may go on.
 */
export async function requireService(t: TestContext, name: 'PostgreSQL' | 'Redis'): Promise<boolean> {
  const ok = name === 'PostgreSQL' ? await pgReachable() : await redisReachable()
  if (ok) return true
  const where = name === 'PostgreSQL' ? PG_URL : REDIS_URL
  if (REQUIRE_SERVICES) throw new Error(`${name} is required (REQUIRE_SERVICES=1) but unreachable at ${where}`)
  process.stderr.write(`\n!!! SKIPPED: ${name} unreachable at ${where} — "${t.name}" did not run !!!\n\n`)
  t.skip(`${name} unreachable at ${where}`)
  return false
}
