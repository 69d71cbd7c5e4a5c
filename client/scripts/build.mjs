// Builds dist/index.js: one ESM file with the runtime dependencies (openapi-fetch, lossless-json)
// inlined, so that installing the packed package needs nothing from a registry. Their licenses
// ask that their notices travel with every copy: they go to dist/THIRD-PARTY-LICENSES.md.
// The declarations (dist/*.d.ts) come from tsc afterwards (`npm run build`).
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const PACKAGE = join(dirname(fileURLToPath(import.meta.url)), '..')
const DIST = join(PACKAGE, 'dist')

rmSync(DIST, { recursive: true, force: true })

const { metafile } = await build({
  absWorkingDir: PACKAGE,
  entryPoints: ['src/index.ts'],
  outfile: 'dist/index.js',
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  metafile: true,
  logLevel: 'warning',
})

/** The directory of each package that has a file in the bundle (…/node_modules/name or …/node_modules/@scope/name). */
const bundled = new Set()
for (const input of Object.keys(metafile.inputs)) {
  const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input)
  if (match) bundled.add(join(PACKAGE, match[1]))
}

const notices = [...bundled].sort().map((dir) => {
  const { name, version, license } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  const file = readdirSync(dir).find((f) => /^licen[cs]e(\.|$)/i.test(f))
  if (!file) throw new Error(`${name} is bundled but has no license file to carry`)
  return `## ${name} ${version} (${license})\n\n${readFileSync(join(dir, file), 'utf8').trim()}\n`
})
writeFileSync(
  join(DIST, 'THIRD-PARTY-LICENSES.md'),
  `# Third-party licenses\n\ndist/index.js contains these packages:\n\n${notices.join('\n')}`,
)
