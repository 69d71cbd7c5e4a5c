/**
 * The test runner (test/kinds.mjs): every test file is where the one rule puts it, under a name of
 * its own, and its kind follows from its place. Its watchdog: CI has a hard time limit, so a test
 * process that hangs must end as a named failure, with the processes it started, and a process a
 * file leaves behind must not outlive it.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
// @ts-expect-error: plain JavaScript without declarations
import { readFailures, runWatched, testLayout } from '../kinds.mjs'

const KINDS = fileURLToPath(new URL('../kinds.mjs', import.meta.url))

test('where a test goes: in this process by src/ folder, with real processes under system/, no name twice', () => {
  const layout = testLayout([
    'test/service.test.ts',
    'test/pets/routes.test.ts',
    'test/api/pets/list-pets.test.ts',
    'test/storage/sqlite/x.test.ts',
    'test/project/docs.test.ts',
    'test/fuzz/f.test.ts',
    'test/system/cli/cli.test.ts',
    'test/system/deploy/haproxy.test.ts',
    'test/system/pets/routes.test.ts',
    'test/process/cli.test.ts',
    'test/system/stray.test.ts',
    'test/system/scale/three.test.ts',
    'test/deploy/haproxy-config.test.ts',
    'test/nothing.test.ts',
  ])
  assert.deepEqual(layout.byKind, {
    unit: ['test/storage/sqlite/x.test.ts', 'test/project/docs.test.ts'],
    http: ['test/service.test.ts', 'test/pets/routes.test.ts', 'test/api/pets/list-pets.test.ts'],
    fuzz: ['test/fuzz/f.test.ts'],
    system: ['test/system/cli/cli.test.ts', 'test/system/deploy/haproxy.test.ts', 'test/system/pets/routes.test.ts'],
  })
  assert.deepEqual(layout.outOfPlace, [
    'test/process/cli.test.ts',
    'test/system/stray.test.ts',
    'test/system/scale/three.test.ts',
    'test/deploy/haproxy-config.test.ts',
    'test/nothing.test.ts',
  ])
  assert.deepEqual(layout.sharedNames, [
    ['test/pets/routes.test.ts', 'test/system/pets/routes.test.ts'],
    ['test/system/cli/cli.test.ts', 'test/process/cli.test.ts'],
  ])
})

test("the repository's test files follow the rule: the runner lists them all", () => {
  const { NODE_TEST_CONTEXT: _, ...env } = process.env
  const run = spawnSync(process.execPath, [KINDS, '--list'], { env, encoding: 'utf8' })
  assert.equal(run.stderr, '')
  assert.equal(run.status, 0)
  assert.ok(run.stdout.split('\n').filter((line) => line.endsWith('.test.ts')).length > 100, run.stdout)
})

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

test('a failing run ends with the failed tests by file, line and name, a crashed file named too', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kinds-failures-'))
  try {
    const failures = join(dir, 'failures.jsonl')
    const file = join(dir, 'sample.test.mjs')
    writeFileSync(
      file,
      [
        "import { describe, test } from 'node:test'",
        "describe('a suite', () => { test('fails inside', () => { throw new Error('first line\\nsecond line') }); test('passes', () => {}) })",
        "test('fails alone', () => { throw new Error('why') })",
        "test('passes too', () => {})",
        "test('rejects after it ended', () => { setTimeout(() => Promise.reject(new Error('late')), 10) })",
        "test('waits', () => new Promise((done) => setTimeout(done, 200)))",
      ].join('\n'),
    )
    const crash = join(dir, 'crash.test.mjs')
    writeFileSync(crash, 'process.exit(3)\n')
    // The runner itself, on these two files (as it runs system files).
    // Without node:test's marker for its own child processes, which would make the inner runs
    // report to this test instead of to the runner.
    const { NODE_TEST_CONTEXT: _, ...outer } = process.env
    const env = { ...outer, TEST_FAILURES_FILE: failures }
    const run = spawnSync(process.execPath, [KINDS, file, crash], { env, encoding: 'utf8' })
    assert.equal(run.status, 1, run.stderr)
    const recorded = readFailures(failures).map((f: { name: string; file: string }) => `${f.file} ${f.name}`)
    assert.ok(
      recorded.some((r: string) => r.endsWith('sample.test.mjs a suite > fails inside')),
      recorded.join('\n'),
    )
    assert.ok(
      recorded.some((r: string) => r.endsWith('sample.test.mjs fails alone')),
      recorded.join('\n'),
    )
    // node --test names a file that exits early as a failed test of its own.
    assert.ok(
      recorded.some((r: string) => r.includes('crash.test.mjs')),
      recorded.join('\n'),
    )
    assert.ok(
      recorded.some((r: string) => r.endsWith('sample.test.mjs rejects after it ended (went on after it ended)')),
      recorded.join('\n'),
    )
    assert.equal(recorded.filter((r: string) => r.includes('passes') || r.includes('waits')).length, 0)
    // The run's output ends with them, and so does `--failures` (what npm test prints after c8's table).
    const start = run.stdout.lastIndexOf('\n# 4 failed tests:')
    assert.ok(start > 0, run.stdout)
    const block = run.stdout.slice(start)
    assert.match(block, /sample\.test\.mjs:2 {2}a suite > fails inside\n#\s+first line\n/)
    assert.match(block, /sample\.test\.mjs:3 {2}fails alone\n#\s+why\n/)
    assert.equal(block.split('\n').filter((line) => /^# {3}\S/.test(line)).length, 4, block)
    const again = spawnSync(process.execPath, [KINDS, '--failures'], { env, encoding: 'utf8' })
    assert.equal(again.status, 1)
    assert.equal(again.stdout, block)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
