#!/usr/bin/env node
/**
 * The test files by kind, derived from where they live, so a new file needs no list. Where a test
 * lives follows one rule (docs/development.md): a test that runs in this process mirrors src/,
 * test/<folder>/ for src/<folder>/ (test/<name>.test.ts for src/<name>.ts), and one that starts
 * real processes (the service, its CLI, a browser, a throwaway server) is test/system/<folder>/,
 * by the same folder. What no src/ folder holds has a folder of its own, in this process or under
 * system/ alike: client/ (the client package), console/ (the console's pure modules), project/ (the repository itself), tools/ (what the
 * tests and the benchmark share), fuzz/ (the whole API under generated requests), bench/, deploy/
 * and docs/ (the benchmark, the shipped deployment files, the user docs' examples). No two test
 * files share a name.
 *
 *   unit    no HTTP server, no real process: pure functions, config, keys, limiters, storage
 *           contracts (SQLite in memory; PostgreSQL and Redis when reachable)
 *   http    the app in this process: app.inject, or a loopback socket (the client's
 *           retries against a scripted server on a virtual clock)
 *   fuzz    the app in this process under generated requests (property tests: the slow part of
 *           what needs no process)
 *   system  real processes (test/system/): servers, CLI, cluster workers, faults, browser, bench
 *           smoke, soak, abuse
 *
 * Kinds group files by what they need, which is also how fast they are: unit, http and fuzz run in
 * this process only, so their files share nothing and run concurrently (unit and http dealt into
 * one process per core, fuzz files in their own); system files start servers on the machine's cores
 * and time real events, so they run three at a time (EXCLUSIVE ones alone, first), apart from the
 * BACKGROUND files, which mostly wait and start at once beside everything. Both start together: the
 * in-process kinds at a lower priority (IN_PROCESS_NICENESS), on the CPU the system files leave
 * while they wait on their servers, so that a system file's timing is as if they were not there.
 * `npm test` finds the build up to date (scripts/build.mjs) and prints, at the end, the system files
 * by duration and when each part ended.
 *
 *   node test/kinds.mjs [KIND...] [node --test options]   runs those kinds (all when none given)
 *   node test/kinds.mjs fast                              unit + http without PostgreSQL and Redis
 *                                                         (TEST_SERVICES=none): the tier to run on
 *                                                         every change, in under a minute
 *   node test/kinds.mjs --list [KIND...]                  prints their files
 *   node test/kinds.mjs FILE...                           runs those files one at a time, as system
 *                                                         files run, under the same watchdog
 *   node test/kinds.mjs --failures                        prints the failed tests of the last run
 *                                                         and exits 1 (`npm test` calls it after
 *                                                         c8's coverage table, so that a failing
 *                                                         run ends with the names of what failed)
 *
 * `npm test` runs every kind once (under c8); `npm run test:unit`, `test:http` and `test:system`
 * run one each, so together they run exactly the files `npm test` runs. A test file out of place,
 * or with a name another test file has, stops every one of them (exit 2) until it is moved.
 */
