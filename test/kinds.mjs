#!/usr/bin/env node
/**
 * The test files by kind, derived from where they live (the first directory under test/, or the
 * file's own path when it is listed by name), so a new file needs no list:
 *
 *   unit    no HTTP server, no real process: pure functions, config, keys, limiters, storage
 *           contracts (SQLite in memory; PostgreSQL and Redis when reachable)
 *   http    the app in this process: app.inject, or a loopback socket (the client's
 *           retries against a scripted server on a virtual clock)
 *   fuzz    the app in this process under generated requests (property tests: the slow part of
 *           what needs no process)
 *   system  real processes: servers, CLI, cluster workers, faults, browser, bench smoke, soak, abuse
 *
 * Kinds group files by what they need, which is also how fast they are: unit, http and fuzz run in
 * this process only, so their files share nothing and run concurrently; system files start servers on
 * the machine's cores and time real events, so they run one at a time.
 *
 *   node test/kinds.mjs [KIND...] [node --test options]   runs those kinds (all when none given)
 *   node test/kinds.mjs fast                              unit + http without PostgreSQL and Redis
 *                                                         (TEST_SERVICES=none): the tier to run on
 *                                                         every change, in under a minute
 *   node test/kinds.mjs --list [KIND...]                  prints their files
 *
 * `npm test` runs every kind once (under c8); `npm run test:unit`, `test:http` and `test:system`
 * run one each, so together they run exactly the files `npm test` runs. A test file in a directory
 * of no kind stops every one of them (exit 2) until it is given a kind here.
 */
import { spawn } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

const KINDS = {
  unit: [
    'config.test.ts',
    'config-file.test.ts',
    'banner.test.ts',
    'control-characters.test.ts',
    'startup-error.test.ts',
    'keys',
    'limits',
    'storage',
    'project',
  ],
  http: [
    'http',
    'pets',
    'ops',
    'admin',
    // In this process, on a virtual clock or the built document: no server process.
    'client/retries.test.ts',
    'client/client-app.test.ts',
    'client/openapi-sync.test.ts',
  ],
  // The app in this process too, but hundreds of generated requests per property: a minute or more.
  fuzz: ['fuzz'],
  system: ['process', 'scale', 'faults', 'abuse', 'bench', 'client', 'docs'],
}

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const TEST_DIR = join(ROOT, 'test')

/** Every *.test.ts under test/, as paths relative to the repository root, sorted. */
function testFiles(dir = TEST_DIR) {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) =>
      entry.isDirectory() ? testFiles(join(dir, entry.name)) : entry.name.endsWith('.test.ts') ? [join(dir, entry.name)] : [],
    )
    .map((file) => relative(ROOT, file).split(sep).join('/'))
    .sort()
}

/** kind -> its files; throws naming the files that belong to no kind. */
function filesByKind() {
  const kindOf = new Map(Object.entries(KINDS).flatMap(([kind, places]) => places.map((place) => [place, kind])))
  const byKind = Object.fromEntries(Object.keys(KINDS).map((kind) => [kind, []]))
  const orphans = []
  for (const file of testFiles()) {
    const kind = kindOf.get(file.slice('test/'.length)) ?? kindOf.get(file.split('/')[1])
    if (kind) byKind[kind].push(file)
    else orphans.push(file)
  }
  if (orphans.length > 0) throw new Error(`test files of no kind (give their directory one in test/kinds.mjs): ${orphans.join(', ')}`)
  return byKind
}

/** Kinds whose files share nothing (no port, no process, no wall-clock budget): run concurrently. */
const CONCURRENT = new Set(['unit', 'http', 'fuzz'])
/** `fast`: these kinds, without the external servers. */
const FAST = ['unit', 'http']

/** Runs `files` with node --test; resolves with its exit status. */
function runFiles(files, { concurrency, env, nodeOptions }) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...nodeOptions, ...files], {
      cwd: ROOT,
      stdio: 'inherit',
      env: { ...process.env, ...env },
    })
    const forward = (signal) => child.kill(signal)
    for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, forward)
    child.on('close', (code, signal) => {
      for (const s of ['SIGINT', 'SIGTERM']) process.off(s, forward)
      resolve(code ?? (signal ? 1 : 0))
    })
  })
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2)
  const list = args.includes('--list')
  const fast = args.includes('fast')
  const kinds = fast ? FAST : args.filter((a) => !a.startsWith('--'))
  const nodeOptions = args.filter((a) => a.startsWith('--') && a !== '--list')
  const unknown = kinds.filter((k) => !(k in KINDS))
  if (unknown.length > 0) {
    process.stderr.write(`unknown test kind ${unknown.join(', ')}; kinds: ${Object.keys(KINDS).join(', ')}, or fast\n`)
    process.exit(2)
  }
  let byKind
  try {
    byKind = filesByKind()
  } catch (error) {
    process.stderr.write(`${error.message}\n`)
    process.exit(2)
  }
  const chosen = kinds.length > 0 ? kinds : Object.keys(KINDS)
  if (list) {
    process.stdout.write(chosen.flatMap((kind) => byKind[kind]).join('\n') + '\n')
  } else {
    // The concurrent kinds in one run (one summary), then the serial ones.
    const groups = [
      { files: chosen.filter((k) => CONCURRENT.has(k)).flatMap((k) => byKind[k]), concurrency: Math.max(2, availableParallelism()) },
      { files: chosen.filter((k) => !CONCURRENT.has(k)).flatMap((k) => byKind[k]), concurrency: 1 },
    ].filter((group) => group.files.length > 0)
    const env = fast ? { TEST_SERVICES: 'none' } : {}
    let status = 0
    for (const group of groups) status = (await runFiles(group.files, { ...group, env, nodeOptions })) || status
    process.exit(status)
  }
}
