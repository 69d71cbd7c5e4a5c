/**
 * The test runner's watchdog (test/kinds.mjs): CI has a hard time limit, so a test process that
 * hangs must end as a named failure, with the processes it started, and a process a file leaves
 * behind must not outlive it.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
// @ts-expect-error: plain JavaScript without declarations
import { runWatched } from '../kinds.mjs'

interface Watched {
  status: number
  output: string
}

/** Running (a zombie, killed but not yet reaped by whoever inherited it, is not). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return false
  }
}

/** A node process that starts `sleep 300` in its group, prints its pid, then runs `rest`. */
const withSleeper = (rest: string) =>
  `const c = require('node:child_process').spawn('sleep', ['300'], { stdio: 'ignore' }); console.log('sleeper', c.pid); ${rest}`

const sleeperOf = (output: string) => Number(/sleeper (\d+)/.exec(output)?.[1])

test('a test process that hangs is stopped at its time limit, with what it started, and fails', { timeout: 60_000 }, async () => {
  const result = (await runWatched(['-e', withSleeper('setInterval(() => {}, 1000)')], {
    buffer: true,
    timeoutS: 2,
    label: 'the hanging file',
  })) as Watched
  assert.equal(result.status, 1)
  assert.match(result.output, /# TIMED OUT after 2 s: the hanging file; stopping its processes:\n.*sleep 300/s)
  assert.equal(alive(sleeperOf(result.output)), false, 'the sleeper was killed with its group')
})

test('a process left behind by a test process that passed is killed and named', { timeout: 60_000 }, async () => {
  const result = (await runWatched(['-e', withSleeper('c.unref()')], { buffer: true, timeoutS: 60, label: 'the leaky file' })) as Watched
  assert.equal(result.status, 0, 'the file itself passed')
  assert.match(result.output, /# the leaky file left processes running; killed:\n.*sleep 300/)
  assert.equal(alive(sleeperOf(result.output)), false)
})

test('a test process that passes leaves its status and output alone', async () => {
  const result = (await runWatched(['-e', 'console.log("fine")'], { buffer: true, timeoutS: 60, label: 'the good file' })) as Watched
  assert.deepEqual(result, { status: 0, output: 'fine\n' })
})
