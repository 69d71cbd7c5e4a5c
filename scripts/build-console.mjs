// Builds the operator console (console/src, served at /admin/console by src/admin/console.ts) into
// dist/console/: one minified script and one style sheet with content-hashed names under assets/,
// the notices of the bundled packages (their licenses ask that they travel with every copy), and
// manifest.json naming the two files, written last and atomically: a server reading it finds every
// file it names. Files of an earlier build are removed after, not before (a test may be serving them).
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
export const CONSOLE_SOURCE = join(ROOT, 'console', 'src')
export const CONSOLE_OUT = join(ROOT, 'dist', 'console')
const NOTICES = 'THIRD-PARTY-LICENSES.txt'

export async function buildConsole({ out = CONSOLE_OUT, quiet = false } = {}) {
  const assets = join(out, 'assets')
  const { metafile } = await build({
    absWorkingDir: ROOT,
    entryPoints: { console: join(CONSOLE_SOURCE, 'main.tsx') },
    outdir: assets,
    entryNames: '[name]-[hash]',
    bundle: true,
    format: 'esm',
    platform: 'browser',
    // Browsers of the last years (the console is for operators, not the public).
    target: ['chrome110', 'firefox115', 'safari16'],
    minify: true,
    sourcemap: false,
    legalComments: 'none',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    metafile: true,
    logLevel: 'warning',
  })
  const outputs = Object.keys(metafile.outputs).map((file) => basename(file))
  const script = outputs.find((f) => f.endsWith('.js'))
  const style = outputs.find((f) => f.endsWith('.css'))
  if (!script || !style) throw new Error(`the console build wrote ${outputs.join(', ')}: a script and a style sheet expected`)
  writeFileSync(join(assets, NOTICES), notices(metafile))

  const manifest = join(out, 'manifest.json')
  writeFileSync(`${manifest}.tmp`, `${JSON.stringify({ script, style })}\n`)
  renameSync(`${manifest}.tmp`, manifest)
  for (const file of readdirSync(assets)) {
    if (![script, style, NOTICES].includes(file)) rmSync(join(assets, file), { force: true })
  }
  const sizes = [script, style].map((f) => `${f} ${readFileSync(join(assets, f)).length} B`)
  if (!quiet) process.stdout.write(`console: ${sizes.join(', ')}\n`)
  return { script, style }
}

/** The license text of every package with a file in the bundle. */
function notices(metafile) {
  const packages = new Set()
  for (const input of Object.keys(metafile.inputs)) {
    const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input)
    if (match) packages.add(join(ROOT, match[1]))
  }
  const texts = [...packages].sort().map((dir) => {
    const { name, version, license } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
    const file = readdirSync(dir).find((f) => /^licen[cs]e(\.|$)/i.test(f))
    if (!file) throw new Error(`${name} is bundled but has no license file to carry`)
    return `${name} ${version} (${license})\n\n${readFileSync(join(dir, file), 'utf8').trim()}\n`
  })
  return `The operator console's script contains these packages:\n\n${texts.join('\n---\n\n')}`
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildConsole()
