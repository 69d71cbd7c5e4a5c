import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CONSOLE_BUILD_DIR, type ConsoleManifest } from '../../src/admin/console.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const SOURCE = join(ROOT, 'console', 'src')

const newest = (dir: string): number =>
  Math.max(
    ...readdirSync(dir, { withFileTypes: true }).map((e) =>
      e.isDirectory() ? newest(join(dir, e.name)) : statSync(join(dir, e.name)).mtimeMs,
    ),
  )

/**
 * The console's bundle in dist/console, built first when it is missing or older than its sources
 * (`npm test` builds it; `npm run test:fast` and a single file may not have): the app serves the
 * build, so a test of the page needs one. Returns the manifest the app read.
 */
export function ensureConsoleBuilt(): ConsoleManifest {
  const manifest = join(CONSOLE_BUILD_DIR, 'manifest.json')
  let built = 0
  try {
    built = statSync(manifest).mtimeMs
  } catch {}
  if (built < newest(SOURCE)) {
    const result = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build-console.mjs')], { encoding: 'utf8' })
    if (result.status !== 0) throw new Error(`building the console failed:\n${result.stderr}`)
  }
  return JSON.parse(readFileSync(manifest, 'utf8')) as ConsoleManifest
}
