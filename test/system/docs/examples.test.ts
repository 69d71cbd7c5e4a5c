/**
 * Every runnable example of README.md and docs/ (```` ```sh runnable ```` blocks, see
 * test/system/docs/examples.ts) runs against a real server started the way the README says (`npm start`),
 * a new one per page, with `$KEY` the key that first start prints (`$KEY_ID` its id), `$ADMIN` an
 * admin token made with the CLI, and the documented ports replaced by the server's. What an example shows it prints
 * must be what the service answers, so the docs cannot drift from the code.
 *
 * Runs the real `npm start`, so it runs dist/: `npm run build` first.
 */
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import { adminOriginIn, childEnv, HANG_MS, ROOT, runCli, useTempDir, waitFor } from '../helpers/process.js'
import { differences, type Example, readPage, runnableExamples, userDocs } from './examples.js'

interface Started {
  env: NodeJS.ProcessEnv
  origin: string
  adminOrigin: string
  /** A directory of this test's own, removed after it. */
  dir: string
}

/** `npm start` in the repository on free ports and a new database; stopped (SIGTERM, then SIGKILL) after the test. */
async function npmStart(t: TestContext): Promise<Started> {
  assert.ok(existsSync(join(ROOT, 'dist', 'server.js')), 'dist/server.js is missing: run `npm run build` first')
  const dir = await useTempDir(t, 'animal-store-docs-')
  const db = join(dir, 'store.db')
  const env = childEnv({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: db, LOG_FILE: join(dir, 'server.log') })
  const npm: ChildProcess = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  let output = ''
  npm.stdout!.setEncoding('utf8').on('data', (s: string) => (output += s))
  npm.stderr!.setEncoding('utf8').on('data', (s: string) => (output += s))
  const closed = new Promise<void>((resolve) => npm.once('close', () => resolve()))
  t.after(async () => {
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      try {
        process.kill(-npm.pid!, signal)
      } catch {
        return // already gone
      }
      const timeout = new Promise<void>((resolve) => setTimeout(resolve, 5_000).unref())
      await Promise.race([closed, timeout])
      if (npm.exitCode !== null || npm.signalCode !== null) return
    }
  })
  const origin = () => /^Animal Store API listening on (http:\/\/127\.0\.0\.1:\d+)/m.exec(output)?.[1]
  const up = await waitFor(() => (origin() !== undefined && adminOriginIn(output) !== undefined) || npm.exitCode !== null, HANG_MS, 100)
  assert.ok(up && npm.exitCode === null, `npm start did not come up:\n${output}`)
  const key = /^ {2}(as_live_\w+)$/m.exec(output)?.[1]
  assert.ok(key, `the first start prints a key:\n${output}`)
  const created = await runCli(['admin-tokens', 'create', '--name', 'docs'], { db })
  const admin = /^ {2}(as_admin_\w+)$/m.exec(created.stdout)?.[1]
  assert.ok(admin, `admin-tokens create: ${created.stdout}${created.stderr}`)
  const keyId = /one Free key \(id (key_\w+)\)/.exec(output)?.[1]
  assert.ok(keyId, `the first start prints the key's id:\n${output}`)
  return { env: { ...env, KEY: key, KEY_ID: keyId, ADMIN: admin }, origin: origin()!, adminOrigin: adminOriginIn(output)!, dir }
}

/** The command as run here: the documented addresses are the server's, `$KEY` and `$ADMIN` come from the environment. */
function localised(command: string, server: Started): string {
  return command
    .replace(/https?:\/\/(?:localhost|127\.0\.0\.1):8080/g, server.origin)
    .replace(/https?:\/\/(?:localhost|127\.0\.0\.1):8081/g, server.adminOrigin)
}

function run(command: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-o', 'pipefail', '-c', command], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s))
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s))
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
    child.once('error', reject)
    child.once('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

/** An `export NAME=…` of a variable the test supplies (the reader pastes theirs): not run. */
const suppliedExport = (example: Example) => /^export (KEY|KEY_ID|ADMIN)=/.test(example.command)

/** What bash sets for itself, not what a page exports. */
const SHELL_OWN = new Set(['_', 'SHLVL', 'PWD', 'OLDPWD'])

/**
 * Runs an `export …` once, as the reader's shell does, and returns the environment it leaves for
 * the commands after it (each runs in a shell of its own): its `$(…)` are not run again, so a
 * token it creates is created once and a page's later commands cost no more than a reader's.
 */
async function exported(command: string, env: NodeJS.ProcessEnv, dir: string) {
  const file = join(dir, 'exported.env')
  const result = await run(`${command}\nstatus=$?; env -0 > '${file}'; exit $status`, env)
  const after = Object.fromEntries(
    readFileSync(file, 'utf8')
      .split('\0')
      .filter((entry) => entry.includes('='))
      .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)] as const)
      .filter(([name]) => !SHELL_OWN.has(name)),
  )
  return { ...result, env: after }
}

const pages = userDocs(ROOT).map((page) => [page, runnableExamples(page, readPage(ROOT, page))] as const)

test('the README and the API, keys, limits and operations pages have runnable examples', () => {
  const withExamples = pages.filter(([, examples]) => examples.length > 0).map(([page]) => page)
  for (const page of ['README.md', 'docs/api.md', 'docs/keys.md', 'docs/limits.md', 'docs/operations.md']) {
    assert.ok(withExamples.includes(page), `${page} has no \`\`\`sh runnable block`)
  }
})

for (const [page, examples] of pages) {
  if (examples.length === 0) continue
  test(`${page}: every runnable example runs and answers what it shows`, { timeout: 180_000 }, async (t) => {
    const server = await npmStart(t)
    let env = server.env
    for (const example of examples) {
      if (suppliedExport(example)) continue
      const command = localised(example.command, server)
      const answer = command.startsWith('export ') ? await exported(command, env, server.dir) : { ...(await run(command, env)), env }
      const { code, stdout, stderr } = answer
      env = answer.env
      assert.equal(code, 0, `${example.where}: \`${example.command}\` exited ${code}\n${stdout}${stderr}`)
      assert.deepEqual(differences(example, stdout), [], `${example.where}: \`${example.command}\` printed\n${stdout}`)
    }
  })
}
