/**
 * One configuration for the server and the CLI: the commands the start-up banner prints, pasted
 * into a fresh shell in the server's working directory (no service variables in its environment),
 * act on the server's database, whether the server read it from a .env file there or from its
 * own environment.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import { promisify } from 'node:util'
import {
  bearer,
  childEnv,
  HANG_MS,
  REVOCATION_DEADLINE_MS,
  request,
  type ServerProcess,
  startServer,
  useTempDir,
  waitFor,
} from '../helpers/process.js'

const ANY_KEY = /as_(?:live|test)_[0-9A-Za-z]{38}/

/** A command as a person pastes it: `sh -c` in `cwd`, with none of the service's variables set. */
async function pasted(command: string, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = childEnv({ ANIMAL_STORE_CONFIG_FILE: undefined, ADMIN_PORT: undefined })
  try {
    const { stdout, stderr } = await promisify(execFile)('sh', ['-c', command], { cwd, env, timeout: HANG_MS })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string }
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' }
  }
}

/** The commands the banner printed: how to create a key, and how to revoke the first one. */
function printedCommands(server: ServerProcess): { create: string; revoke: string; firstKey: string } {
  const out = server.stdout()
  const create = /^ {2}New API key: (.+)$/m.exec(out)?.[1]
  const revoke = /^Revoke it with: (.+)$/m.exec(out)?.[1]
  const firstKey = ANY_KEY.exec(out)?.[0]
  assert.ok(create !== undefined && revoke !== undefined && firstKey !== undefined, `the banner:\n${out}`)
  return { create: create.replace(/NAME$/, 'pasted'), revoke, firstKey }
}

async function assertCommandsActOnTheServer(t: TestContext, server: ServerProcess, cwd: string): Promise<void> {
  const { create, revoke, firstKey } = printedCommands(server)
  const pets = (key: string) => request(`${server.url}/v1/pets?limit=1`, { headers: bearer(key) })
  assert.equal((await pets(firstKey)).status, 200)

  const created = await pasted(create, cwd)
  assert.equal(created.code, 0, `${create}\n${created.stderr}`)
  const newKey = ANY_KEY.exec(created.stdout)?.[0]
  assert.ok(newKey !== undefined, created.stdout)
  assert.equal((await pets(newKey)).status, 200, 'the key the pasted command created is in the server’s database')

  const revoked = await pasted(revoke, cwd)
  assert.equal(revoked.code, 0, `${revoke}\n${revoked.stderr}`)
  const refused = await waitFor(async () => (await pets(firstKey)).status === 401, REVOCATION_DEADLINE_MS)
  assert.ok(refused, 'the key the pasted command revoked is refused by the server')
  assert.equal(existsSync(join(cwd, 'data')), false, 'no default database was created beside it')
  t.diagnostic(`pasted: ${revoke}`)
}

test('a .env file in the working directory: the server reads it, and the commands its banner prints act on the same database', {
  timeout: 120_000,
}, async (t) => {
  const cwd = await useTempDir(t)
  const db = join(cwd, 'store.db')
  await writeFile(join(cwd, '.env'), `# written by the operator\nDATABASE_URL=${db}\n`)
  const server = await startServer(t, {
    dir: cwd,
    cwd,
    // Nothing of the database in the server's environment: only in the file. The first key is printed.
    env: { DATABASE_URL: undefined, ANIMAL_STORE_CONFIG_FILE: undefined, BOOTSTRAP_KEY: undefined },
  })
  assert.match(server.stdout(), /^ {2}Config: {6}\.env \(the environment overrides it; the CLI reads both\)$/m)
  assert.ok(existsSync(db), 'the database the file names')
  await assertCommandsActOnTheServer(t, server, cwd)
  assert.equal((await server.stop()).code, 0)
})

test('DATABASE_URL only in the server’s environment: the commands its banner prints carry it', { timeout: 120_000 }, async (t) => {
  const cwd = await useTempDir(t)
  const db = join(cwd, 'store.db')
  // The helpers' default: DATABASE_URL in the environment, no config file (ANIMAL_STORE_CONFIG_FILE=off).
  const server = await startServer(t, { dir: cwd, cwd, db, env: { BOOTSTRAP_KEY: undefined } })
  assert.match(server.stdout(), new RegExp(`^Revoke it with: DATABASE_URL=${db.replaceAll('.', '\\.')} `, 'm'))
  await assertCommandsActOnTheServer(t, server, cwd)
  assert.equal((await server.stop()).code, 0)
})
