#!/usr/bin/env node
/**
 * The test files by kind, derived from where they live (the first directory under test/, or the
 * file's own name when it sits directly in test/), so a new file needs no list:
 *
 *   unit    no HTTP server, no real process: pure functions, config, keys, limiters, storage
 *           contracts (SQLite in memory; PostgreSQL and Redis when reachable)
 *   http    the app in this process: app.inject, or the fuzzer's loopback socket
 *   system  real processes: servers, CLI, cluster workers, faults, browser, bench smoke, soak, abuse,
 *           the docs' examples
 *
 *   node test/kinds.mjs [KIND...] [node --test options]   runs those kinds (all when none given)
 *   node test/kinds.mjs --list [KIND...]                  prints their files
 *
 * `npm test` runs every kind once (under c8); `npm run test:unit`, `test:http` and `test:system`
 * run one each, so together they run exactly the files `npm test` runs. A test file in a directory
 * of no kind stops every one of them (exit 2) until it is given a kind here.
 */
import { spawn } from 'node:child_process'
import { readdirSync } from 'node:fs'
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
  http: ['service.test.ts', 'http', 'pets', 'ops', 'fuzz', 'admin'],
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
    const kind = kindOf.get(file.split('/')[1])
    if (kind) byKind[kind].push(file)
    else orphans.push(file)
  }
  if (orphans.length > 0) throw new Error(`test files of no kind (give their directory one in test/kinds.mjs): ${orphans.join(', ')}`)
  return byKind
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2)
  const list = args.includes('--list')
  const kinds = args.filter((a) => !a.startsWith('--'))
  const nodeOptions = args.filter((a) => a.startsWith('--') && a !== '--list')
  const unknown = kinds.filter((k) => !(k in KINDS))
  if (unknown.length > 0) {
    process.stderr.write(`unknown test kind ${unknown.join(', ')}; kinds: ${Object.keys(KINDS).join(', ')}\n`)
    process.exit(2)
  }
  let files
  try {
    const byKind = filesByKind()
    files = (kinds.length > 0 ? kinds : Object.keys(KINDS)).flatMap((kind) => byKind[kind])
  } catch (error) {
    process.stderr.write(`${error.message}\n`)
    process.exit(2)
  }
  if (list) {
    process.stdout.write(files.join('\n') + '\n')
  } else {
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=1', ...nodeOptions, ...files], {
      cwd: ROOT,
      stdio: 'inherit',
    })
    for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal))
    child.on('close', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
  }
}
