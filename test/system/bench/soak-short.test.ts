/**
 * The soak scenario (bench/soak.mjs) for 20 s: the whole mixed load runs, every response has an
 * expected status, every request is answered, the throttled key and keyless clients are banned,
 * every 201 is in the database afterwards, no log line holds part of a key, and the server shuts
 * down cleanly.
 *
 * Only what the service decides is asserted. RSS, fd and latency growth and the achieved rate move
 * with whatever else the machine runs (on a busy 2-core machine a 20 s run has shown a p99 growing
 * to 72 ms and 27 more open fds with every status right), so the soak's `limitsExceeded` are
 * printed here, not asserted; `npm run soak` (300 s) judges them. Runs src/ through tsx, or dist/
 * with ANIMAL_STORE_TEST_BUILD=dist (like the other process tests).
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { childEnv, ROOT, sleep } from '../helpers/process.js'

const SOAK = fileURLToPath(new URL('../../../bench/soak.mjs', import.meta.url))

interface SoakSummary {
  pass: boolean
  failures: string[]
  limitsExceeded: string[]
  requests: {
    sent: number
    unexpected: number
    unanswered: number
    byType: Record<string, { sent: number; expect: number[]; statuses: Record<string, number> }>
  }
  creates: { acknowledged: number; missing: number }
  bans: { throttledRateLimited: number; throttledBanned: number; keylessBanned: number }
  server: { exit: { code: number | null } | null; errorLogLines: number; secretLogLines: number }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

test('soak scenario, 20 s: expected statuses only, every request answered, bans, nothing lost, clean shutdown', {
  timeout: 180_000,
  skip: !existsSync('/proc/self/status') && 'needs Linux /proc',
}, async (t) => {
  const child = spawn(process.execPath, [SOAK], {
    cwd: ROOT,
    env: childEnv({
      SOAK_SECONDS: '20',
      SOAK_SERVER: process.env.ANIMAL_STORE_TEST_BUILD === 'dist' ? 'dist' : 'tsx',
      SOAK_KEEP_DIR: undefined,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (stdout += s))
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr += s))
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  )
  // If this test fails or times out: stop the soak (it stops its server); SIGKILL both if need be.
  const serverPid = () => Number(/server pid (\d+)/.exec(stderr)?.[1] ?? 0)
  const stopAll = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM')
      await Promise.race([closed, sleep(5000)])
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    }
    const pid = serverPid()
    if (pid && alive(pid)) process.kill(pid, 'SIGKILL')
  }
  t.after(stopAll)
  process.once('exit', () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    const pid = serverPid()
    if (pid && alive(pid)) process.kill(pid, 'SIGKILL')
  })

  const { code, signal } = await closed
  let summary: SoakSummary
  try {
    summary = JSON.parse(stdout)
  } catch {
    assert.fail(`no JSON summary (exit ${code ?? signal})\n--- stderr ---\n${stderr}\n--- stdout ---\n${stdout.slice(0, 2000)}`)
  }
  // The figures (RSS, fds, latency, rate) are printed; see the header for why they are not asserted.
  const { samples: _samples, ...brief } = summary as SoakSummary & { samples?: unknown }
  console.log(JSON.stringify(brief))

  if (summary.limitsExceeded.length > 0) console.log(`soak limits exceeded (reported, not asserted): ${summary.limitsExceeded.join('; ')}`)
  assert.deepEqual(summary.failures, [], `soak failures:\n${summary.failures.join('\n')}\n--- stderr ---\n${stderr.slice(-3000)}`)
  assert.equal(code, summary.pass ? 0 : 1, `exit status ${code ?? signal} for pass=${summary.pass}`)

  assert.equal(summary.requests.unexpected, 0)
  assert.equal(summary.requests.unanswered, 0)
  assert.ok(summary.creates.acknowledged > 0, 'animals were created')
  assert.equal(summary.creates.missing, 0, 'every 201 is in the database after the run')
  const seen = new Set<number>()
  for (const [name, type] of Object.entries(summary.requests.byType)) {
    assert.ok(type.sent > 0, `${name} was sent`)
    for (const status of Object.keys(type.statuses)) {
      assert.ok(type.expect.includes(Number(status)), `${name}: status ${status} is expected`)
      seen.add(Number(status))
    }
  }
  assert.deepEqual(
    [...seen].sort((a, b) => a - b),
    [200, 201, 400, 401, 404, 405, 415, 429],
  )
  assert.ok(summary.bans.throttledRateLimited > 0 && summary.bans.throttledBanned > 0, 'the throttled key was limited, then banned')
  assert.ok(summary.bans.keylessBanned > 0, 'keyless clients were banned')
  assert.equal(summary.server.exit?.code, 0, 'clean shutdown')
  assert.equal(summary.server.errorLogLines, 0)
  // A NUL in a name and a key pasted as a query parameter (with a character lost or added) were sent.
  assert.ok(summary.requests.byType.hostileText!.sent > 0)
  assert.equal(summary.server.secretLogLines, 0, 'no log line holds part of a key')
  assert.ok(serverPid() > 0)
  assert.equal(alive(serverPid()), false, 'the soak stopped its server')
})