import { spawn, spawnSync } from 'node:child_process'
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { availableParallelism, devNull, setPriority } from 'node:os'
import { basename, dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const TEST_DIR = join(ROOT, 'test')

const KINDS = ['unit', 'http', 'fuzz', 'system']

/** src/'s folders: each has its place in this process (test/<folder>/) and under test/system/. */
const SRC_FOLDERS = readdirSync(join(ROOT, 'src'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)

/** Where a test may live, besides src/'s folders: in this process, and with real processes. */
export const PLACES = {
  inProcess: [...SRC_FOLDERS, 'client', 'console', 'project', 'tools', 'fuzz'],
  system: [...SRC_FOLDERS, 'bench', 'client', 'deploy', 'docs', 'project'],
}

/**
 * The in-process places of the http kind (the app in this process, through app.inject or a
 * loopback socket); test/fuzz/ is the fuzz kind (the app too, but hundreds of generated requests
 * per property: a minute or more); every other in-process place is unit.
 */
const HTTP_PLACES = new Set(['http', 'auth', 'api', 'pets', 'orders', 'ops', 'admin', 'client'])

/** The kind of a test file (a path from the repository root), or undefined when it is out of place. */
function kindOf(file) {
  const [, first, second, ...rest] = file.split('/')
  // test/<name>.test.ts tests src/<name>.ts, the app as a whole (service, app): the http kind.
  if (second === undefined) return existsSync(join(ROOT, 'src', first.replace(/\.test\.ts$/, '.ts'))) ? 'http' : undefined
  if (first === 'system') return rest.length > 0 && PLACES.system.includes(second) ? 'system' : undefined
  if (!PLACES.inProcess.includes(first)) return undefined
  return first === 'fuzz' ? 'fuzz' : HTTP_PLACES.has(first) ? 'http' : 'unit'
}

/**
 * Every *.test.ts under test/, as paths relative to the repository root, sorted, whatever the
 * working directory (the runner runs its files from the root).
 */
function testFiles() {
  return readdirSync(TEST_DIR, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.test.ts'))
    .map((entry) =>
      relative(ROOT, join(entry.parentPath ?? entry.path, entry.name))
        .split(sep)
        .join('/'),
    )
    .sort()
}

/**
 * `files` (paths from the repository root) by kind, and what breaks the rule: files out of place,
 * and names that more than one file has (a newcomer searching for a test by its name finds one).
 */
export function testLayout(files) {
  const byKind = Object.fromEntries(KINDS.map((kind) => [kind, []]))
  const outOfPlace = []
  const byName = new Map()
  for (const file of files) {
    const kind = kindOf(file)
    if (kind) byKind[kind].push(file)
    else outOfPlace.push(file)
    byName.set(basename(file), [...(byName.get(basename(file)) ?? []), file])
  }
  const sharedNames = [...byName.values()].filter((same) => same.length > 1)
  return { byKind, outOfPlace, sharedNames }
}

/** kind -> its files; throws naming the files that break the rule. */
function filesByKind() {
  const { byKind, outOfPlace, sharedNames } = testLayout(testFiles())
  const problems = []
  if (outOfPlace.length > 0)
    problems.push(
      `test files out of place (test/<src folder>/ in this process, test/system/<src folder>/ with real processes; ` +
        `besides src/'s folders: ${PLACES.inProcess.filter((p) => !SRC_FOLDERS.includes(p)).join(', ')} in this process, ` +
        `${PLACES.system.filter((p) => !SRC_FOLDERS.includes(p)).join(', ')} under system/): ${outOfPlace.join(', ')}`,
    )
  for (const same of sharedNames) problems.push(`test files with the same name (give each its own): ${same.join(', ')}`)
  if (problems.length > 0) throw new Error(problems.join('\n'))
  return byKind
}

/** Kinds whose files share nothing (no port, no process, no wall-clock budget): run concurrently. */
const CONCURRENT = new Set(['unit', 'http', 'fuzz'])
/**
 * The niceness of the in-process kinds' processes while system files run beside them: the
 * scheduler gives a process of niceness 10 about a tenth of what one of 0 gets when both want a
 * core, so a system file's servers and clients run nearly as if the in-process tests were not
 * there, and the in-process tests run on what the system files leave (most of a system file's time
 * is spent waiting on its servers). They share nothing with the system files (no port, no wall-clock
 * budget); their waits on the shared PostgreSQL and Redis are bounded as generously as on a busy
 * machine.
 */
const IN_PROCESS_NICENESS = 10
/** `fast`: these kinds, without the external servers. */
const FAST = ['unit', 'http']

/**
 * System files that mostly wait (a 2-minute proof that spends under a tenth of a core): they start
 * with the concurrent kinds and run beside everything else, EXCLUSIVE files included, rather than
 * hold the machine for their wall time.
 */
const BACKGROUND = new Set(['test/system/client/free-key-proof.test.ts'])

/**
 * System files that must have the machine to themselves (among system files; the in-process kinds
 * still fill what they leave, at a lower priority): they saturate the cores on purpose (the
 * benchmark's smoke run and the soak, which would starve a neighbour), or hold a timing bound that a
 * second busy process would eat into (a latency under attack, a failover within the limiter's
 * 500 ms command timeout, exact counts that a decision past that timeout would make the
 * fallback's). A file that only needs its servers to answer within generous deadlines, however
 * busy it keeps the machine, runs beside another: crash-durability's kills and checks hold
 * whatever the speed (only a create that waits 8 s for its answer fails it; it passed one at a time
 * on a machine with five runnable processes per core, and beside the other system files).
 */
const EXCLUSIVE = new Set([
  'test/system/bench/bench-smoke.test.ts',
  'test/system/bench/soak-short.test.ts',
  'test/system/http/slow-clients.test.ts',
  'test/system/shared/outages.test.ts',
  'test/system/limits/redis-limiter-outage.test.ts',
  'test/system/limits/redis-sentinel.test.ts',
  'test/system/limits/redis-cluster.test.ts',
  'test/system/deploy/three-instances.test.ts',
])

/**
 * Seconds a system file may run, and the concurrent kinds together, before it is stopped as hung
 * (the concurrent kinds run on what the system files leave them: on a machine busy with something
 * else too, far longer than alone).
 */
const FILE_TIMEOUT_S = Number(process.env.TEST_FILE_TIMEOUT_S ?? 600)
const PHASE_TIMEOUT_S = Number(process.env.TEST_PHASE_TIMEOUT_S ?? 1500)
/** Seconds the whole run may take (CI's own limit is 90 minutes; a normal run takes under 20). */
const TOTAL_TIMEOUT_S = Number(process.env.TEST_TOTAL_TIMEOUT_S ?? 3600)

/**
 * Where every test process records its failed tests (test/failures-reporter.mjs), one JSON line
 * each, and the runner what failed without a test to name (a file that crashed or timed out).
 */
export const FAILURES_FILE = process.env.TEST_FAILURES_FILE ?? join(ROOT, 'node_modules', '.cache', 'animal-store', 'test-failures.jsonl')
const FAILURES_REPORTER = join(ROOT, 'test', 'failures-reporter.mjs')

/**
 * node --test options: the usual report on the output (TAP when it is captured, spec on a
 * terminal, as node chooses by itself), and the failures recorder beside it.
 */
function reporterOptions(buffered) {
  const visible = buffered || !process.stdout.isTTY ? 'tap' : 'spec'
  return [
    '--test-reporter',
    visible,
    '--test-reporter-destination',
    'stdout',
    '--test-reporter',
    FAILURES_REPORTER,
    '--test-reporter-destination',
    devNull,
  ]
}

/** The failures recorded since the run began: [{file, line, name, message}]. */
export function readFailures(file = FAILURES_FILE) {
  let text = ''
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return []
  }
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line))
}

