// npm run build: the service (tsc into dist/), the files it reads at run time (copy-assets.mjs),
// TypeBox as one module (vendor-typebox.mjs), the console's bundle (build-console.mjs) and the
// client package (client/dist), then a stamp of the sources they were built from. `--if-changed`
// builds only when that stamp is not the sources' now: `npm test` and `npm run test:system` run
// it, so that after `npm install` (whose `prepare` has just built) the tests do not compile the
// same sources a second time, while a change since the last build still gets built. The stamp is
// a hash of the contents (not of modification times, which a checkout, a copy or a test touching
// a file moves); it is removed before a build and written after the last step, so a build that
// failed half-way is never taken for done.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const STAMP = join(ROOT, 'dist', '.build-sources')

/** What the build reads: a change to any of these makes the last build stale. */
const INPUTS = [
  'src',
  'console',
  'client/src',
  'client/scripts',
  'client/package.json',
  'client/tsconfig.json',
  'scripts/build.mjs',
  'scripts/build-console.mjs',
  'scripts/copy-assets.mjs',
  'scripts/vendor-typebox.mjs',
  'tsconfig.json',
  'package.json',
  'package-lock.json',
]
/** What the build writes that the stamp vouches for (deleted by hand, it is built again). */
const OUTPUTS = [
  'dist/server.js',
  'dist/cli.js',
  'dist/node_modules/typebox/index.js',
  'dist/console/manifest.json',
  'client/dist/index.js',
  'client/dist/index.d.ts',
]

/**
 * tsc's record of this compilation (its files and their diagnostics), for `npm run typecheck`: its
 * check of the same project after a build reads it and compiles nothing again. Removed before each
 * build, which compiles everything: an incremental emit does not write again a file deleted from
 * dist/ by hand.
 */
const TSC_RECORD = 'dist/tsconfig.tsbuildinfo'

const STEPS = [
  [
    process.execPath,
    [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json', '--incremental', '--tsBuildInfoFile', TSC_RECORD],
  ],
  [process.execPath, [join(ROOT, 'scripts', 'copy-assets.mjs')]],
  [process.execPath, [join(ROOT, 'scripts', 'vendor-typebox.mjs')]],
  [process.execPath, [join(ROOT, 'scripts', 'build-console.mjs')]],
  ['npm', ['run', 'build', '-w', '@animal-store/client']],
]

function filesUnder(path) {
  const full = join(ROOT, path)
  if (!existsSync(full)) return []
  if (!statSync(full).isDirectory()) return [path]
  return readdirSync(full, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && !(entry.parentPath ?? entry.path).split(sep).includes('node_modules'))
    .map((entry) =>
      relative(ROOT, join(entry.parentPath ?? entry.path, entry.name))
        .split(sep)
        .join('/'),
    )
}

/** A hash of every input's path and contents. */
export function sourcesHash() {
  const hash = createHash('sha256')
  for (const file of INPUTS.flatMap(filesUnder).sort()) {
    hash.update(`${file}\0`)
    hash.update(readFileSync(join(ROOT, file)))
    hash.update('\0')
  }
  return hash.digest('hex')
}

/** True when the last build was of the sources as they are now, and its outputs are still there. */
export function upToDate(hash = sourcesHash()) {
  let stamp = ''
  try {
    stamp = readFileSync(STAMP, 'utf8').trim()
  } catch {
    return false
  }
  return stamp === hash && OUTPUTS.every((file) => existsSync(join(ROOT, file)))
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const hash = sourcesHash()
  if (process.argv.includes('--if-changed') && upToDate(hash)) {
    process.stdout.write('build: dist/ and client/dist/ are up to date with their sources, not built again\n')
    process.exit(0)
  }
  rmSync(STAMP, { force: true })
  rmSync(join(ROOT, TSC_RECORD), { force: true })
  for (const [command, args] of STEPS) {
    const result = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit' })
    if (result.status !== 0) process.exit(result.status ?? 1)
  }
  // The hash of the sources as they were when the build began: an edit during the build leaves a
  // stamp that no longer matches, so the next --if-changed builds again.
  writeFileSync(STAMP, `${hash}\n`)
}
