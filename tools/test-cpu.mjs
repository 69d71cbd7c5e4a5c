#!/usr/bin/env node
/**
 * Wall time and CPU seconds (user + system of the file's process and every descendant it reaped) of
 * test files, each run alone as CI runs it (coverage on, services required, spawned servers from
 * dist/): what a faster CI has to pack onto the machine's cores. Needs GNU time (/usr/bin/time).
 *
 *   npm run build && node tools/test-cpu.mjs $(node test/kinds.mjs --list system)
 *   COVERAGE=0 node tools/test-cpu.mjs test/system/cli/cli.test.ts     # without V8 coverage
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const coverage = process.env.COVERAGE !== '0'
let totalCpu = 0
let totalWall = 0
for (const file of process.argv.slice(2)) {
  const dir = mkdtempSync(join(tmpdir(), 'test-cpu-'))
  const env = { ...process.env, CI: 'true', REQUIRE_SERVICES: '1', ANIMAL_STORE_TEST_BUILD: 'dist' }
  // As test/kinds.mjs runs a system file under c8: the processes it starts are covered, not its own.
  if (coverage) env.ANIMAL_STORE_CHILD_COVERAGE = dir
  const preload = coverage ? ['--import', join(ROOT, 'test', 'system', 'helpers', 'child-coverage.mjs')] : []
  const run = spawnSync(
    '/usr/bin/time',
    ['-f', '%e %U %S', process.execPath, ...preload, '--import', 'tsx', '--test', '--test-concurrency=1', file],
    {
      cwd: ROOT,
      env,
      encoding: 'utf8',
    },
  )
  const [wall, user, system] = run.stderr.trim().split('\n').at(-1).split(' ').map(Number)
  const processes = readdirSync(dir).length // one coverage file per Node process
  rmSync(dir, { recursive: true, force: true })
  totalCpu += user + system
  totalWall += wall
  const failed = /^# fail [1-9]/m.test(run.stdout) ? '  FAILED' : ''
  console.log(
    `${file}\twall ${wall.toFixed(1)} s\tcpu ${(user + system).toFixed(1)} s${coverage ? `\tnode processes ${processes}` : ''}${failed}`,
  )
}
console.log(`total\twall ${totalWall.toFixed(0)} s\tcpu ${totalCpu.toFixed(0)} s`)