/** A failed run's last lines: each failed test by file, line and name, with the first line of why. */
export function formatFailures(failures) {
  if (failures.length === 0) return '\n# the run failed, but no failed test was recorded: see the output above\n'
  const lines = failures.map(
    ({ file, line, name, message }) => `#   ${file}${line ? `:${line}` : ''}  ${name}${message ? `\n#       ${message}` : ''}`,
  )
  return `\n# ${failures.length} failed test${failures.length === 1 ? '' : 's'}:\n${lines.join('\n')}\n`
}

/** A file whose process failed with no failed test of its own recorded (it crashed, hung or leaked a handle). */
function recordFileFailure(files, why) {
  const recorded = new Set(readFailures().map((failure) => failure.file))
  const unnamed = files.filter((file) => !recorded.has(file))
  if (unnamed.length === files.length)
    appendFileSync(
      FAILURES_FILE,
      `${JSON.stringify({ file: files.length === 1 ? files[0] : `${files.length} files (${files.join(', ')})`, name: `(the file's process failed: ${why})` })}\n`,
    )
}

/** Every test process running now (each leads a process group of its own: the servers it starts). */
const testProcesses = new Set()
let stopping = false

/** The processes of a group, as `ps` shows them (what a hung or leaky file left behind). */
function groupProcesses(pgid) {
  const ps = spawnSync('ps', ['-eo', 'pid=,pgid=,stat=,etimes=,args='], { encoding: 'utf8' })
  return (ps.stdout ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => {
      const [, group, stat] = line.split(/\s+/)
      return group === String(pgid) && !stat.startsWith('Z') // a zombie is gone, but for its parent's wait
    })
}

function killGroup(pgid, signal) {
  try {
    process.kill(-pgid, signal)
  } catch {
    // already gone
  }
}

/**
 * SIGKILL is delivered when the kernel next schedules the process, not when kill() returns: on a
 * busy machine a killed process can still be running a moment later (CI saw it). Waits, up to
 * 5 s, until the group has no live process, so that "killed" is true when it is printed.
 */
async function killGroupAndWait(pgid) {
  killGroup(pgid, 'SIGKILL')
  for (let waited = 0; waited < 5000 && groupProcesses(pgid).length > 0; waited += 50) {
    await new Promise((done) => setTimeout(done, 50))
  }
}

/**
 * Runs node with `args` in a process group of its own, so that a file that hangs, or a stop of
 * this runner, takes the servers it started down with it. CI has a hard time limit: a hung file
 * must end as a named failure well inside it, not as a silent timeout of the whole run. A process
 * left in the group after the file's node has exited is a leak: it is listed and killed.
 */
export function runWatched(args, { env = {}, buffer = false, timeoutS, label, niceness = 0 }) {
  return new Promise((resolve) => {
    if (stopping) return resolve({ status: 1, output: '' })
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      stdio: buffer ? ['ignore', 'pipe', 'pipe'] : 'inherit',
      env: { ...process.env, ...env },
      detached: true,
    })
    // Before it has started anything: the processes it starts inherit it.
    if (niceness !== 0 && child.pid !== undefined) {
      try {
        setPriority(child.pid, niceness)
      } catch {
        // not permitted here: it runs at the runner's priority
      }
    }
    testProcesses.add(child)
    const closed = new Promise((done) => child.once('close', done))
    let output = ''
    if (buffer) for (const stream of [child.stdout, child.stderr]) stream.setEncoding('utf8').on('data', (s) => (output += s))
    // The runner's own notes go with the file's output (printed whole later) when it is buffered.
    const note = (text) => {
      if (buffer) output += text
      else process.stdout.write(text)
    }
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      const left = groupProcesses(child.pid)
      note(`\n# TIMED OUT after ${timeoutS} s: ${label}; stopping its processes:\n${left.map((l) => `#   ${l}\n`).join('')}`)
      killGroup(child.pid, 'SIGKILL')
    }, timeoutS * 1000)
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      testProcesses.delete(child)
      // Stop whatever the file left running (it holds the pipes, so 'close' would wait for it for
      // ever), after a moment's grace for what is already exiting; most files leave nothing.
      const settle = async () => {
        if (groupProcesses(child.pid).length > 0) await new Promise((done) => setTimeout(done, 500))
        const left = groupProcesses(child.pid)
        if (left.length > 0) {
          note(`\n# ${label} left processes running; killed:\n${left.map((l) => `#   ${l}\n`).join('')}`)
          await killGroupAndWait(child.pid)
        }
        // A process that escaped the group (its own session) may still hold a pipe: 5 s, then on.
        const drained = new Promise((done) => setTimeout(done, 5000).unref())
        await Promise.race([closed, drained])
        if (buffer) for (const stream of [child.stdout, child.stderr]) stream.destroy()
        resolve({ status: timedOut || stopping ? 1 : (code ?? (signal ? 1 : 0)), output, ...(timedOut ? { timedOut } : {}) })
      }
      settle()
    })
  })
}

