// The service as a command, for the tests, the benchmark and the soak: the arguments that start
// its server or its CLI (from the build or from the source), and a key made with the CLI. Each
// harness runs the command its own way (it tracks the children it starts) and passes that in.
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** tsx by its path, so that a child in a working directory outside the project finds it too. */
const TSX = fileURLToPath(import.meta.resolve('tsx'))

/**
 * The arguments after `node` that run the service's server or CLI: the build (`dist`/<entry>.js,
 * default dist/) or, with `source`, src/<entry>.ts through tsx (no build needed).
 *
 * @param {'server' | 'cli'} entry
 * @param {{ source?: boolean, dist?: string }} [options]
 * @returns {string[]}
 */
export function entryArgs(entry, { source = false, dist = join(ROOT, 'dist') } = {}) {
  return source ? ['--import', TSX, join(ROOT, 'src', `${entry}.ts`)] : [join(dist, `${entry}.js`)]
}

/**
 * @typedef {object} KeyOptions
 * @property {string} [plan] default free
 * @property {string} [name] default test
 * @property {number} [perMinute] a custom limit (enterprise)
 * @property {number} [perDay] a custom limit (enterprise)
 */

/**
 * @typedef {object} CreatedKey the admin API's view of the key (`keys create --json`'s apiKey), with the key itself
 * @property {string} key
 * @property {string} id
 * @property {string} plan
 * @property {string} prefix
 * @property {number} perMinute
 * @property {number} perDay
 */

/**
 * Makes a key with `animal-store keys create … --json`, run by `runCli` (the harness's own way to
 * run the CLI with these arguments to its end); throws with what the CLI said when it failed.
 *
 * @param {(args: string[]) => Promise<{ code: number | null, signal?: string | null, stdout: string, stderr: string }>} runCli
 * @param {KeyOptions} [options]
 * @returns {Promise<CreatedKey>}
 */
export async function createKeyWithCli(runCli, { plan = 'free', name = 'test', perMinute, perDay } = {}) {
  const args = ['keys', 'create', '--plan', plan, '--name', name, '--json']
  if (perMinute !== undefined) args.push('--per-minute', String(perMinute))
  if (perDay !== undefined) args.push('--per-day', String(perDay))
  const result = await runCli(args)
  if (result.code !== 0) throw new Error(`keys create failed (${result.code ?? result.signal}): ${(result.stderr || result.stdout).trim()}`)
  const { key, apiKey } = JSON.parse(result.stdout) // the admin API's 201: {"key","apiKey"}
  return { ...apiKey, key }
}