/** On SIGINT/SIGTERM (CI's own time limit, Ctrl-C) or past the total limit: start nothing more and stop every test process. */
function stopOnSignal(signal) {
  if (stopping) return
  stopping = true
  const why = signal === 'deadline' ? `the run took more than ${TOTAL_TIMEOUT_S} s` : signal
  process.stdout.write(`\n# ${why}: stopping ${testProcesses.size} test process(es)\n`)
  for (const child of testProcesses) killGroup(child.pid, 'SIGTERM')
  setTimeout(() => {
    for (const child of testProcesses) killGroup(child.pid, 'SIGKILL')
    process.exit(signal === 'SIGINT' ? 130 : 143)
  }, 5000).unref()
}

/** Runs `files` with node --test; resolves with its exit status and output (streamed unless `buffer`). */
async function runFiles(files, { concurrency, env, nodeOptions, buffer = false, timeoutS = FILE_TIMEOUT_S, niceness = 0 }) {
  const args = ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...reporterOptions(buffer), ...nodeOptions, ...files]
  const result = await runWatched(args, { env, buffer, timeoutS, niceness, label: files.length === 1 ? files[0] : `${files.length} files` })
  if (result.status !== 0) recordFileFailure(files, result.timedOut ? `timed out after ${timeoutS} s` : `exit status ${result.status}`)
  return result
}

/**
 * The fast tier: the files dealt into one process per core (test/run-together.mjs), so that the
 * start-up of Node, tsx and the app's modules (about 2 s of CPU, more than most files' tests) is
 * paid once per core rather than once per file. `npm test` still runs every file in a process of
 * its own. Each process's report is printed whole when it ends.
 */
async function runTogether(files, { env, nodeOptions, niceness = 0 }) {
  const lanes = Math.min(files.length, Math.max(1, availableParallelism()))
  const buckets = Array.from({ length: lanes }, (_, i) => files.filter((_, j) => j % lanes === i))
  const results = await Promise.all(
    buckets.map(async (bucket) => {
      const args = ['--import', 'tsx', ...reporterOptions(true), ...nodeOptions, join('test', 'run-together.mjs'), ...bucket]
      const result = await runWatched(args, {
        env,
        buffer: true,
        niceness,
        timeoutS: PHASE_TIMEOUT_S,
        label: `${bucket.length} unit/http files together`,
      })
      if (result.status !== 0)
        recordFileFailure(bucket, result.timedOut ? `timed out after ${PHASE_TIMEOUT_S} s` : `exit status ${result.status}`)
      process.stdout.write(result.output)
      return result.status
    }),
  )
  return results.find((code) => code !== 0) ?? 0
}

/**
 * Under c8 (NODE_V8_COVERAGE set), a system file's own process is not covered, only the processes
 * it starts: it runs the test's client side (helpers, bursts of requests, tsx), whose coverage
 * reports nothing of src/, while V8's counting slowed it by a fifth and its file of coverage (a
 * megabyte or more) was written and read again by c8's report. The preload hands the directory
 * back to the environment its children inherit.
 */
const CHILD_COVERAGE_PRELOAD = join(TEST_DIR, 'system', 'helpers', 'child-coverage.mjs')
function systemFileRun(env, nodeOptions) {
  const coverage = process.env.NODE_V8_COVERAGE
  if (!coverage) return { env, nodeOptions }
  return {
    env: { ...env, NODE_V8_COVERAGE: undefined, ANIMAL_STORE_CHILD_COVERAGE: coverage },
    nodeOptions: ['--import', CHILD_COVERAGE_PRELOAD, ...nodeOptions],
  }
}

/** One system file in its own run, timed. */
async function runTimed(file, { env, nodeOptions, buffer }) {
  const started = performance.now()
  const result = await runFiles([file], { concurrency: 1, buffer, ...systemFileRun(env, nodeOptions) })
  return { file, ms: performance.now() - started, status: result.status, output: result.output }
}

/**
 * unit and http dealt into one process per core (as `fast` does, with the services), beside the fuzz
 * files, each in a process of its own: a process per file paid the start-up of Node, tsx and the
 * app's modules (about 2 s of CPU) sixty times over, more than most files' tests take.
 */
async function runConcurrentKinds(files, byKind, { env, nodeOptions, niceness = 0 }) {
  const fuzz = files.filter((file) => byKind.fuzz.includes(file))
  const together = files.filter((file) => !fuzz.includes(file))
  const [first, second] = await Promise.all([
    together.length > 0 ? runTogether(together, { env, nodeOptions, niceness }) : 0,
    fuzz.length > 0
      ? runFiles(fuzz, { concurrency: fuzz.length, env, nodeOptions, niceness, timeoutS: PHASE_TIMEOUT_S }).then((r) => r.status)
      : 0,
  ])
  return first || second
}

/**
 * The system files, each in its own run, `lanes` at a time (TEST_SYSTEM_LANES; EXCLUSIVE files
 * alone), each file's output printed whole when it ends when lanes run side by side. The EXCLUSIVE
 * files first, one after the other: each would otherwise wait, later, for both lanes to empty, and
 * the core such a file leaves idle goes to the in-process kinds, which have the most work left at
 * the start. Then the others, the longest first (from the durations below, as measured on a 2-core
 * machine), so that the last to start are short.
 */
async function runSystem(files, { lanes, env, nodeOptions }) {
  const longestFirst = (list) => [...list].sort((a, b) => (TYPICAL_SECONDS[b] ?? 20) - (TYPICAL_SECONDS[a] ?? 20))
  const queue =
    lanes > 1
      ? [...longestFirst(files.filter((f) => EXCLUSIVE.has(f))), ...longestFirst(files.filter((f) => !EXCLUSIVE.has(f)))]
      : [...files]
  const running = new Set()
  const durations = []
  let status = 0
  const start = (file) => {
    const run = runTimed(file, { env, nodeOptions, buffer: lanes > 1 }).then((result) => {
      running.delete(run)
      durations.push([file, result.ms, result.status])
      if (lanes > 1) process.stdout.write(result.output)
      status = result.status || status
    })
    running.add(run)
    return run
  }
  while (queue.length > 0 && !stopping) {
    const next = queue[0]
    const alone = EXCLUSIVE.has(next)
    if (running.size >= lanes || (running.size > 0 && alone) || [...running].some((r) => r.alone)) {
      await Promise.race(running)
      continue
    }
    queue.shift()
    const run = start(next)
    if (alone) run.alone = true
  }
  await Promise.all(running)
  return { status, durations }
}

/** When each part of the run ended, counted from its start (they run at the same time). */
function printTiers(tiers) {
  const seconds = (ms) => `${(ms / 1000).toFixed(0).padStart(4)} s`
  const ran = tiers.filter(([, ms]) => ms > 0)
  if (ran.length > 2) process.stdout.write(`\n# run times:\n${ran.map(([name, ms]) => `#   ${seconds(ms)}  ${name}\n`).join('')}`)
}

/** The files by duration, for whoever wants CI faster. */
function printDurations(durations, lanes) {
  const seconds = (ms) => `${(ms / 1000).toFixed(0).padStart(4)} s`
  process.stdout.write(`\n# system files by duration (${lanes} lane${lanes > 1 ? 's' : ''}, background files beside them):\n`)
  for (const [file, ms, code] of durations.sort((a, b) => b[1] - a[1])) {
    const how = EXCLUSIVE.has(file) ? '  (alone)' : BACKGROUND.has(file) ? '  (background)' : ''
    process.stdout.write(`#   ${seconds(ms)}  ${file}${code === 0 ? '' : '  FAILED'}${how}\n`)
  }
}

/**
 * Seconds each long system file takes on a 2-core machine beside another (for ordering only;
 * others: 20). Half what each took one at a time on a machine shared with ten other busy
 * processes, where a file waits for a core about half the time (tools/test-cpu.mjs).
 */
const TYPICAL_SECONDS = {
  'test/system/cli/cli.test.ts': 98,
  'test/system/deploy/haproxy.test.ts': 68,
  'test/system/cli/cli-keys.test.ts': 67,
  'test/system/lifecycle/workers.test.ts': 65,
  'test/system/docs/examples.test.ts': 58,
  'test/system/storage/crash-durability.test.ts': 51,
  'test/system/bench/bench-smoke.test.ts': 48,
  'test/system/orders/across-processes.test.ts': 42,
  'test/system/project/npm-start.test.ts': 38,
  'test/system/http/slow-clients.test.ts': 34,
  'test/system/deploy/pgbouncer.test.ts': 32,
  'test/system/orders/crash.test.ts': 32,
  'test/system/limits/limiter-state.test.ts': 30,
  'test/system/storage/sqlite-server-lock.test.ts': 30,
  'test/system/keys/key-propagation.test.ts': 28,
  'test/system/client/package-install.test.ts': 27,
  'test/system/deploy/three-instances.test.ts': 27,
  'test/system/limits/redis-cluster.test.ts': 25,
  'test/system/deploy/customer-quota.test.ts': 24,
  'test/system/limits/redis-sentinel.test.ts': 24,
  'test/system/shared/outages.test.ts': 24,
  'test/system/lifecycle/lifecycle.test.ts': 23,
  'test/system/bench/soak-short.test.ts': 20,
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2)
  const list = args.includes('--list')
  if (args.includes('--failures')) {
    process.stdout.write(formatFailures(readFailures()))
    process.exit(1)
  }
  const fast = args.includes('fast')
  const isFile = (a) => !a.startsWith('--') && (a.includes('/') || a.includes('.test.'))
  const named = args.filter(isFile).map((a) => relative(ROOT, resolve(a)).split(sep).join('/'))
  const kinds = fast ? FAST : args.filter((a) => !a.startsWith('--') && !isFile(a))
  const nodeOptions = args.filter((a) => a.startsWith('--') && a !== '--list')
  const unknown = kinds.filter((k) => !KINDS.includes(k))
  if (unknown.length > 0) {
    process.stderr.write(`unknown test kind ${unknown.join(', ')}; kinds: ${KINDS.join(', ')}, or fast\n`)
    process.exit(2)
  }
  let byKind
  try {
    byKind = filesByKind()
  } catch (error) {
    process.stderr.write(`${error.message}\n`)
    process.exit(2)
  }
  const chosen = kinds.length > 0 || named.length > 0 ? kinds : KINDS
  if (list) {
    process.stdout.write(chosen.flatMap((kind) => byKind[kind]).join('\n') + '\n')
  } else {
    for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, stopOnSignal)
    mkdirSync(dirname(FAILURES_FILE), { recursive: true })
    writeFileSync(FAILURES_FILE, '')
    setTimeout(() => stopOnSignal('deadline'), TOTAL_TIMEOUT_S * 1000).unref()
    // Every test process's failures recorder writes where --failures reads.
    const env = { TEST_FAILURES_FILE: FAILURES_FILE, ...(fast ? { TEST_SERVICES: 'none' } : {}) }
    const concurrent = chosen.filter((k) => CONCURRENT.has(k)).flatMap((k) => byKind[k])
    const system = [...chosen.filter((k) => !CONCURRENT.has(k)).flatMap((k) => byKind[k]), ...named]
    // Three system files at a time (two on a 1-core machine): most of a system file's time is spent
    // waiting on servers it started, so they share the cores well. On two cores, two at a time left
    // the cores idle 30% of the run (vmstat), in 503-531 s of system files; three, 456 s with the
    // cores busy through the lanes (one at a time had taken 14 min). The EXCLUSIVE files, which time
    // or saturate the machine, still run alone.
    const lanes = Number(process.env.TEST_SYSTEM_LANES ?? Math.min(3, availableParallelism() + 1))
    const background = system.filter((file) => BACKGROUND.has(file))
    const foreground = system.filter((file) => !BACKGROUND.has(file))
    const started = performance.now()
    const waiting = background.map((file) => runTimed(file, { env, nodeOptions, buffer: true }))
    // The in-process kinds and the system files start together, the in-process ones at a lower
    // priority (IN_PROCESS_NICENESS): they take the CPU the system files leave while they wait on
    // their servers, and yield it whenever a system file's processes want it.
    const niceness = foreground.length > 0 ? IN_PROCESS_NICENESS : 0
    const inProcess = (async () => {
      if (concurrent.length === 0) return { status: 0, ms: 0 }
      const status = fast
        ? await runTogether(concurrent, { env, nodeOptions })
        : await runConcurrentKinds(concurrent, byKind, { env, nodeOptions, niceness })
      return { status, ms: performance.now() - started }
    })()
    const systemRun = (async () => {
      if (foreground.length === 0) return { status: 0, durations: [], ms: 0 }
      const result = await runSystem(foreground, { lanes: Number.isInteger(lanes) && lanes > 0 ? lanes : 1, env, nodeOptions })
      return { ...result, ms: performance.now() - started }
    })()
    const [inProcessResult, systemResult] = await Promise.all([inProcess, systemRun])
    let status = inProcessResult.status || systemResult.status
    const timed = [...systemResult.durations]
    for (const result of await Promise.all(waiting)) {
      process.stdout.write(result.output)
      status = result.status || status
      timed.push([result.file, result.ms, result.status])
    }
    if (timed.length > 0) printDurations(timed, lanes)
    printTiers([
      [
        `in-process kinds (${chosen.filter((k) => CONCURRENT.has(k)).join(', ')})${niceness ? `, at niceness ${niceness}` : ''}`,
        inProcessResult.ms,
      ],
      [`system files, ${lanes} lane${lanes > 1 ? 's' : ''}`, systemResult.ms],
      ['whole run', performance.now() - started],
    ])
    if (status !== 0) process.stdout.write(formatFailures(readFailures()))
    process.exit(status)
  }
}
